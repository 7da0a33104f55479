"""The rules of wopeval.grading.efficiency one by one, store-free, with exact hand-worked values:
formatting, the per-success interval, nearest rank, the binomial ranks of the quantile interval,
the folding of cells and the JSON shape."""

from __future__ import annotations

import functools
import operator
from fractions import Fraction
from math import comb

import pytest

from wopeval.grading.detail import RunDetail, TaskDetail, TrialCell, TrialStatus, TrialUsage
from wopeval.grading.efficiency import (
    METHODS,
    P50,
    P95,
    Efficiency,
    Quantile,
    Span,
    _binom_cdf,
    _last,
    efficiency_of,
    figure,
    nearest_rank,
    per_success_interval,
    per_success_text,
    quantile_interval,
    run_efficiency,
)
from wopeval.grading.intervals import clopper_pearson


def cell(status: TrialStatus, usage: TrialUsage | None) -> TrialCell:
    return TrialCell(0, status, None, None, usage=usage)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.0, "0"),
        (0.125, "0.125"),
        (1.4815, "1.48"),
        (999.0, "999"),
        (-999.0, "-999"),
        (1000.0, "1,000"),
        (-1250.0, "-1,250"),
        (1250.0, "1,250"),
        (1e-4, "0.0001"),
        (9.9e-5, "9.90e-05"),
        (-5e-5, "-5.00e-05"),
        (-1e-4, "-0.0001"),
    ],
)
def test_figure(value: float, text: str) -> None:
    assert figure(value) == text


def test_span_and_quantile_shapes() -> None:
    assert Span(0.107, 1.48).text() == "[0.107, 1.48]"
    assert Span(0.445, None).text() == "[0.445, ∞)"
    assert Span(0.5, None).to_json() == {"low": 0.5, "high": None}
    assert Span(0.5, 2.0).to_json() == {"low": 0.5, "high": 2.0}
    assert Quantile(7, Span(1.0, None)).to_json() == {
        "value": 7,
        "interval": {"low": 1.0, "high": None},
    }


def test_per_success_text() -> None:
    assert per_success_text(None, None) == "no success"
    assert per_success_text(None, Span(0.445, None)) == "no success [0.445, ∞)"
    assert per_success_text(Fraction(1, 5), None) == "0.2"
    assert per_success_text(Fraction(1, 5), Span(0.107, 1.48)) == "0.2 [0.107, 1.48]"


def test_per_success_interval_edges() -> None:
    assert per_success_interval(Fraction(1), 0, 0, 0.95) is None
    assert per_success_interval(Fraction(0), 1, 1, 0.95) == Span(0.0, 0.0)
    # One trial, one success: CP = [0.025, 1]; mean cost 3: [3/1, 3/0.025] = [3, 120]
    rate = clopper_pearson(1, 1, 0.95)
    assert rate.high == 1.0
    span = per_success_interval(Fraction(3), 1, 1, 0.95)
    assert span == Span(3.0, float(Fraction(3) / Fraction(rate.low)))
    assert span is not None
    assert span.high == pytest.approx(120.0)
    # One trial, no success: CP = [0, 0.975]; mean cost 3: [3/0.975, ∞)
    assert per_success_interval(Fraction(3), 0, 1, 0.95) == Span(
        float(Fraction(3) / Fraction(clopper_pearson(0, 1, 0.95).high)), None
    )
    # Two trials, one success, total 4 (mean 2), at level 0.9: CP = [0.0253, 0.9747]
    rate = clopper_pearson(1, 2, 0.9)
    assert per_success_interval(Fraction(4), 1, 2, 0.9) == Span(
        float(Fraction(2) / Fraction(rate.high)), float(Fraction(2) / Fraction(rate.low))
    )


def test_nearest_rank_boundaries() -> None:
    four = [10, 20, 30, 40]
    assert nearest_rank(four, Fraction(0)) == 10  # rank max(1, 0) = 1
    assert nearest_rank(four, Fraction(1, 4)) == 10  # ⌈1⌉ = 1
    assert nearest_rank(four, Fraction(1, 2)) == 20  # ⌈2⌉ = 2
    assert nearest_rank(four, Fraction(51, 100)) == 30  # ⌈2.04⌉ = 3
    assert nearest_rank(four, P95) == 40  # ⌈3.8⌉ = 4
    assert nearest_rank([10, 20, 30], P50) == 20  # ⌈1.5⌉ = 2
    assert nearest_rank([5], P95) == 5


def exact_cdf(k: int, m: int, q: Fraction) -> Fraction:
    return sum((comb(m, i) * q**i * (1 - q) ** (m - i) for i in range(k + 1)), Fraction(0))


@pytest.mark.parametrize("m", [1, 2, 3, 5, 8])
def test_binom_cdf_against_the_exact_sum(m: int) -> None:
    q = Fraction(3, 10)
    assert _binom_cdf(-1, m, 0.3) == 0.0
    assert _binom_cdf(m, m, 0.3) == 1.0
    assert _binom_cdf(m + 1, m, 0.3) == 1.0
    for k in range(m):
        assert _binom_cdf(k, m, 0.3) == pytest.approx(float(exact_cdf(k, m, q)), rel=1e-12)


def test_binom_cdf_is_not_symmetric_in_q() -> None:
    # P(B ≤ 0) for B ~ Binomial(2, 0.2) = 0.8² = 0.64 (not 0.2² = 0.04)
    assert _binom_cdf(0, 2, 0.2) == pytest.approx(0.64, rel=1e-12)
    # P(B ≤ 1) for B ~ Binomial(3, 0.5) = (1 + 3)/8
    assert _binom_cdf(1, 3, 0.5) == pytest.approx(0.5, rel=1e-12)


def test_last_bisects_to_the_largest_true_rank() -> None:
    for cut in range(11):
        assert _last(functools.partial(operator.ge, cut), 0, 10) == cut  # k ≤ cut
    assert _last(lambda k: k <= 4, 4, 4) == 4
    assert _last(lambda k: k <= 100, 3, 9) == 9
    assert _last(lambda k: k <= 3, 3, 9) == 3


def brute_interval(m: int, q: Fraction, level: float) -> tuple[int, int]:
    """``(r, t)`` by scanning every rank with exact binomial sums."""
    half = Fraction((1 - level) / 2)
    r = max(rank for rank in range(m + 1) if rank == 0 or exact_cdf(rank - 1, m, q) <= half)
    t = min([rank for rank in range(1, m + 1) if 1 - exact_cdf(rank - 1, m, q) <= half] + [m + 1])
    return r, t


@pytest.mark.parametrize("level", [0.9, 0.95])
@pytest.mark.parametrize("q", [P50, P95, Fraction(1, 4)])
def test_quantile_interval_ranks_by_scanning(level: float, q: Fraction) -> None:
    for m in [1, 2, 3, 5, 6, 7, 10, 13, 20, 40, 75]:
        ordered = [10 * (i + 1) for i in range(m)]
        r, t = brute_interval(m, q, level)
        span = quantile_interval(ordered, q, level)
        assert span.low == (float(ordered[r - 1]) if r >= 1 else 0.0), (m, q, level)
        assert span.high == (float(ordered[t - 1]) if t <= m else None), (m, q, level)


def test_quantile_interval_median_of_six_by_hand() -> None:
    # Binomial(6, 1/2): P(B ≤ 0) = 1/64 ≤ 0.025, P(B ≤ 1) = 7/64 > 0.025, so r = 1;
    # P(B ≥ 6) = 1/64 ≤ 0.025, P(B ≥ 5) = 7/64 > 0.025, so t = 6.
    assert quantile_interval([1, 2, 3, 4, 5, 6], P50, 0.95) == Span(1.0, 6.0)
    # Five values: P(B ≤ 0) = 1/32 > 0.025, so no lower rank and no upper one.
    assert quantile_interval([1, 2, 3, 4, 5], P50, 0.95) == Span(0.0, None)
    # At level 0.9 (α/2 = 0.05) five values suffice: 1/32 ≤ 0.05.
    assert quantile_interval([1, 2, 3, 4, 5], P50, 0.9) == Span(1.0, 5.0)
    with pytest.raises(ValueError, match="confidence level"):
        quantile_interval([1], P50, 1.0)


def test_efficiency_of_folds_each_cell() -> None:
    cells = [
        cell("pass", TrialUsage(True, 0.5, 3, 4, 30)),
        cell("fail", TrialUsage(True, 0.25, 10, 1, None)),  # no latency recorded
        cell("error", TrialUsage(True, 0.125, 0, 2, 10)),
        cell("skipped", TrialUsage(False, 1.0, 100, 200, 99)),  # spend counted, not a trial
        cell("missing", None),
        cell("pass", None),  # a trial without usage
    ]
    eff = efficiency_of(cells, 0.9)
    assert eff == Efficiency(
        trials=4,
        successes=2,
        cost_usd=Fraction(15, 8),
        tokens=320,
        latencies=(30, 10, 99),
        level=0.9,
    )
    assert eff.success_rate == Fraction(1, 2)
    assert eff.cost_per_success == Fraction(15, 16)
    assert eff.tokens_per_success == 160


def test_efficiency_of_plainest_and_empty() -> None:
    eff = efficiency_of([])
    assert eff == Efficiency(0, 0, Fraction(0), 0, (), 0.95)
    assert eff.success_rate is None
    assert eff.success_interval is None
    assert eff.cost_interval is None
    assert eff.tokens_interval is None
    assert eff.latency(P50) is None
    with pytest.raises(ValueError, match="confidence level"):
        efficiency_of([], 0)
    assert efficiency_of([], 1 / 2).level == 0.5


def test_efficiency_to_json_by_hand() -> None:
    # One trial, passed, cost 0.5, tokens 2 + 2, latency 40 ms, level 0.95: CP(1, 1) = [0.025, 1]
    eff = Efficiency(1, 1, Fraction(1, 2), 4, (40,), 0.95)
    low = clopper_pearson(1, 1, 0.95).low
    assert eff.to_json() == {
        "trials": 1,
        "successes": 1,
        "successRate": 1.0,
        "successRateInterval": {"low": low, "high": 1.0},
        "totalCostUsd": 0.5,
        "costPerSuccessUsd": 0.5,
        "costPerSuccessInterval": {"low": 0.5, "high": float(Fraction(1, 2) / Fraction(low))},
        "tokens": 4,
        "tokensPerSuccess": 4.0,
        "tokensPerSuccessInterval": {"low": 4.0, "high": float(4 / Fraction(low))},
        "latencyP50Ms": {"value": 40, "interval": {"low": 0.0, "high": None}},
        "latencyP95Ms": {"value": 40, "interval": {"low": 0.0, "high": None}},
    }
    nothing = Efficiency(2, 0, Fraction(0), 0, (), 0.95).to_json()
    assert nothing["costPerSuccessUsd"] is None
    assert nothing["tokensPerSuccess"] is None
    assert nothing["costPerSuccessInterval"] == {"low": 0.0, "high": 0.0}
    assert nothing["latencyP50Ms"] is None
    assert nothing["latencyP95Ms"] is None
    assert Efficiency(0, 0, Fraction(0), 0, (), 0.95).to_json()["successRateInterval"] is None


def test_latency_sorts_before_ranking() -> None:
    eff = Efficiency(3, 0, Fraction(0), 0, (30, 10, 20), 0.95)
    p50 = eff.latency(P50)
    assert p50 == Quantile(20, quantile_interval([10, 20, 30], P50, 0.95))
    p95 = eff.latency(P95)
    assert p95 is not None
    assert p95.value == 30


def task(task_id: str, *cells: TrialCell) -> TaskDetail:
    return TaskDetail(task_id, list(cells), 1.0, True)


def test_run_efficiency_to_json() -> None:
    a = task("a", cell("pass", TrialUsage(True, 0.25, 1, 1, 20)))
    b = task(
        "b",
        cell("fail", TrialUsage(True, 0.75, 2, 0, 10)),
        cell("skipped", TrialUsage(False, 0.0, 0, 0, None)),
    )
    detail = RunDetail([a, b], 0.5, 0.5, True, True, False)
    run = run_efficiency(detail, 0.9)
    assert run.level == 0.9
    assert run.suite == Efficiency(2, 1, Fraction(1), 4, (20, 10), 0.9)
    assert run.tasks == (
        ("a", Efficiency(1, 1, Fraction(1, 4), 2, (20,), 0.9)),
        ("b", Efficiency(1, 0, Fraction(3, 4), 2, (10,), 0.9)),
    )
    assert run.to_json() == {
        "level": 0.9,
        "methods": {
            "successRate": "clopper-pearson",
            "perSuccess": "clopper-pearson-mapped",
            "latency": "order-statistic",
        },
        "suite": run.suite.to_json(),
        "tasks": [
            {"taskId": "a", **run.tasks[0][1].to_json()},
            {"taskId": "b", **run.tasks[1][1].to_json()},
        ],
    }
    assert run.to_json()["methods"] is not METHODS
    assert run_efficiency(detail).level == 0.95
    with pytest.raises(ValueError, match="confidence level"):
        run_efficiency(detail, 1.5)


def test_quantile_interval_rank_on_the_exact_boundary() -> None:
    # Level 0.5: α/2 = 0.25 exactly. Binomial(2, 1/2): P(B ≤ 0) = 1/4 ≤ 1/4, so r = 1 (the
    # bound holds with equality); P(B ≥ 2) = 1/4 ≤ 1/4, so t = 2.
    assert quantile_interval([10, 20], P50, 0.5) == Span(10.0, 20.0)
    # q = 3/4, one value: P(B ≤ 0) = 1/4 ≤ 1/4, so r = 1; P(B ≥ 1) = 3/4 > 1/4: no upper rank.
    assert quantile_interval([10], Fraction(3, 4), 0.5) == Span(10.0, None)


def test_quantile_interval_of_a_low_quantile_bounds_from_the_first_value() -> None:
    # q = 1/100, one value: P(B ≥ 1) = 0.01 ≤ 0.025, so t = 1 (upper bound X₍₁₎);
    # P(B ≤ 0) = 0.99 > 0.025, so no lower rank.
    assert quantile_interval([10], Fraction(1, 100), 0.95) == Span(0.0, 10.0)
    # Two values: P(B ≥ 1) = 1 − 0.99² = 0.0199 ≤ 0.025, so t = 1 still.
    assert quantile_interval([10, 20], Fraction(1, 100), 0.95) == Span(0.0, 10.0)
