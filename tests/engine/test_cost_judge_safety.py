"""Cost ceilings (§B), efficiency (§C), judges, content-free output (§H), failure handling."""

from __future__ import annotations

import json
from typing import Any, Literal

import anyio
import pytest

from tests.engine.helpers import make_suite, run_suite, scripted_task
from wopeval.engine.agent import AgentContext, Usage
from wopeval.engine.judge import JudgeRequired, record_judge_usage
from wopeval.engine.registry import Registry
from wopeval.engine.run import RunHandle, RunSettings
from wopeval.engine.trial import EventSink
from wopeval.events.store import EventStore
from wopeval.events.writes import Staged
from wopeval.service.runs import create_run_record, execute, regrade
from wopeval.suite.models import Task
from wopeval.wire.events import (
    EVAL_COMPLETED,
    EVAL_SCORED,
    EVAL_STARTED,
    INVOCATION_COMPLETED,
    INVOCATION_STARTED,
    RUN_CANCELLED,
)

OK = {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}}


def _usage(cost: float) -> list[dict[str, Any]]:
    return [
        {
            "provider": "mock",
            "model": "m",
            "inputTokens": 10,
            "outputTokens": 4,
            "costEstimateUsd": cost,
        }
    ]


async def test_0244_B_cost_ceiling_counts_every_trial_and_stops_new_ones(
    store: EventStore,
) -> None:
    suite = make_suite(
        [scripted_task("costly", {"usage": _usage(0.01), "output": "ok"}, OK)],
        trials={"count": 6},
        thresholds={"maxCostUsd": 0.025},
    )
    ran = await run_suite(store, suite, settings=RunSettings(concurrency=1))
    labels = [e.payload["scoreLabel"] for e in ran.of_type(EVAL_SCORED)]
    assert labels.count("pass") == 3  # 0.01 × 3 = 0.03 > 0.025: the fourth never starts
    assert labels.count("skipped-budget") == 3
    assert ran.done.totalCostUsd == pytest.approx(0.03)
    assert ran.done.passed is False


async def test_0244_B_host_ceiling_fails_the_suite_even_when_scores_pass(
    store: EventStore,
) -> None:
    suite = make_suite(
        [scripted_task("costly", {"usage": _usage(0.02), "output": "ok"}, OK)], trials={"count": 2}
    )
    ran = await run_suite(store, suite, settings=RunSettings(concurrency=2, host_max_cost_usd=0.03))
    assert ran.done.aggregateScore == 1.0
    assert ran.done.passed is False


class CountingJudge:
    evaluator_type: Literal["llm_judge"] = "llm_judge"

    def __init__(self, score: float) -> None:
        self.value = score
        self.calls = 0

    async def score(self, task: Task, output: Any, sink: EventSink, run_id: str) -> float:
        self.calls += 1
        await record_judge_usage(sink, run_id, Usage("judge", "j", 1000, 100, cost_usd=0.5))
        return self.value


RUBRIC = {"kind": "rubric", "rubric": [{"criterion": "is polite", "weight": 1.0}]}


async def test_0244_C_efficiency_is_counted_in_brackets_and_excludes_the_judge(
    store: EventStore,
) -> None:
    script = {
        "usage": _usage(0.001) * 2,
        "calls": [{"tool": "kb:search", "args": {}}],
        "output": "ok",
    }
    suite = make_suite(
        [scripted_task("rub", script, RUBRIC)],
        modes=["rubric"],
        trials={"count": 2},
        thresholds={"passScore": 0.5},
    )
    judge = CountingJudge(0.75)
    ran = await run_suite(store, suite, judge=judge)
    task = ran.done.tasks[0]
    assert judge.calls == 2
    assert task.efficiency is not None
    assert task.efficiency.model_dump() == {
        "toolCallCount": 1.0,
        "modelCallCount": 2.0,
        "inputTokens": 20.0,
        "outputTokens": 8.0,
    }
    assert task.score == 0.75
    assert {e.payload["evaluatorType"] for e in ran.of_type(EVAL_SCORED)} == {"llm_judge"}
    assert ran.done.totalCostUsd == pytest.approx(2 * 0.002 + 2 * 0.5)  # judges cost money
    assert task.costUsd == pytest.approx(0.004)


async def test_0244_C_efficiency_never_gates(store: EventStore) -> None:
    many = [{"tool": "kb:search", "args": {"q": i}} for i in range(200)]
    suite = make_suite([scripted_task("busy", {"calls": many, "output": "ok"}, OK)])
    ran = await run_suite(store, suite)
    assert ran.done.tasks[0].efficiency is not None
    assert ran.done.tasks[0].efficiency.toolCallCount == 200
    assert ran.done.passed is True


async def test_rubric_suite_without_a_judge_is_refused_before_anything_is_recorded(
    store: EventStore,
) -> None:
    suite = make_suite([scripted_task("rub", {"output": "ok"}, RUBRIC)], modes=["rubric"])
    with pytest.raises(JudgeRequired, match=r"tasks\[0\]\.expected\.kind"):
        await run_suite(store, suite)


async def test_0244_H_summary_and_eval_events_are_content_free(store: EventStore) -> None:
    marker = "MARKER-7f3a"
    script = {
        "calls": [{"tool": "crm:lookup", "args": {"q": f"{marker}-args"}}],
        "output": f"{marker}-output",
        "usage": _usage(0.0),
    }
    expected = {
        "kind": "golden",
        "match": {"strategy": "contains", "value": marker},
        "trajectory": {
            "match": "exact",
            "calls": [
                {"tool": "crm:lookup", "args": {"q": f"{marker}-args"}, "argsMatch": "exact"}
            ],
            "forbidden": [f"{marker}-tool"],
        },
    }
    fixtures = {
        "onMiss": "fail",
        "toolResponses": [{"tool": "crm:lookup", "response": {"text": f"{marker}-fixture"}}],
        "memorySeed": [{"key": "k", "value": f"{marker}-memory"}],
    }
    suite = make_suite(
        [scripted_task("leak", {**script, "note": f"{marker}-input"}, expected, fixtures)],
        trials={"count": 2},
    )
    ran = await run_suite(store, suite)
    assert ran.done.passed is True
    assert marker not in ran.done.to_json()
    for event in ran.events:
        if event.type.startswith("eval."):
            assert marker not in json.dumps(event.payload), event.type
    assert any(marker in json.dumps(e.payload) for e in ran.events)  # the markers did flow


async def test_agent_errors_timeouts_and_bad_output_fail_the_trial_not_the_run(
    store: EventStore,
) -> None:
    async def crash(task_input: Any, ctx: AgentContext) -> Any:
        raise RuntimeError("boom")

    async def hang(task_input: Any, ctx: AgentContext) -> Any:
        await anyio.sleep(10)

    async def not_json(task_input: Any, ctx: AgentContext) -> Any:
        return object()

    registry = Registry()
    for name, fn in (("crash", crash), ("hang", hang), ("not-json", not_json)):
        registry.register_agent(name, fn)
    for name, label in (
        ("crash", "agent-error"),
        ("hang", "timeout"),
        ("not-json", "output-not-json"),
    ):
        suite = make_suite([scripted_task("t", {}, OK)])
        ran = await run_suite(
            store,
            suite,
            agent_id=name,
            registry=registry,
            settings=RunSettings(trial_timeout_s=0.2),
        )
        (scored,) = ran.of_type(EVAL_SCORED)
        assert (scored.payload["scoreLabel"], scored.payload["score"]) == (label, 0.0)
        assert ran.done.passed is False
        completed = ran.of_type(INVOCATION_COMPLETED)[0].payload
        assert completed["outcome"] == "failed"


async def test_cancellation_leaves_every_bracket_closed(store: EventStore) -> None:
    running: list[str] = []
    all_running = anyio.Event()

    async def slow(task_input: Any, ctx: AgentContext) -> Any:
        running.append(ctx.task_id)
        if len(running) == 3:
            all_running.set()
        await anyio.sleep(5)

    registry = Registry()
    registry.register_agent("slow", slow)
    suite = make_suite([scripted_task(f"t{i}", {}, OK) for i in range(3)])
    record = await create_run_record(store, suite, "slow", RunSettings())
    handle = RunHandle(record.run_id)
    async with anyio.create_task_group() as group:

        async def go() -> None:
            assert await execute(store, handle, suite, "slow", registry, RunSettings()) is None

        group.start_soon(go)
        with anyio.fail_after(30):
            await all_running.wait()  # cancel once all three trials are executing
        handle.cancel()
    events = await store.events(record.run_id)
    types = [e.type for e in events]
    assert types[-1] == RUN_CANCELLED
    assert types.count(INVOCATION_STARTED) == types.count(INVOCATION_COMPLETED) == 3
    assert [e.sequence for e in events] == list(range(len(events)))
    stored = await store.get_run(record.run_id)
    assert stored is not None
    assert stored.status == "cancelled"


async def test_grade_reproduces_the_stored_summary_byte_for_byte(store: EventStore) -> None:
    suite = make_suite(
        [
            scripted_task("a", {"output": "ok", "trials": {"1": {"output": "no"}}}, OK),
            scripted_task("b", {"output": "ok"}, OK),
        ],
        trials={"count": 3, "k": 2, "passRule": "mean"},
        thresholds={"passScore": 0.5},
    )
    ran = await run_suite(store, suite)
    regraded = await regrade(store, ran.run_id)
    assert regraded.reproduces_stored
    completed = next(e for e in ran.events if e.type == "run.completed")
    assert json.dumps(completed.payload["outputs"]) == json.dumps(
        json.loads(regraded.summary.to_json())
    )
    assert ran.done.trialStats is not None
    assert ran.done.trialStats.scoreStderr is not None
    assert ran.of_type(EVAL_COMPLETED)[0].payload["passedCount"] == ran.done.passedCount
    assert ran.of_type(EVAL_STARTED)[0].payload["modes"] == ["golden"]


async def test_0244_A_delegate_calls_count_only_with_include_delegates(store: EventStore) -> None:
    delegate = {
        "delegate": {
            "agentId": "core.conformance.agents.scripted.helper",
            "input": {"calls": [{"tool": "kb:search", "args": {}}]},
        }
    }
    script = {"calls": [{"tool": "crm:lookup", "args": {}}, delegate]}

    def expected(include: bool) -> dict[str, Any]:
        return {
            "kind": "trajectory",
            "trajectory": {
                "match": "exact",
                "includeDelegates": include,
                "calls": [{"tool": "crm:lookup"}, {"tool": "kb:search"}],
            },
        }

    suite = make_suite(
        [
            scripted_task("own", script, expected(False)),
            scripted_task("all", script, expected(True)),
        ]
    )
    ran = await run_suite(store, suite)
    own, everything = ran.done.tasks
    assert own.trajectory is not None
    assert everything.trajectory is not None
    assert (own.trajectory.observedCount, own.trajectory.matched) == (1, False)
    assert (everything.trajectory.observedCount, everything.trajectory.matched) == (2, True)


async def test_0244_B_judge_spend_counts_against_the_ceiling(store: EventStore) -> None:
    suite = make_suite(
        [scripted_task("rub", {"output": "ok"}, RUBRIC)],
        modes=["rubric"],
        trials={"count": 4},
        thresholds={"maxCostUsd": 0.9, "passScore": 0.5},
    )
    judge = CountingJudge(0.75)  # each judgement costs 0.5
    ran = await run_suite(store, suite, judge=judge, settings=RunSettings(concurrency=1))
    labels = [e.payload["scoreLabel"] for e in ran.of_type(EVAL_SCORED)]
    assert labels.count("skipped-budget") == 2  # 0.5 + 0.5 > 0.9 after two trials
    assert judge.calls == 2
    assert ran.done.passed is False


class CancellingStore(EventStore):
    """Cancels the run while its terminal events are being written."""

    handle: RunHandle | None = None

    async def append(self, run_id: str, type: str, payload: Any, **kw: Any) -> Any:
        if type == EVAL_COMPLETED and self.handle is not None:
            self.handle.cancel()
        return await super().append(run_id, type, payload, **kw)


async def test_a_cancel_while_finishing_leaves_exactly_one_terminal_event(
    store_url: str,
) -> None:
    opened = await CancellingStore.open(store_url)
    try:
        suite = make_suite([scripted_task("t", {"output": "ok"}, OK)])
        record = await create_run_record(
            opened, suite, "core.conformance.agents.scripted", RunSettings()
        )
        assert isinstance(opened, CancellingStore)
        opened.handle = RunHandle(record.run_id)
        summary = await execute(
            opened,
            opened.handle,
            suite,
            "core.conformance.agents.scripted",
            Registry(),
            RunSettings(),
        )
        types = [e.type for e in await opened.events(record.run_id)]
        stored = await opened.get_run(record.run_id)
    finally:
        await opened.close()
    assert summary is not None
    assert types[-1] == "run.completed"
    assert RUN_CANCELLED not in types
    assert stored is not None
    assert stored.status == "completed"


class FailingStore(EventStore):
    """The store fails while trials run: an infrastructure failure, not a trial's."""

    async def append(self, run_id: str, type: str, payload: Any, **kw: Any) -> Any:
        if type == EVAL_SCORED:
            raise RuntimeError("disk on fire")
        return await super().append(run_id, type, payload, **kw)

    def emit_later(self, run_id: str, payload: Any, **kw: Any) -> Any:  # how a trial scores
        if payload.event_type == EVAL_SCORED:
            raise RuntimeError("disk on fire")
        return super().emit_later(run_id, payload, **kw)


async def test_an_infrastructure_failure_fails_the_run_with_its_own_message(
    store_url: str,
) -> None:
    opened = await FailingStore.open(store_url)
    try:
        suite = make_suite([scripted_task("t", {"output": "ok"}, OK)])
        record = await create_run_record(opened, suite, "core.conformance.agents.scripted",
                                         RunSettings())  # fmt: skip
        agent = "core.conformance.agents.scripted"
        with pytest.raises(BaseExceptionGroup) as raised:
            await execute(opened, RunHandle(record.run_id), suite, agent, Registry(), RunSettings())
        assert "disk on fire" in repr(raised.value.exceptions)
        types = [e.type for e in await opened.events(record.run_id)]
        stored = await opened.get_run(record.run_id)
    finally:
        await opened.close()
    assert types[-1] == "run.failed"
    assert stored is not None
    assert stored.status == "failed"
    assert stored.error is not None
    assert stored.error["message"] == "RuntimeError: disk on fire"


class FailingCommits(EventStore):
    """The database refuses the commit of a batch holding an event of type ``refused``."""

    refused = EVAL_SCORED

    async def _insert(self, staged: Staged, **kw: Any) -> None:
        if any(row[3] == self.refused for row in staged.rows):
            raise RuntimeError("disk on fire")
        await super()._insert(staged, **kw)


@pytest.mark.parametrize("refused", [EVAL_SCORED, "agent.decided"])
async def test_a_failed_commit_of_a_queued_score_fails_the_run(
    store_url: str, refused: str
) -> None:
    # A trial's score is queued and its worker goes on; the failed commit still surfaces
    # (the run settles every trial's last events) and the run fails with the store's error.
    # A score is chained after its trial's events: one that was not written keeps it out.
    opened = await FailingCommits.open(store_url)
    assert isinstance(opened, FailingCommits)
    opened.refused = refused
    try:
        suite = make_suite([scripted_task("t", {"output": "ok"}, OK)], trials={"count": 3})
        agent = "core.conformance.agents.scripted"
        record = await create_run_record(opened, suite, agent, RunSettings())
        with pytest.raises(BaseException, match="could not append") as raised:
            await execute(opened, RunHandle(record.run_id), suite, agent, Registry(), RunSettings())
        assert "disk on fire" in repr(raised.value) or "disk on fire" in str(raised.value)
        stored = await opened.get_run(record.run_id)
        scored = [e for e in await opened.events(record.run_id) if e.type == EVAL_SCORED]
    finally:
        await opened.close()
    assert scored == []
    assert stored is not None
    assert stored.status == "failed"
    assert stored.error is not None
    assert "disk on fire" in stored.error["message"]
