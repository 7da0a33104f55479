"""A trial is bounded whatever its agent does: it yields at every tool call (so its timeout holds
for an agent that never awaits anything else), and its tool calls, output, tool results and
failure reason are capped by the run's ``TrialLimits``, each cap failing the trial with a
reason that names it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.engine.helpers import Ran, make_suite, run_suite
from wopeval.engine.agent import AgentContext
from wopeval.engine.gateway import TOOL_CALL_CAP, TOOL_RESULT_CAP
from wopeval.engine.registry import SCRIPTED_AGENT_ID, Registry
from wopeval.engine.run import RunSettings
from wopeval.events.store import EventStore
from wopeval.events.tables import dumps_json
from wopeval.wire.request import TrialLimits
from wopeval.wire.vocab import DECIDED, TOOL_CALLED, TOOL_RETURNED, TRIAL_FAILED, X_ERROR

DONE = {"strategy": "exact", "value": "done"}
PLAIN = {"taskId": "t", "input": {}, "expected": {"kind": "golden", "match": DONE}}
FIXTURED = {
    **PLAIN,
    "fixtures": {"onMiss": "fail", "toolResponses": [{"tool": "crm:lookup", "response": {}}]},
}


@pytest.fixture
async def sqlite_store(tmp_path: Path) -> AsyncIterator[EventStore]:
    opened = await EventStore.open(str(tmp_path / "store.db"))
    try:
        yield opened
    finally:
        await opened.close()


async def _run(
    store: EventStore,
    agent: Any,
    limits: TrialLimits,
    *,
    task: dict[str, Any] = PLAIN,
    tools: dict[str, Any] | None = None,
    timeout_s: float = 30.0,
    agent_id: str = "local.agent",
) -> Ran:
    registry = Registry()
    if agent is not None:
        registry.register_agent(agent_id, agent)
    for name, tool in (tools or {}).items():
        registry.register_tool(name, tool)
    settings = RunSettings(trial_timeout_s=timeout_s, limits=limits)
    return await run_suite(
        store, make_suite([task]), agent_id=agent_id, registry=registry, settings=settings
    )


def _reason(ran: Ran) -> str:
    (failed,) = ran.of_type(TRIAL_FAILED)
    return str(failed.payload["message"])


async def test_0244_B_an_agent_that_never_yields_is_cancelled_at_its_timeout(
    sqlite_store: EventStore,
) -> None:
    """Fixture-served calls return without awaiting anything that yields: only the gateway's
    checkpoint lets the timeout cancel the loop before it finishes."""
    finished: list[int] = []

    async def agent(task_input: Any, ctx: AgentContext) -> str:
        for index in range(100_000):
            await ctx.call_tool("crm:lookup", {"n": index})
        finished.append(1)
        return "done"

    limits = TrialLimits(maxToolCalls=1_000_000)
    ran = await _run(sqlite_store, agent, limits, task=FIXTURED, timeout_s=0.2)
    assert finished == []  # cancelled inside its loop, not timed out after it returned
    (completed,) = ran.of_type("agent.invocation-completed")
    assert completed.payload[X_ERROR] == "timeout"
    assert not ran.done.passed


async def test_0244_B_calls_past_the_cap_are_refused_and_never_reach_the_live_tool(
    sqlite_store: EventStore,
) -> None:
    live_calls: list[Any] = []
    answers: list[Any] = []

    async def lookup(args: Any) -> Any:
        live_calls.append(args)
        return {"ok": True}

    async def agent(task_input: Any, ctx: AgentContext) -> str:
        for index in range(5):
            answers.append(await ctx.call_tool("crm:lookup", {"n": index}))
        return "done"  # the right answer: only the cap fails the trial

    ran = await _run(sqlite_store, agent, TrialLimits(maxToolCalls=3), tools={"crm:lookup": lookup})
    assert [a.ok for a in answers] == [True, True, True, False, False]
    assert {a.error_code for a in answers[3:]} == {TOOL_CALL_CAP}
    assert live_calls == [{"n": 0}, {"n": 1}, {"n": 2}]
    assert len(ran.of_type(TOOL_CALLED)) == 3  # refused calls are not recorded
    assert not ran.done.passed
    assert "agent-error" in _reason(ran)
    assert "maxToolCalls = 3" in _reason(ran)


async def test_calls_within_the_cap_pass(sqlite_store: EventStore) -> None:
    async def agent(task_input: Any, ctx: AgentContext) -> str:
        for index in range(3):
            assert (await ctx.call_tool("crm:lookup", {"n": index})).ok
        return "done"

    async def lookup(args: Any) -> Any:
        return {}

    ran = await _run(sqlite_store, agent, TrialLimits(maxToolCalls=3), tools={"crm:lookup": lookup})
    assert ran.done.passed


async def test_a_20_mb_output_is_not_stored_and_fails_the_trial_naming_the_cap(
    sqlite_store: EventStore,
) -> None:
    async def agent(task_input: Any, ctx: AgentContext) -> str:
        return "x" * 20_000_000

    ran = await _run(sqlite_store, agent, TrialLimits())
    assert not ran.done.passed
    assert ran.of_type(DECIDED) == []
    assert max(len(dumps_json(event.payload)) for event in ran.events) < 20_000
    assert "maxOutputBytes = 1000000" in _reason(ran)
    assert "20000002 bytes" in _reason(ran)  # the string's JSON text, quotes included


@pytest.mark.parametrize(("length", "passed"), [(98, True), (99, False)])
async def test_an_output_at_the_cap_passes_and_one_byte_over_fails(
    sqlite_store: EventStore, length: int, passed: bool
) -> None:
    async def agent(task_input: Any, ctx: AgentContext) -> str:
        return "d" * length  # its JSON text: the quotes too

    match = {"strategy": "contains", "value": "d" * 98}
    task = {**PLAIN, "expected": {"kind": "golden", "match": match}}
    ran = await _run(sqlite_store, agent, TrialLimits(maxOutputBytes=100), task=task)
    assert ran.done.passed is passed
    if not passed:
        assert "101 bytes of JSON, over the trial limit maxOutputBytes = 100" in _reason(ran)


async def test_a_tool_result_over_the_cap_is_a_tool_error_and_fails_the_trial(
    sqlite_store: EventStore,
) -> None:
    answers: list[Any] = []

    async def lookup(args: Any) -> Any:
        return {"blob": "y" * 5000}

    async def agent(task_input: Any, ctx: AgentContext) -> str:
        answers.append(await ctx.call_tool("crm:lookup", {}))
        return "done"

    limits = TrialLimits(maxToolResultBytes=1000)
    ran = await _run(sqlite_store, agent, limits, tools={"crm:lookup": lookup})
    assert answers[0].ok is False
    assert answers[0].error_code == TOOL_RESULT_CAP
    (returned,) = ran.of_type(TOOL_RETURNED)
    assert "y" * 1000 not in dumps_json(returned.payload)
    assert not ran.done.passed
    assert "maxToolResultBytes = 1000" in _reason(ran)


async def test_a_long_reason_is_clipped_to_the_cap(sqlite_store: EventStore) -> None:
    async def agent(task_input: Any, ctx: AgentContext) -> str:
        return "z" * 50_000  # a wrong answer, quoted by its reason

    ran = await _run(sqlite_store, agent, TrialLimits(maxReasonChars=1000))
    (failed,) = ran.of_type(TRIAL_FAILED)
    assert failed.payload["taskId"] == "t"
    assert failed.payload["kind"] == "output-mismatch"
    assert len(dumps_json(failed.payload)) <= 1000


async def test_a_delegates_output_over_the_cap_is_not_stored_and_fails_the_trial(
    sqlite_store: EventStore,
) -> None:
    helper = f"{SCRIPTED_AGENT_ID}.helper"
    script = {"calls": [{"delegate": {"agentId": helper, "input": {"output": "h" * 5000}}}],
              "output": "done"}  # fmt: skip
    ran = await _run(sqlite_store, None, TrialLimits(maxOutputBytes=1000),
                     task={**PLAIN, "input": script}, agent_id=SCRIPTED_AGENT_ID)  # fmt: skip
    decided = {event.payload["agentId"]: event.payload.get("decision") for event in
               ran.of_type(DECIDED)}  # fmt: skip
    assert decided == {helper: None, SCRIPTED_AGENT_ID: "done"}
    assert not ran.done.passed
    assert f"{helper}'s output is 5002 bytes" in _reason(ran)
