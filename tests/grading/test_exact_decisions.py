"""Every pass decision against a threshold is exact (wopeval.grading.exact).

RFC 0244 §B: ``mean`` ⇔ the mean (gating, RFC 0246) score ≥ ``thresholds.passScore``; the suite
``passed`` reads the gating aggregate against the same ``passScore``; the cost ceilings
``thresholds.maxCostUsd`` and ``maxCostUsdPerSuite`` count every trial. Each value is read as the
decimal it is recorded as (a float's shortest round-tripping spelling), exactly.
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wopeval.engine.budget import CostMeter
from wopeval.grading.exact import at_least, exact_mean, exact_sum, exceeds, recorded
from wopeval.grading.stats import TrialOutcome, task_result
from wopeval.grading.summary import GradingOptions, build_summary
from wopeval.suite.models import AgentEvalSuite
from wopeval.wire.events import EVAL_SCORED, PROVIDER_USAGE, RunEvent


def _at(score: float) -> TrialOutcome:
    return TrialOutcome(score=score, passed=False, gated=False)


def test_0244_B_three_trials_at_pass_score_tie_passes_under_mean() -> None:
    # (0.7 + 0.7 + 0.7) / 3: the float mean is 0.6999999999999998 < 0.7, the exact mean 7/10.
    assert math.fsum([0.7] * 3) / 3 < 0.7
    result = task_result([_at(0.7)] * 3, k=3, pass_rule="mean", pass_score=0.7)
    assert result.gating_score == Fraction(7, 10)
    assert result.passed is True
    # meanScore stays the float the summary has always reported.
    assert result.mean_score == math.fsum([0.7] * 3) / 3


@pytest.mark.parametrize(
    ("scores", "pass_score", "passed"),
    [
        # (0.1 + 0.3) / 2 = 0.2 exactly; binary values would give Fraction(0.1) + Fraction(0.3)
        # < 2 · Fraction(0.2), a miss.
        ([0.1, 0.3], 0.2, True),
        # (0 + 0 + 0.3) / 3 = 0.1; fsum / 3 = 0.09999999999999999.
        ([0.0, 0.0, 0.3], 0.1, True),
        # (0.1 + 0.7 + 0.7) / 3 = 0.5.
        ([0.1, 0.7, 0.7], 0.5, True),
        # one step below a tie still misses: (0.7 + 0.7 + 0.69) / 3 = 0.69666… < 0.7.
        ([0.7, 0.7, 0.69], 0.7, False),
        # a score computed as 0.1 + 0.2 is recorded as 0.30000000000000004: above 0.3.
        ([0.1 + 0.2], 0.3, True),
        ([0.1 + 0.2], math.nextafter(0.1 + 0.2, 1), False),
    ],
)
def test_0244_B_mean_rule_is_exact_on_the_recorded_decimals(
    scores: list[float], pass_score: float, passed: bool
) -> None:
    outcomes = [_at(score) for score in scores]
    assert task_result(outcomes, 1, "mean", pass_score).passed is passed


def test_0246_gating_mean_tie_passes_and_a_gated_trial_still_counts_zero() -> None:
    # Gating scores 0.7, 0.7, 0.7, 0 (the last trial's trajectory did not match, score 1):
    # exact mean 2.1 / 4 = 0.525; a tie at passScore 0.525 passes, 0.5250000000000001 misses.
    gated = TrialOutcome(score=1.0, passed=False, gated=True)
    outcomes = [_at(0.7)] * 3 + [gated]
    assert task_result(outcomes, 1, "mean", 0.525).passed is True
    assert task_result(outcomes, 1, "mean", 0.5250000000000001).passed is False
    assert task_result(outcomes, 1, "mean", 0.525).mean_score == pytest.approx(3.1 / 4)


def test_0244_B_exact_helpers() -> None:
    assert recorded(0.7) == Fraction(7, 10)
    assert recorded(Fraction(1, 3)) == Fraction(1, 3)
    assert recorded(1e-05) == Fraction(1, 100000)
    assert exact_sum([0.1, 0.2]) == Fraction(3, 10)
    assert exact_mean([0.7, 0.7, 0.7]) == Fraction(7, 10)
    assert at_least(Fraction(7, 10), 0.7)
    assert not exceeds([0.1, 0.2], 0.3)
    assert exceeds([0.1, 0.2, 1e-12], 0.3)
    with pytest.raises(ValueError, match="mean of nothing"):
        exact_mean([])
    with pytest.raises(ValueError, match="finite"):
        recorded(math.inf)


TENTHS = st.integers(0, 10).map(lambda tenths: Decimal(tenths) / 10)
# Trial counts whose means of tenths are short decimals (n = 2^a · 5^b), so a tie is writable.
COUNTS = st.sampled_from([1, 2, 4, 5, 8])


@given(COUNTS.flatmap(lambda n: st.lists(TENTHS, min_size=n, max_size=n)), st.data())
def test_0244_B_mean_decision_is_the_decimal_decision(
    scores: list[Decimal], data: st.DataObject
) -> None:
    # The decision equals the one taken on the decimals as written (a suite file, a JSON log);
    # half the thresholds are the exact mean itself, a tie that must pass.
    tie = sum(scores, Decimal(0)) / len(scores)
    threshold = data.draw(st.one_of(st.just(tie), TENTHS))
    want = sum(map(Fraction, scores), Fraction(0)) / len(scores) >= Fraction(threshold)
    outcomes = [_at(float(score)) for score in scores]
    assert task_result(outcomes, 1, "mean", float(threshold)).passed is want


@given(st.floats(0, 1), st.floats(0, 1))
def test_0244_B_one_value_decides_as_the_float_comparison(score: float, threshold: float) -> None:
    # Reading floats as their shortest decimals keeps their order: n = 1 decides as score ≥ t.
    assert task_result([_at(score)], 1, "mean", threshold).passed is (score >= threshold)


def test_0244_B_cost_meter_tie_at_the_ceiling_does_not_exceed() -> None:
    meter = CostMeter([0.3, None])
    meter.add(0.1)
    meter.add(0.2)
    assert meter.total == 0.1 + 0.2 > 0.3  # the reported float total
    assert meter.exceeded is False
    meter.add(0.0001)
    assert meter.exceeded is True


def test_0244_B_a_cost_that_is_not_a_number_fails_closed() -> None:
    # A NaN or infinite usage cost has no exact sum: it exceeds every finite ceiling (a float
    # total NaN > 0.3 is False, which let a bogus report slip under the ceiling).
    for bogus in (math.nan, math.inf):
        meter = CostMeter([0.3])
        meter.add(0.1)
        meter.add(bogus)
        assert meter.exceeded is True
        assert exceeds([bogus], 10.0)
    # An infinite ceiling (YAML ``.inf``) is never exceeded by finite costs; no ceiling never is.
    assert not exceeds([1e300, 1e300], math.inf)
    assert CostMeter([None]).exceeded is False


# --- the suite decisions, from a recorded log -------------------------------------------------


RUBRIC = {"criterion": "is polite", "weight": 1}


def _suite(thresholds: dict[str, Any], tasks: int = 1) -> AgentEvalSuite:
    return AgentEvalSuite.model_validate(
        {
            "suiteId": "core.acme.evals.exact",
            "version": "1.0.0",
            "modes": ["rubric"],
            "thresholds": thresholds,
            "trials": {"count": 3, "k": 1, "passRule": "mean"},
            "tasks": [
                {
                    "taskId": f"task-{i}",
                    "input": "hello",
                    "expected": {"kind": "rubric", "rubric": [RUBRIC]},
                }
                for i in range(tasks)
            ],
        }
    )


def _event(sequence: int, type_: str, payload: dict[str, Any]) -> RunEvent:
    return RunEvent(
        eventId=f"evt-exact-{sequence:08d}",
        runId="run-exact",
        type=type_,
        payload=payload,
        timestamp="2026-12-01T09:00:00Z",
        sequence=sequence,
    )


def _scored(scores: dict[str, list[float]], costs: tuple[float, ...] = ()) -> list[RunEvent]:
    payloads = [
        (EVAL_SCORED, {"taskId": task, "trialIndex": i, "score": s, "passed": True})
        for task, per_trial in scores.items()
        for i, s in enumerate(per_trial)
    ]
    usage = {"provider": "mock", "model": "m", "inputTokens": 1, "outputTokens": 1}
    payloads += [(PROVIDER_USAGE, {**usage, "costEstimateUsd": cost}) for cost in costs]
    return [_event(n, type_, payload) for n, (type_, payload) in enumerate(payloads)]


OPTIONS = GradingOptions(target_agent_id="core.acme.agent")


def test_0244_B_suite_aggregate_tie_at_pass_score_passes() -> None:
    # Three tasks, each three trials of 0.7: every task and the suite meet passScore 0.7.
    events = _scored({f"task-{i}": [0.7, 0.7, 0.7] for i in range(3)})
    summary = build_summary(_suite({"passScore": 0.7}, tasks=3), events, OPTIONS)
    assert [task.passed for task in summary.tasks] == [True, True, True]
    assert summary.passed is True
    # The reported numbers are the floats they always were.
    assert summary.aggregateScore == math.fsum([math.fsum([0.7] * 3) / 3] * 3) / 3
    assert summary.aggregateScore < 0.7


def test_0244_B_suite_aggregate_is_the_exact_mean_of_task_gating_means() -> None:
    # Task means 0.1 (0, 0, 0.3) and 0.3 (0.3, 0.3, 0.3): aggregate exactly 0.2 = passScore.
    # Task 0 fails its own mean (0.1 < 0.2), the suite still meets the aggregate bar.
    events = _scored({"task-0": [0.0, 0.0, 0.3], "task-1": [0.3, 0.3, 0.3]})
    summary = build_summary(_suite({"passScore": 0.2}, tasks=2), events, OPTIONS)
    assert [task.passed for task in summary.tasks] == [False, True]
    assert summary.passed is True
    missed = build_summary(_suite({"passScore": 0.2000001}, tasks=2), events, OPTIONS)
    assert missed.passed is False
    # Task means 0, 0 and 0.3: the aggregate is exactly 0.1, where a float mean of the task means
    # (0.09999999999999999) misses passScore 0.1.
    events = _scored({"task-0": [0.0] * 3, "task-1": [0.0] * 3, "task-2": [0.3] * 3})
    summary = build_summary(_suite({"passScore": 0.1}, tasks=3), events, OPTIONS)
    assert [task.passed for task in summary.tasks] == [False, False, True]
    assert summary.passed is True


def test_0244_B_cost_ceiling_tie_is_within_the_ceiling() -> None:
    # Usage 0.1 + 0.2 USD: the reported total is 0.30000000000000004, the exact one 0.3.
    events = _scored({"task-0": [1.0, 1.0, 1.0]}, costs=(0.1, 0.2))
    at_ceiling = build_summary(_suite({"passScore": 1.0, "maxCostUsd": 0.3}), events, OPTIONS)
    assert at_ceiling.totalCostUsd == 0.1 + 0.2
    assert at_ceiling.passed is True
    host = GradingOptions(target_agent_id="core.acme.agent", host_max_cost_usd=0.3)
    assert build_summary(_suite({"passScore": 1.0}), events, host).passed is True
    over = build_summary(_suite({"passScore": 1.0, "maxCostUsd": 0.29}), events, OPTIONS)
    assert over.passed is False


def test_an_empty_exact_sum_is_an_exact_zero() -> None:
    total = exact_sum([])
    assert type(total) is Fraction
    assert total == 0
