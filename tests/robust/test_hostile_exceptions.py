"""An exception whose ``str()`` raises fails only its own trial, wherever it is raised."""

from __future__ import annotations

from typing import Any, Final

from tests.engine.helpers import make_suite, run_suite, scripted_task
from tests.engine.test_failure_reasons import GOLDEN, RUBRIC, reasons, registry_with
from wopeval.engine.agent import AgentContext
from wopeval.engine.sink import EventSink
from wopeval.events.store import EventStore
from wopeval.suite.models import Task
from wopeval.wire.events import ToolReturned
from wopeval.wire.vocab import TOOL_RETURNED


class Unprintable(Exception):
    """Its message cannot be made: ``str()`` and ``repr()`` raise."""

    def __str__(self) -> str:
        raise RuntimeError("no text for you")

    def __repr__(self) -> str:
        raise RuntimeError("no repr either")


def _two_tasks(first: dict[str, Any]) -> list[dict[str, Any]]:
    return [first, scripted_task("ok", {"output": "done"}, GOLDEN)]


async def test_0244_B_an_agent_exception_without_text_fails_only_its_trial(
    store: EventStore,
) -> None:
    async def agent(task_input: Any, ctx: AgentContext) -> Any:
        if task_input.get("hostile"):
            raise Unprintable
        return "done"

    suite = make_suite(
        [
            {"taskId": "bad", "input": {"hostile": True}, "expected": GOLDEN},
            {"taskId": "ok", "input": {}, "expected": GOLDEN},
        ]
    )
    ran = await run_suite(store, suite, agent_id="a", registry=registry_with(a=agent))
    summary = ran.done
    by_task = {t.taskId: t for t in summary.tasks}
    assert by_task["bad"].passed is False
    assert by_task["ok"].passed is True
    reason = reasons(ran)["bad"]
    assert reason.kind == "agent-error"
    assert "Unprintable" in reason.message
    assert reason.details["exceptionType"] == "Unprintable"


async def test_0244_B_a_live_tool_exception_without_text_is_a_tool_error(
    store: EventStore,
) -> None:
    async def tool(args: Any) -> Any:
        raise Unprintable

    registry = registry_with()
    registry.register_tool("crm:lookup", tool)
    fixtures = {"onMiss": "live", "toolResponses": []}
    task = scripted_task(
        "bad", {"calls": [{"tool": "crm:lookup"}], "output": "done"}, GOLDEN, fixtures
    )
    suite = make_suite(_two_tasks(task))
    ran = await run_suite(store, suite, registry=registry)
    assert len(ran.done.tasks) == 2
    returned = [ToolReturned.model_validate(e.payload) for e in ran.of_type(TOOL_RETURNED)]
    assert returned
    assert returned[0].error is not None
    assert "Unprintable" in (returned[0].error.message or "")


class UnprintableJudge:
    evaluator_type: Final = "llm_judge"

    async def score(self, task: Task, output: Any, sink: EventSink, run_id: str) -> float:
        raise Unprintable


async def test_0244_E_a_judge_exception_without_text_fails_only_its_trial(
    store: EventStore,
) -> None:
    suite = make_suite(
        [
            scripted_task("bad", {"output": "hello"}, RUBRIC),
            scripted_task("ok", {"output": "done"}, GOLDEN),
        ],
        modes=["rubric", "golden"],
    )
    ran = await run_suite(store, suite, judge=UnprintableJudge())
    assert len(ran.done.tasks) == 2
    reason = reasons(ran)["bad"]
    assert reason.kind == "judge-error"
    assert "Unprintable" in reason.message


async def test_0244_B_a_lone_surrogate_in_an_exception_fails_only_its_trial(
    store: EventStore,
) -> None:
    async def agent(task_input: Any, ctx: AgentContext) -> Any:
        if task_input.get("hostile"):
            raise ValueError("bad \ud800 text")
        return "done"

    suite = make_suite(
        [
            {"taskId": "bad", "input": {"hostile": True}, "expected": GOLDEN},
            {"taskId": "ok", "input": {}, "expected": GOLDEN},
        ]
    )
    ran = await run_suite(store, suite, agent_id="a", registry=registry_with(a=agent))
    assert [t.passed for t in ran.done.tasks] == [False, True]
    reason = reasons(ran)["bad"]
    assert reason.kind == "agent-error"
    assert "bad \\ud800 text" in reason.message


async def test_0244_B_an_output_with_a_lone_surrogate_is_not_json_and_fails_only_its_trial(
    store: EventStore,
) -> None:
    outputs: dict[str, Any] = {"text": "\ud800", "key": {"a\udfff": 1}, "deep": [{"x": "\ud800"}]}

    async def agent(task_input: Any, ctx: AgentContext) -> Any:
        return outputs.get(task_input.get("kind"), "done")

    tasks = [{"taskId": kind, "input": {"kind": kind}, "expected": GOLDEN} for kind in outputs]
    suite = make_suite([*tasks, {"taskId": "ok", "input": {}, "expected": GOLDEN}])
    ran = await run_suite(store, suite, agent_id="a", registry=registry_with(a=agent))
    assert {t.taskId: t.passed for t in ran.done.tasks} == {
        "text": False,
        "key": False,
        "deep": False,
        "ok": True,
    }
    assert {kind: reasons(ran)[kind].kind for kind in outputs} == dict.fromkeys(
        outputs, "output-not-json"
    )


async def test_0244_B_a_plain_agent_raising_an_exception_without_text_fails_only_its_trial(
    store: EventStore,
) -> None:
    def agent(task_input: Any, ctx: Any) -> Any:  # runs in a worker thread
        if task_input.get("hostile"):
            raise Unprintable
        return "done"

    suite = make_suite(
        [
            {"taskId": "bad", "input": {"hostile": True}, "expected": GOLDEN},
            {"taskId": "ok", "input": {}, "expected": GOLDEN},
        ]
    )
    ran = await run_suite(store, suite, agent_id="a", registry=registry_with(a=agent))
    assert [t.passed for t in ran.done.tasks] == [False, True]
    assert reasons(ran)["bad"].details["exceptionType"] == "Unprintable"
