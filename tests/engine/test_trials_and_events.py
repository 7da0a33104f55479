"""RFC 0244 §B trials and the event stream, on both stores."""

from __future__ import annotations

from typing import Any

import anyio

from tests.engine.helpers import make_suite, run_suite, scripted_task
from wopeval.engine.agent import AgentContext
from wopeval.engine.registry import Registry
from wopeval.engine.run import RunSettings
from wopeval.events.store import EventStore
from wopeval.wire.events import (
    EVAL_COMPLETED,
    EVAL_SCORED,
    EVAL_STARTED,
    INVOCATION_COMPLETED,
    INVOCATION_STARTED,
    RUN_COMPLETED,
    RUN_STARTED,
    TOOL_CALLED,
)

LOOKUP = {"tool": "crm:lookup-order", "args": {"orderId": "A-1", "verbose": True}}
REFUND = {"tool": "billing:refund", "args": {"amountMinor": 4200}}
IN_ORDER = {
    "kind": "trajectory",
    "trajectory": {
        "match": "in-order",
        "calls": [
            {"tool": "crm:lookup-order", "args": {"orderId": "A-1"}, "argsMatch": "subset"},
            {"tool": "billing:refund"},
        ],
    },
}


def positive_example_suite() -> Any:
    """RFC 0244 Examples/Positive: one task, count 5, k 3, all; trial 2 takes the wrong order."""
    script = {"calls": [LOOKUP, REFUND], "trials": {"2": {"calls": [REFUND, LOOKUP]}}}
    return make_suite(
        [scripted_task("refund", script, IN_ORDER)],
        trials={"count": 5, "k": 3, "passRule": "all"},
    )


async def test_0244_B_positive_example_event_stream_and_task_entry(store: EventStore) -> None:
    ran = await run_suite(store, positive_example_suite())
    types = [e.type for e in ran.events]
    assert types[0] == RUN_STARTED
    assert types[1] == EVAL_STARTED
    assert types[-2:] == [EVAL_COMPLETED, RUN_COMPLETED]
    assert [e.sequence for e in ran.events] == list(range(len(ran.events)))
    started = ran.of_type(EVAL_STARTED)[0].payload
    assert started["taskCount"] == 1
    assert started["trialCount"] == 5
    scored = ran.of_type(EVAL_SCORED)
    assert sorted(e.payload["trialIndex"] for e in scored) == [0, 1, 2, 3, 4]
    assert all(e.payload["taskId"] == "refund" for e in scored)
    started_seq = ran.of_type(EVAL_STARTED)[0].sequence
    completed_seq = ran.of_type(EVAL_COMPLETED)[0].sequence
    assert all(started_seq < e.sequence < completed_seq for e in scored)
    task = ran.done.tasks[0]
    assert task.trials is not None
    assert task.trials.model_dump() == {
        "n": 5,
        "passedCount": 4,
        "meanScore": 0.8,
        "passAtK": 1.0,
        "passHatK": 0.4,
    }
    assert task.passed is False
    assert task.score == 0.8
    assert ran.done.trialStats is not None
    assert ran.done.trialStats.k == 3
    assert ran.done.trialStats.scoreStderr is None  # one task: omitted


async def test_0244_B_each_trial_is_its_own_bracket_with_one_tool_called_per_call(
    store: EventStore,
) -> None:
    ran = await run_suite(store, positive_example_suite())
    roots = [e for e in ran.of_type(INVOCATION_STARTED) if "x-wopeval-taskId" in e.payload]
    assert len(roots) == 5
    assert len({e.payload["invocationId"] for e in roots}) == 5
    assert len(ran.of_type(INVOCATION_COMPLETED)) == 5
    assert len(ran.of_type(TOOL_CALLED)) == 10
    root_ids = {e.eventId for e in roots}
    assert all(e.causationId in root_ids for e in ran.of_type(TOOL_CALLED))


async def test_0244_B_count_one_stream_is_rfc_0081_shaped(store: EventStore) -> None:
    suite = make_suite(
        [
            scripted_task(
                "one",
                {"output": "hi"},
                {"kind": "golden", "match": {"strategy": "exact", "value": "hi"}},
            )
        ]
    )
    ran = await run_suite(store, suite)
    assert "trialCount" not in ran.of_type(EVAL_STARTED)[0].payload
    (scored,) = ran.of_type(EVAL_SCORED)
    assert "trialIndex" not in scored.payload
    assert scored.payload["score"] == 1.0
    assert ran.done.tasks[0].trials is None
    assert ran.done.trialStats is None


async def test_0244_B_memory_written_in_one_trial_is_invisible_to_the_others(
    store: EventStore,
) -> None:
    script = {"recall": "note", "remember": [{"key": "note", "value": "written-by-a-trial"}]}
    expected = {
        "kind": "golden",
        "match": {"strategy": "json-match", "value": {"recalled": "seeded"}},
    }
    fixtures = {"memorySeed": [{"key": "note", "value": "seeded"}]}
    suite = make_suite([scripted_task("memory", script, expected, fixtures)], trials={"count": 4})
    ran = await run_suite(store, suite, settings=RunSettings(concurrency=1))
    assert ran.done.tasks[0].trials is not None
    assert ran.done.tasks[0].trials.passedCount == 4


async def test_0244_B_trials_run_concurrently_under_the_limiter(store: EventStore) -> None:
    active = 0
    peak = 0

    async def slow(task_input: Any, ctx: AgentContext) -> Any:
        nonlocal active, peak
        active += 1
        peak = max(peak, active)
        await anyio.sleep(0.2)  # long enough for six to overlap even on a loaded machine
        active -= 1
        return "ok"

    registry = Registry()
    registry.register_agent("slow-agent", slow)
    expected = {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}}
    suite = make_suite(
        [scripted_task(f"t{i}", {}, expected) for i in range(4)], trials={"count": 5}
    )
    ran = await run_suite(
        store, suite, agent_id="slow-agent", registry=registry, settings=RunSettings(concurrency=6)
    )
    assert peak == 6
    assert ran.done.passedCount == 4
    assert [e.sequence for e in ran.events] == list(range(len(ran.events)))
    pairs = {(e.payload["taskId"], e.payload["trialIndex"]) for e in ran.of_type(EVAL_SCORED)}
    assert pairs == {(f"t{i}", j) for i in range(4) for j in range(5)}
