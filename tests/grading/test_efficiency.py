"""Cost per success, tokens per success and latency quantiles (wopeval.grading.efficiency), with
hand-worked numbers."""

from __future__ import annotations

import random
from fractions import Fraction

import pytest
from scipy import stats

from wopeval.grading.detail import RunDetail, TaskDetail, TrialCell, TrialStatus, TrialUsage
from wopeval.grading.efficiency import (
    P50,
    P95,
    efficiency_of,
    nearest_rank,
    per_success_interval,
    quantile_interval,
    run_efficiency,
)
from wopeval.grading.intervals import clopper_pearson


def cell(
    status: TrialStatus, cost: float = 0.0, tokens: tuple[int, int] = (0, 0), ms: int | None = 10
) -> TrialCell:
    ran = status not in ("missing", "skipped")
    usage = TrialUsage(ran, cost, tokens[0], tokens[1], ms if ran else None)
    return TrialCell(0, status, None, None, usage=None if status == "missing" else usage)


def test_plainest_one_trial_that_passed() -> None:
    eff = efficiency_of([cell("pass", 0.25, (10, 5), 40)])
    assert (eff.trials, eff.successes) == (1, 1)
    assert eff.cost_per_success == Fraction(1, 4)
    assert eff.tokens_per_success == 15
    latency = eff.latency(P50)
    assert latency is not None
    assert latency.value == 40


def test_cost_per_success_counts_every_trial_cost() -> None:
    # 0.1 + 0.2 (failed) + 0.3 (timed out: an error) + 0.4 = 1.0 over 2 successes = 0.5
    cells = [cell("pass", 0.1), cell("fail", 0.2), cell("error", 0.3), cell("pass", 0.4)]
    eff = efficiency_of(cells)
    assert eff.cost_usd == Fraction(0.1) + Fraction(0.2) + Fraction(0.3) + Fraction(0.4)
    assert float(eff.cost_per_success or 0) == 0.5
    assert (eff.trials, eff.successes, eff.success_rate) == (4, 2, Fraction(1, 2))


def test_no_success_is_none_never_zero() -> None:
    eff = efficiency_of([cell("fail", 0.5), cell("error", 0.25)])
    assert eff.cost_per_success is None
    assert eff.tokens_per_success is None
    assert eff.to_json()["costPerSuccessUsd"] is None
    # 0 successes of 2: CP = [0, 1 − 0.025^(1/2)] = [0, 0.841886]; mean cost 0.375:
    # low = 0.375/0.841886 = 0.445428, high unbounded
    span = eff.cost_interval
    assert span is not None
    assert span.high is None
    assert span.low == pytest.approx(0.375 / (1 - 0.025**0.5), rel=1e-12)


def test_skipped_and_missing_trials_are_not_attempts() -> None:
    eff = efficiency_of([cell("pass", 1.0), cell("skipped"), cell("missing")])
    assert (eff.trials, eff.successes, eff.cost_per_success) == (1, 1, Fraction(1))
    assert efficiency_of([cell("missing")]).success_interval is None


def test_per_success_interval_by_hand() -> None:
    # 2 of 4, cost 0.4: CP(2, 4) = [0.067586, 0.932414]; mean cost per trial 0.1:
    # [0.1/0.932414, 0.1/0.067586] = [0.107249, 1.479596]
    span = per_success_interval(Fraction(2, 5), 2, 4, 0.95)
    assert span is not None
    assert span.high is not None
    rate = clopper_pearson(2, 4)
    assert (round(rate.low, 6), round(rate.high, 6)) == (0.067586, 0.932414)
    assert span.low == pytest.approx(0.1 / rate.high, rel=1e-12)
    assert span.high == pytest.approx(0.1 / rate.low, rel=1e-12)
    assert span.low < 0.2 < span.high  # holds the point value 0.4/2
    assert per_success_interval(Fraction(0), 1, 3, 0.95) == per_success_interval(
        Fraction(0), 0, 3, 0.95
    )
    assert per_success_interval(Fraction(1), 0, 0, 0.95) is None


def test_nearest_rank() -> None:
    # ⌈0.95·20⌉ = 19th; ⌈0.5·5⌉ = 3rd; ⌈0.95·1⌉ = 1st; ⌈0.5·4⌉ = 2nd
    assert nearest_rank(list(range(1, 21)), P95) == 19
    assert nearest_rank([1, 2, 3, 4, 5], P50) == 3
    assert nearest_rank([7], P95) == 7
    assert nearest_rank([1, 2, 3, 4], P50) == 2


def test_median_interval_of_ten_by_hand() -> None:
    # B ~ Bin(10, 1/2): P(B ≤ 1) = 11/1024 = 0.0107 ≤ 0.025 < P(B ≤ 2) = 56/1024, so the
    # interval is [X(2), X(9)] (coverage 1 − 2·11/1024 = 0.9785)
    values = [10, 20, 30, 40, 50, 60, 70, 80, 90, 100]
    span = quantile_interval(values, P50, 0.95)
    assert (span.low, span.high) == (20.0, 90.0)


def test_few_values_leave_the_quantile_unbounded() -> None:
    # 5 values: P(B = 0) = P(B = 5) = 1/32 = 0.03125 > 0.025: no rank bounds the median
    span = quantile_interval([1, 2, 3, 4, 5], P50, 0.95)
    assert (span.low, span.high) == (0.0, None)
    # p95 of 20 values: P(B ≥ 20) = 0.95^20 = 0.358 > 0.025: unbounded above
    assert quantile_interval(list(range(20)), P95, 0.95).high is None


def test_quantile_interval_matches_the_binomial_ranks() -> None:
    rng = random.Random(7)
    for m in (1, 2, 12, 40, 200, 1000):
        values = sorted(rng.randint(0, 1000) for _ in range(m))
        for q in (P50, P95):
            span = quantile_interval(values, q, 0.95)
            dist = stats.binom(m, float(q))
            ranks = [r for r in range(1, m + 1) if dist.cdf(r - 1) <= 0.025]
            assert span.low == (values[ranks[-1] - 1] if ranks else 0.0)
            tops = [t for t in range(1, m + 1) if dist.sf(t - 1) <= 0.025]
            assert span.high == (values[tops[0] - 1] if tops else None)


def test_run_efficiency_pools_the_tasks() -> None:
    a = TaskDetail("a", [cell("pass", 0.5, (3, 1)), cell("fail", 0.5, (3, 1))], 0.5, False)
    b = TaskDetail("b", [cell("fail", 1.0, (2, 2)), cell("fail", 1.0, (2, 2))], 0.0, False)
    detail = RunDetail([a, b], 0.25, 1.0, False, True, False)
    run = run_efficiency(detail)
    # suite: 4 trials, 1 success, cost 3.0, tokens 16
    assert (run.suite.trials, run.suite.successes) == (4, 1)
    assert (run.suite.cost_per_success, run.suite.tokens_per_success) == (Fraction(3), Fraction(16))
    (_, ea), (_, eb) = run.tasks
    assert ea.cost_per_success == 1
    assert eb.cost_per_success is None
    doc = run.to_json()
    assert doc["methods"] == {
        "successRate": "clopper-pearson",
        "perSuccess": "clopper-pearson-mapped",
        "latency": "order-statistic",
    }


def test_changing_a_price_changes_only_cost_numbers() -> None:
    cells = [cell("pass", 0.1, (5, 5), 12), cell("fail", 0.3, (5, 5), 30)]
    doubled = [cell("pass", 0.2, (5, 5), 12), cell("fail", 0.6, (5, 5), 30)]
    one, two = efficiency_of(cells).to_json(), efficiency_of(doubled).to_json()
    changed = {key for key in one if one[key] != two[key]}
    assert changed == {"totalCostUsd", "costPerSuccessUsd", "costPerSuccessInterval"}


def test_p95_needs_72_latencies_for_an_upper_bound() -> None:
    # P(B ≥ m) = 0.95^m: 0.95^71 = 0.02624 > 0.025 ≥ 0.95^72 = 0.02493
    assert quantile_interval(list(range(71)), P95, 0.95).high is None
    assert quantile_interval(list(range(72)), P95, 0.95).high == 71.0
