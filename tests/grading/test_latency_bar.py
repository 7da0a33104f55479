"""The p95 latency bar (RFC 0244 §B ``thresholds.maxP95LatencyMs``) over hand-built logs,
store-free: the suite fails only when the nearest-rank p95 of per-task latencies *exceeds* it."""

from __future__ import annotations

from typing import Any

import pytest

from wopeval.grading.summary import GradingOptions, build_summary, p95
from wopeval.suite.models import AgentEvalSuite
from wopeval.wire.events import RunEvent
from wopeval.wire.vocab import EVAL_SCORED, INVOCATION_COMPLETED, INVOCATION_STARTED, X_TASK_ID

AGENT = "core.acme.agent"
OPTIONS = GradingOptions(target_agent_id=AGENT)


def _suite(latencies: int, bar: int | None) -> AgentEvalSuite:
    thresholds: dict[str, Any] = {"passScore": 1.0}
    if bar is not None:
        thresholds["maxP95LatencyMs"] = bar
    return AgentEvalSuite.model_validate(
        {
            "suiteId": "core.acme.evals.latency",
            "version": "1.0.0",
            "modes": ["golden"],
            "thresholds": thresholds,
            "tasks": [
                {
                    "taskId": f"t{i}",
                    "input": "hi",
                    "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}},
                }
                for i in range(latencies)
            ],
        }
    )


def _log(latencies_ms: list[int]) -> list[RunEvent]:
    """One passed trial per task, its bracket ``latency`` ms long (started at 09:00:00)."""
    events: list[RunEvent] = []

    def add(type_: str, payload: dict[str, Any], at_ms: int, cause: str | None = None) -> str:
        event_id = f"evt-latency-{len(events):08d}"
        seconds, ms = divmod(at_ms, 1000)
        events.append(
            RunEvent(
                eventId=event_id,
                runId="run-latency",
                type=type_,
                payload=payload,
                timestamp=f"2026-12-01T09:00:{seconds:02d}.{ms:03d}Z",
                sequence=len(events),
                causationId=cause,
            )
        )
        return event_id

    for i, latency in enumerate(latencies_ms):
        task = f"t{i}"
        root = add(
            INVOCATION_STARTED,
            {"invocationId": f"inv-{i}", "agentId": AGENT, "source": "run-api", X_TASK_ID: task,
             "x-wopeval-trialIndex": 0},
            0,
        )  # fmt: skip
        done = {"invocationId": f"inv-{i}", "agentId": AGENT, "outcome": "completed"}
        add(INVOCATION_COMPLETED, done, latency, root)
        add(EVAL_SCORED, {"taskId": task, "trialIndex": 0, "score": 1.0, "passed": True}, latency)
    return events


@pytest.mark.parametrize(
    ("bar", "passed"),
    [(None, True), (250, True), (251, True), (249, False), (0, False)],
)
def test_0244_B_a_p95_at_the_bar_passes_and_one_millisecond_over_fails(
    bar: int | None, passed: bool
) -> None:
    """Three tasks of 100, 250 and 40 ms: nearest-rank p95 = the ceil(0.95 · 3) = 3rd = 250."""
    summary = build_summary(_suite(3, bar), _log([100, 250, 40]), OPTIONS)
    assert [t.latencyMs for t in summary.tasks] == [100, 250, 40]
    assert all(t.passed for t in summary.tasks)
    assert summary.passed is passed


def test_0244_B_plainest_one_task_its_latency_is_the_p95() -> None:
    assert build_summary(_suite(1, 7), _log([7]), OPTIONS).passed is True
    assert build_summary(_suite(1, 6), _log([7]), OPTIONS).passed is False


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ([5], 5.0),
        ([3, 1, 2], 3.0),  # ceil(2.85) = 3rd of 3
        (list(range(1, 21)), 19.0),  # ceil(19.0) = 19th of 20
        (list(range(21, 0, -1)), 20.0),  # ceil(19.95) = 20th of 21, whatever the order
    ],
)
def test_0244_B_p95_is_the_nearest_rank(values: list[int], expected: float) -> None:
    assert p95(values) == expected
