"""The p95 latency bar (RFC 0244 §B ``thresholds.maxP95LatencyMs``) over hand-built logs,
store-free: the suite fails only when the nearest-rank p95 of per-task latencies *exceeds* it."""

from __future__ import annotations

import pytest

from tests.grading.hand_logs import AGENT, Log, golden_suite
from wopeval.grading.summary import GradingOptions, build_summary, p95
from wopeval.suite.models import AgentEvalSuite
from wopeval.wire.events import RunEvent

OPTIONS = GradingOptions(target_agent_id=AGENT)


def _suite(tasks: int, bar: int | None) -> AgentEvalSuite:
    thresholds = {"passScore": 1.0} | ({"maxP95LatencyMs": bar} if bar is not None else {})
    return golden_suite(tasks, thresholds)


def _log(latencies_ms: list[int]) -> list[RunEvent]:
    """One passed trial per task, its bracket ``latency`` ms long."""
    log = Log()
    for i, latency in enumerate(latencies_ms):
        log.trial(f"t{i}", latency_ms=latency)
    return log.events


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
