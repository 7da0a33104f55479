"""Issue 33 §3 through the engine: a world served by the trial's gateway (RFC 0244 §D), one
copy a trial (§B), its final state in the log (content, never in ``eval.*`` or the summary,
§H), graded by ``x-wopeval-finalState``, and ``wopeval grade``'s summary byte for byte."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.engine.helpers import Ran, make_suite, run_suite
from wopeval.engine.agent import AgentContext
from wopeval.engine.registry import Registry
from wopeval.engine.run import RunSettings
from wopeval.engine.world import WORLD_ERROR
from wopeval.events.store import EventStore
from wopeval.grading.summary import GradingOptions, build_summary
from wopeval.wire.events import (
    EVAL_SCORED,
    INVOCATION_COMPLETED,
    TOOL_RETURNED,
    TRIAL_FAILED,
    WORLD_STATE,
)

AGENT = "world.agent"
ERROR = {"code": "not_found", "message": "no such booking"}
BOOKINGS = {"bookings": {"ABC": {"status": "confirmed", "refunds": 0}}}
WORLD = {
    "initial": BOOKINGS,
    "tools": {
        "get_booking": [
            {
                "require": [{"pointer": "/bookings/{/ref}", "exists": True, "error": ERROR}],
                "read": "/bookings/{/ref}",
            }
        ],
        "cancel": [
            {
                "require": [
                    {"pointer": "/bookings/{/ref}", "exists": True, "error": ERROR},
                    {
                        "pointer": "/bookings/{/ref}/status",
                        "equals": "confirmed",
                        "error": {"code": "not_cancellable", "message": "already cancelled"},
                    },
                ],
                "effects": [
                    {"op": "set", "pointer": "/bookings/{/ref}/status", "value": "cancelled"},
                    {"op": "increment", "pointer": "/bookings/{/ref}/refunds"},
                ],
                "result": {"cancelled": {"$arg": "/ref"}},
            }
        ],
    },
}
CANCELLED = {
    "kind": "trajectory",
    "x-wopeval-finalState": {
        "match": "subset",
        "state": {"bookings": {"ABC": {"status": "cancelled", "refunds": 1}}},
    },
}


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[EventStore]:
    opened = await EventStore.open(str(tmp_path / "store.db"))
    try:
        yield opened
    finally:
        await opened.close()


def world_task(task_id: str = "cancel", expected: Any = None, world: Any = None,
               **more: Any) -> dict[str, Any]:  # fmt: skip
    return {"taskId": task_id, "input": {"ref": "ABC"}, "expected": expected or CANCELLED,
            "x-wopeval-world": world or WORLD, **more}  # fmt: skip


async def run_agent(
    store: EventStore, agent: Any, tasks: list[dict[str, Any]], **suite: Any
) -> Ran:
    registry = Registry()
    registry.register_agent(AGENT, agent)
    settings = suite.pop("settings", None)
    return await run_suite(store, make_suite(tasks, **suite), agent_id=AGENT, registry=registry,
                           settings=settings)  # fmt: skip


def regraded(ran: Ran, tasks: list[dict[str, Any]], **suite: Any) -> str:
    options = GradingOptions(target_agent_id=AGENT)
    return build_summary(make_suite(tasks, **suite), ran.events, options).to_json()


async def cancel_once(task_input: Any, ctx: AgentContext) -> Any:
    booking = await ctx.call_tool("get_booking", {"ref": task_input["ref"]})
    done = await ctx.call_tool("cancel", {"ref": task_input["ref"]})
    return {"before": booking.value, "done": done.value}


async def test_33_3_plain_one_task_one_trial_a_world_with_one_read_rule(
    store: EventStore,
) -> None:
    async def reader(task_input: Any, ctx: AgentContext) -> Any:
        return (await ctx.call_tool("get", None)).value

    world = {"initial": {"n": 7}, "tools": {"get": [{"read": "/n"}]}}
    tasks = [{"taskId": "read", "input": "go",
              "expected": {"kind": "golden", "match": {"strategy": "exact", "value": 7}},
              "x-wopeval-world": world}]  # fmt: skip
    ran = await run_agent(store, reader, tasks)
    (task,) = ran.done.tasks
    assert (task.passed, task.score, task.fixtureMissCount, task.final_state) == (
        True,
        1.0,
        0,
        None,
    )
    (returned,) = ran.of_type(TOOL_RETURNED)
    assert returned.payload["x-wopeval-fixture"] == "served"
    assert returned.payload["x-wopeval-worldRule"] == 0
    assert returned.payload["outcome"] == 7
    (state,) = ran.of_type(WORLD_STATE)
    assert state.payload == {"state": {"n": 7}}
    assert regraded(ran, tasks) == ran.done.to_json()


async def test_33_3_the_final_state_is_recorded_inside_the_bracket_and_graded(
    store: EventStore,
) -> None:
    ran = await run_agent(store, cancel_once, [world_task()])
    (task,) = ran.done.tasks
    assert task.passed
    assert task.final_state is not None
    wired: Any = ran.done.to_wire()["tasks"]
    wire = wired[0]
    assert wire["x-wopeval-finalState"] == {"matched": True, "mismatchCount": 0}
    types = [e.type for e in ran.events]
    assert types.index(WORLD_STATE) < types.index(INVOCATION_COMPLETED) < types.index(EVAL_SCORED)
    (state,) = ran.of_type(WORLD_STATE)
    assert state.payload["state"]["bookings"]["ABC"] == {"status": "cancelled", "refunds": 1}
    assert state.causationId is not None  # attributed to its trial
    returned = [e.payload for e in ran.of_type(TOOL_RETURNED)]
    assert returned[0]["outcome"] == {"status": "confirmed", "refunds": 0}
    assert returned[1]["outcome"] == {"cancelled": "ABC"}


async def test_33_3_a_wrong_final_state_fails_naming_the_first_differing_pointer(
    store: EventStore,
) -> None:
    async def looks_only(task_input: Any, ctx: AgentContext) -> Any:
        await ctx.call_tool("get_booking", {"ref": "ABC"})
        return "done"

    tasks = [world_task()]
    ran = await run_agent(store, looks_only, tasks, trials={"count": 3})
    (task,) = ran.done.tasks
    assert task.passed is False
    wired: Any = ran.done.to_wire()["tasks"]
    assert wired[0]["x-wopeval-finalState"] == {
        "matched": False,
        "mismatchCount": 3,
    }
    reasons = [e.payload for e in ran.of_type(TRIAL_FAILED)]
    assert len(reasons) == 3
    assert reasons[0]["kind"] == "final-state"
    assert reasons[0]["message"] == (
        'final state (subset) differs at /bookings/ABC/status: expected "cancelled", '
        'got "confirmed" (and 1 more)'
    )
    assert reasons[0]["details"]["differences"][1] == {
        "pointer": "/bookings/ABC/refunds", "expected": 1, "observed": 0}  # fmt: skip
    assert {e.payload["scoreLabel"] for e in ran.of_type(EVAL_SCORED)} == {"state-mismatch"}
    assert regraded(ran, tasks, trials={"count": 3}) == ran.done.to_json()


async def test_33_3_a_failed_precondition_is_the_declared_tool_error_recorded(
    store: EventStore,
) -> None:
    seen: list[Any] = []

    async def twice(task_input: Any, ctx: AgentContext) -> Any:
        for ref in ("ABC", "ABC", "NOPE"):
            result = await ctx.call_tool("cancel", {"ref": ref})
            seen.append((result.ok, result.error_code, result.error_message))
        return "done"

    ran = await run_agent(store, twice, [world_task()])
    assert seen == [(True, None, None), (False, "not_cancellable", "already cancelled"),
                    (False, "not_found", "no such booking")]  # fmt: skip
    errors = [e.payload for e in ran.of_type(TOOL_RETURNED)][1:]
    assert [(p["status"], p["error"]["code"], p["x-wopeval-fixture"]) for p in errors] == [
        ("error", "not_cancellable", "served"), ("error", "not_found", "served")]  # fmt: skip
    assert ran.done.tasks[0].passed  # refused calls changed nothing: refunded once


async def test_33_3_an_operation_failing_at_run_time_is_a_tool_error_never_a_crash(
    store: EventStore,
) -> None:
    world = {"initial": {"n": "x"}, "tools": {"bump": [{"effects": [
        {"op": "increment", "pointer": "/n"}]}]}}  # fmt: skip
    answers: list[Any] = []

    async def bump(task_input: Any, ctx: AgentContext) -> Any:
        result = await ctx.call_tool("bump", {})
        answers.append((result.ok, result.error_code, result.error_message))
        return "done"

    expected = {
        "kind": "trajectory",
        "x-wopeval-finalState": {"match": "exact", "state": {"n": "x"}},
    }
    ran = await run_agent(store, bump, [world_task(expected=expected, world=world)])
    assert answers == [(False, WORLD_ERROR, "increment: /n is not a number")]
    (returned,) = ran.of_type(TOOL_RETURNED)
    assert returned.payload["error"]["code"] == WORLD_ERROR
    assert ran.done.tasks[0].passed  # the state is unchanged, as asserted


@pytest.mark.parametrize("on_miss", [None, "fail"])
async def test_0244_D_33_3_a_call_the_world_does_not_define_fails_closed(
    store: EventStore, on_miss: str | None
) -> None:
    live_calls: list[Any] = []

    async def live(args: Any) -> Any:
        live_calls.append(args)
        return "live"

    async def strays(task_input: Any, ctx: AgentContext) -> Any:
        result = await ctx.call_tool("refund", {"ref": "ABC", "amount": 5})
        return result.error_code

    registry = Registry()
    registry.register_agent(AGENT, strays)
    registry.register_tool("refund", live)
    fixtures = {"onMiss": on_miss} if on_miss else None
    more: Any = {"fixtures": fixtures} if fixtures else {}
    task = world_task(**more)
    ran = await run_suite(store, make_suite([task]), agent_id=AGENT, registry=registry)
    assert live_calls == []  # never looked up, let alone called
    (returned,) = ran.of_type(TOOL_RETURNED)
    assert returned.payload["x-wopeval-fixture"] == "miss-failed"
    assert returned.payload["error"]["code"] == "wopeval.fixture_miss"
    (task_summary,) = ran.done.tasks
    assert (task_summary.passed, task_summary.score, task_summary.fixtureMissCount) == (
        False,
        0.0,
        1,
    )
    (reason,) = ran.of_type(TRIAL_FAILED)
    assert reason.payload["kind"] == "fixture-miss"
    assert "the world defines no tool refund" in reason.payload["message"]


async def test_0244_D_33_3_a_call_no_rule_of_its_tool_matches_names_its_arguments(
    store: EventStore,
) -> None:
    world = {"tools": {"cancel": [{"when": {"args": {"ref": "ABC"}, "argsMatch": "exact"}}]}}

    async def other(task_input: Any, ctx: AgentContext) -> Any:
        return (await ctx.call_tool("cancel", {"ref": "XYZ"})).ok

    expected = {"kind": "golden", "match": {"strategy": "exact", "value": False}}
    ran = await run_agent(store, other, [world_task(expected=expected, world=world)])
    (reason,) = ran.of_type(TRIAL_FAILED)
    assert reason.payload["message"] == (
        "fixture miss (onMiss: fail): no world rule of cancel matched its arguments "
        '{"ref": "XYZ"} (fail closed)'
    )


async def test_0244_D_33_3_fixtures_come_first_then_the_world(store: EventStore) -> None:
    async def agent(task_input: Any, ctx: AgentContext) -> Any:
        first = await ctx.call_tool("get_booking", {"ref": "ABC"})
        second = await ctx.call_tool("get_booking", {"ref": "ABC"})
        return [first.value, second.value]

    fixtures = {"toolResponses": [{"tool": "get_booking", "response": "canned"}]}
    expected = {"kind": "golden", "match": {"strategy": "exact",
                "value": ["canned", {"status": "confirmed", "refunds": 0}]}}  # fmt: skip
    ran = await run_agent(store, agent, [world_task(expected=expected, fixtures=fixtures)])
    assert ran.done.tasks[0].passed
    served = [e.payload for e in ran.of_type(TOOL_RETURNED)]
    assert [p.get("x-wopeval-fixtureIndex") for p in served] == [0, None]
    assert [p.get("x-wopeval-worldRule") for p in served] == [None, 0]


async def test_33_3_the_world_tools_are_offered_to_the_agent(store: EventStore) -> None:
    async def lists(task_input: Any, ctx: AgentContext) -> Any:
        return sorted(spec.name for spec in ctx.tools())

    expected = {"kind": "golden", "match": {"strategy": "exact",
                "value": ["cancel", "get_booking"]}}  # fmt: skip
    ran = await run_agent(store, lists, [world_task(expected=expected)])
    assert ran.done.tasks[0].passed


async def test_0244_B_33_3_200_concurrent_trials_never_see_each_others_world_writes(
    store: EventStore,
) -> None:
    """Each trial appends its own marker, reads the log back after yielding to the others, and
    returns it: a trial that saw another's write (or lost its own) fails its output match."""
    world = {"initial": {"log": []}, "tools": {
        "note": [{"effects": [{"op": "append", "pointer": "/log", "value": {"$arg": "/m"}}],
                  "read": "/log"}],
        "read": [{"read": "/log"}]}}  # fmt: skip
    rng = random.Random(33)

    async def writer(task_input: Any, ctx: AgentContext) -> Any:
        mine = f"{ctx.task_id}#{ctx.trial_index}"
        count = rng.randint(1, 4)
        for i in range(count):
            await ctx.call_tool("note", {"m": f"{mine}.{i}"})
        final = await ctx.call_tool("read", {})
        return final.value == [f"{mine}.{i}" for i in range(count)]

    expected = {"kind": "golden", "match": {"strategy": "exact", "value": True}}
    tasks = [world_task(f"w{i}", expected=expected, world=world) for i in range(4)]
    settings = RunSettings(concurrency=200)
    ran = await run_agent(store, writer, tasks, trials={"count": 50}, settings=settings)
    assert [t.trials.passedCount for t in ran.done.tasks if t.trials] == [50, 50, 50, 50]
    states = [e.payload["state"]["log"] for e in ran.of_type(WORLD_STATE)]
    assert len(states) == 200
    for log in states:
        owners = {entry.rsplit(".", 1)[0] for entry in log}
        assert len(owners) == 1  # only its own trial's writes
