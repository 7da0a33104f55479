"""``read_trial``: one stored trial's calls read back as recorded (SQLite and PostgreSQL): how
each was served, its result or tool error, whether it reached the gateway; and a fork whose
prefix holds each kind answers it the same way again."""

from __future__ import annotations

from typing import Any

import pytest

from tests.service import fork_agents
from wopeval.engine.gateway import TOOL_FAILED
from wopeval.engine.registry import Registry
from wopeval.engine.run import RunSettings
from wopeval.events.store import EventStore
from wopeval.service.fork import plan_fork
from wopeval.service.runs import RunService
from wopeval.service.trial_record import read_trial
from wopeval.suite import parse_suite
from wopeval.wire.events import FIXTURE_MISS_ERROR_CODE

AGENT = "tests.service.fork_agents:mixed"


@pytest.fixture(autouse=True)
def _fresh_tool(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fork_agents, "LIVE", [])


def _task(task_id: str, on_miss: str, last: str) -> dict[str, Any]:
    return {
        "taskId": task_id,
        "input": {"last": last},
        "expected": {"kind": "golden", "match": {"strategy": "contains", "value": "codes"}},
        "fixtures": {"onMiss": on_miss, "toolResponses": [{"tool": "step", "response": {"n": 7}}]},
    }


def _service(store: EventStore) -> RunService:
    registry = Registry()
    registry.register_tool("step", fork_agents.step)
    registry.register_tool("boom", fork_agents.boom)
    return RunService(store, registry)


async def _run(store: EventStore) -> str:
    suite = parse_suite(
        {
            "suiteId": "core.test.evals.trial-record",
            "version": "1.0.0",
            "modes": ["golden"],
            "tasks": [_task("live", "live", "step"), _task("closed", "fail", "nowhere")],
        }
    )
    service = _service(store)
    record, _ = await service.run(await service.plan(suite, AGENT, RunSettings(concurrency=1)))
    return record.run_id


def _said(calls: Any) -> list[tuple[Any, ...]]:
    return [(c.tool, c.gateway, c.fixture, c.fixture_index, c.ok, c.error_code) for c in calls]


async def test_read_trial_gives_each_call_as_recorded(store: EventStore) -> None:
    run_id = await _run(store)
    live = await read_trial(store, run_id, "live", 0)
    assert _said(live.calls) == [
        ("step", True, "served", 0, True, None),
        ("boom", True, "miss-live", None, False, TOOL_FAILED),
        ("step", False, None, None, False, "wopeval.invalid_arguments"),
        ("step", True, "miss-live", None, True, None),
    ]
    assert [c.index for c in live.calls] == [0, 1, 2, 3]
    assert live.calls[0].outcome == {"n": 7}
    assert live.calls[1].error_message is not None
    assert "the ledger is locked" in live.calls[1].error_message
    assert all(c.answered and c.result_captured for c in live.calls)
    assert [c.tool for c in live.gateway_calls] == ["step", "boom", "step"]
    closed = await read_trial(store, run_id, "closed", 0)
    assert _said(closed.calls)[-1] == ("nowhere", True, "miss-failed", None, False,
                                       FIXTURE_MISS_ERROR_CODE)  # fmt: skip
    assert closed.view.failed_closed


async def test_fork_answers_each_kind_of_recorded_call_as_it_was(store: EventStore) -> None:
    """A fixture answer, a live tool's error and a miss are served from the log (the live tool
    is not called again); the refused call is refused again; the trial grades as it did."""
    run_id = await _run(store)
    service = _service(store)
    for task_id, at in (("live", 3), ("closed", 3)):
        original = await read_trial(store, run_id, task_id, 0)
        reached = len(fork_agents.LIVE)
        record, summary = await service.run(await plan_fork(service, run_id, task_id, 0, at))
        assert summary is not None
        forked = await read_trial(store, record.run_id, task_id, 0)
        assert [(c.tool, c.ok, c.error_code, c.outcome) for c in forked.calls] == [
            (c.tool, c.ok, c.error_code, c.outcome) for c in original.calls
        ]
        assert len(fork_agents.LIVE) == reached  # nothing reached a live tool
        assert forked.view.failed_closed == original.view.failed_closed
        assert forked.view.scored is not None
        assert original.view.scored is not None
        assert forked.view.scored.score == original.view.scored.score
