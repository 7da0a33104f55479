"""The interval and quantile rules one by one, at their edges (store-free, exact where the code
is exact): each case pins one decision of ``grading/intervals.py`` or ``grading/quantiles.py``."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from scipy import stats

from wopeval.grading import intervals, quantiles
from wopeval.grading.intervals import (
    Interval,
    check_level,
    clopper_pearson,
    cluster_t,
    mean_score_interval,
    pass_at_k_interval,
    pass_hat_k_interval,
    task_clopper_pearson,
    task_clopper_pearson_of_sum,
    wilson,
)
from wopeval.grading.quantiles import beta_ppf, betainc, t_ppf

_DOWN = 1 - Fraction(1e-12)  # the outward margin, as a rational


@pytest.fixture(autouse=True)
def _computed_afresh() -> None:
    """Each case computes its intervals and quantiles: an earlier test's cached result would
    hide the rule under test."""
    for module in (intervals, quantiles):
        for name in module.__all__:
            cache_clear = getattr(getattr(module, name), "cache_clear", None)
            if cache_clear is not None:
                cache_clear()


def test_interval_renders_its_bounds() -> None:
    interval = Interval(0.123456, 0.98765, Fraction(1, 10), "m", 0.9)
    assert interval.to_json() == {"low": 0.123456, "high": 0.98765}
    assert interval.text() == "[0.12, 0.99]"
    assert interval.text(4) == "[0.1235, 0.9877]"


def test_check_level_takes_ints_and_floats_only() -> None:
    assert check_level(0.5) == 0.5
    assert type(check_level(0.5)) is float
    for bad in ("0.5", None, 0, 1, 1.5, -0.1):
        with pytest.raises(ValueError, match="strictly between 0 and 1, got"):
            check_level(bad)  # type: ignore[arg-type]


def test_clopper_pearson_carries_its_level_method_and_rounded_low() -> None:
    # 1 of 1 at 80 %: low = (0.1)^(1/1) = 0.1, high 1
    one = clopper_pearson(1, 1, 0.8)
    assert (one.low, one.high, one.method, one.level) == (0.1, 1.0, "clopper-pearson", 0.8)
    assert one.low_exact == Fraction(0.1) * _DOWN
    # 0 of 1 at 80 %: [0, 1 − 0.1] = [0, 0.9]
    zero = clopper_pearson(0, 1, 0.8)
    assert (zero.low, zero.high, zero.low_exact) == (0.0, 0.9, Fraction(0))
    # 1 of 2 at 95 %: both bounds through the Beta quantile (c + 1 and n − c in the high one)
    half = clopper_pearson(1, 2)
    assert half.low == pytest.approx(stats.beta.ppf(0.025, 1, 2), abs=1e-13)
    assert half.high == pytest.approx(stats.beta.ppf(0.975, 2, 1), abs=1e-13)
    assert half.low_exact == Fraction(half.low) * _DOWN
    two = clopper_pearson(2, 5, 0.9)
    assert two.low == pytest.approx(stats.beta.ppf(0.05, 2, 4), abs=1e-13)
    assert two.high == pytest.approx(stats.beta.ppf(0.95, 3, 3), abs=1e-13)


def test_counts_are_checked_at_each_edge() -> None:
    for c, n in ((0, 0), (-1, 3), (4, 3), (1, 0)):
        with pytest.raises(ValueError, match=f"got c={c}, n={n}"):
            clopper_pearson(c, n)
    assert clopper_pearson(3, 3).high == 1.0


def test_wilson_to_the_last_digit() -> None:
    z = 1.959963984540054  # NormalDist().inv_cdf(0.975)
    for c, n in ((1, 4), (3, 4), (2, 7)):
        p = c / n
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
        interval = wilson(c, n)
        assert interval.low == pytest.approx(centre - half, abs=1e-15)
        assert interval.high == pytest.approx(centre + half, abs=1e-15)
        assert interval.low_exact == Fraction(interval.low) * _DOWN
        assert (interval.method, interval.level) == ("wilson", 0.95)
    # 0 of 1: low 0 exactly; high (z²/2 + z·√(z²/4))/(1 + z²) = z²/(1 + z²)
    zero = wilson(0, 1)
    assert (zero.low, zero.low_exact) == (0.0, Fraction(0))
    assert zero.high == pytest.approx(z * z / (1 + z * z), abs=1e-15)
    # 1 of 1: high 1 exactly, low 1/(1 + z²)
    one = wilson(1, 1, 0.9)
    assert one.high == 1.0
    z90 = 1.6448536269514722
    assert one.low == pytest.approx(1 / (1 + z90 * z90), abs=1e-15)
    assert one.level == 0.9
    with pytest.raises(ValueError, match="0 ≤ c ≤ n"):
        wilson(2, 1)


def test_mapped_intervals_carry_method_level_and_bounds() -> None:
    # 1 of 3 at 90 %, k = 2: the estimate 1 − C(2,2)/C(3,2) = 2/3 lies inside the mapped bounds
    rate = clopper_pearson(1, 3, 0.9)
    at = pass_at_k_interval(1, 3, 2, 0.9)
    assert at.low == pytest.approx(1 - (1 - rate.low) ** 2, abs=1e-15)
    assert at.high == pytest.approx(1 - (1 - rate.high) ** 2, abs=1e-15)
    assert (at.method, at.level) == ("clopper-pearson-mapped", 0.9)
    assert at.low_exact == Fraction(at.low) * _DOWN
    hat = pass_hat_k_interval(1, 3, 2, 0.9)
    assert hat.high == pytest.approx(rate.high**2, abs=1e-15)
    assert (hat.method, hat.level) == ("clopper-pearson-mapped", 0.9)
    # the estimate C(1,2)/C(3,2) = 0 is below L²: widened to 0, low_exact the estimate 0
    assert (hat.low, hat.low_exact) == (0.0, Fraction(0))
    # 2 of 2, k = 1: pass^1 is the rate itself
    same = pass_hat_k_interval(2, 2, 1, 0.9)
    assert (same.low, same.high) == (clopper_pearson(2, 2, 0.9).low, 1.0)
    assert same.low_exact == Fraction(same.low) * _DOWN


def test_cluster_t_two_tasks_exactly() -> None:
    # 0.25 and 0.75: mean 1/2, s² = 1/8, half = t(0.95; 1)·√(1/16) = 6.313752·0.25 = 1.578438
    interval = cluster_t([0.25, 0.75], 0.9)
    assert interval is not None
    half = stats.t.ppf(0.95, 1) * 0.25
    assert (interval.low, interval.high, interval.low_exact) == (0.0, 1.0, Fraction(0))
    assert (interval.method, interval.level) == ("cluster-t", 0.9)
    # 0.5 and 0.6 at 50 %: half = t(0.75; 1)·√(0.005/2) = 1·0.05
    near = cluster_t([0.5, 0.6], 0.5)
    assert near is not None
    assert near.low == pytest.approx(0.5, abs=1e-12)
    assert near.high == pytest.approx(0.6, abs=1e-12)
    mean = Fraction(11, 20)
    s = 2 * Fraction(1, 20) ** 2
    exact_half = t_ppf(0.75, 1) * math.sqrt(s / 2)
    assert near.low_exact == mean - Fraction(exact_half) * (1 + Fraction(1e-12))
    assert half > 1
    assert cluster_t([]) is None


def test_task_clopper_pearson_edges() -> None:
    with pytest.raises(ValueError, match=r"^task values must lie in \[0, 1\]$"):
        task_clopper_pearson([-0.1])
    # a fractional sum keeps its own Beta quantiles and level
    quarter = task_clopper_pearson([0.25, 1.0], 0.9)
    assert quarter is not None
    assert quarter.low == pytest.approx(stats.beta.ppf(0.05, 1.25, 1.75), abs=1e-10)
    assert quarter.high == pytest.approx(stats.beta.ppf(0.95, 2.25, 0.75), abs=1e-10)
    assert quarter.low_exact == Fraction(quarter.low) * _DOWN
    assert (quarter.method, quarter.level) == ("task-clopper-pearson", 0.9)
    # whole sums: the binomial's interval, level and rounded low carried over
    whole = task_clopper_pearson([1.0, 0.0], 0.8)
    cp = clopper_pearson(1, 2, 0.8)
    assert whole is not None
    assert (whole.low_exact, whole.level) == (cp.low_exact, 0.8)
    # repeated values count once each time they occur: 0.5 twice and 1 is 2 of 3
    assert task_clopper_pearson([0.5, 0.5, 1.0]) == task_clopper_pearson_of_sum(Fraction(2), 3)


def test_task_clopper_pearson_of_sum_checks_its_range() -> None:
    for total, m in ((Fraction(0), 0), (Fraction(-1, 2), 2), (Fraction(5, 2), 2)):
        with pytest.raises(ValueError, match=f"a sum of {m} values in \\[0, 1\\] lies in"):
            task_clopper_pearson_of_sum(total, m)
    assert task_clopper_pearson_of_sum(Fraction(2), 2).high == 1.0
    assert task_clopper_pearson_of_sum(Fraction(0), 2).low == 0.0


def test_mean_score_interval_clamps_and_snaps() -> None:
    # a mean a hair off a whole count snaps to it; a hair over 1 clamps to n of n
    assert mean_score_interval(0.8000000000000002, 5) == mean_score_interval(0.8, 5)
    assert mean_score_interval(1.0000000001, 2).low == clopper_pearson(2, 2).low
    assert mean_score_interval(-0.5, 2).high == clopper_pearson(0, 2).high
    # 1e-8 off is not a hair: a fractional count of its own
    off = mean_score_interval(0.5 + 1e-8, 2, 0.9)
    assert off.low != clopper_pearson(1, 2, 0.9).low
    assert off.low == pytest.approx(stats.beta.ppf(0.05, 1 + 2e-8, 2 - 2e-8), abs=1e-10)
    assert off.level == 0.9


def test_betainc_on_both_branches_and_the_ends() -> None:
    assert (betainc(2, 3, 0.0), betainc(2, 3, -1), betainc(2, 3, 1.0), betainc(2, 3, 2)) == (
        0.0, 0.0, 1.0, 1.0,
    )  # fmt: skip
    # I_x(1, 1) = x; I_x(2, 1) = x²; I_x(1, 2) = 1 − (1 − x)²
    for x in (0.1, 0.3, 0.5, 0.7, 0.9):
        assert betainc(1, 1, x) == pytest.approx(x, abs=1e-14)
        assert betainc(2, 1, x) == pytest.approx(x * x, abs=1e-14)
        assert betainc(1, 2, x) == pytest.approx(1 - (1 - x) ** 2, abs=1e-14)
    for a, b in ((0.5, 0.5), (2.1, 1.9), (5, 3), (30, 40), (0.5, 200), (200, 0.5)):
        for x in (0.001, 0.2, 0.42, 0.5, 0.58, 0.8, 0.999):
            assert betainc(a, b, x) == pytest.approx(stats.beta.cdf(x, a, b), abs=1e-13)


def test_beta_ppf_inverts_betainc() -> None:
    assert beta_ppf(0.5, 1, 1) == pytest.approx(0.5, abs=1e-15)
    assert beta_ppf(0.25, 2, 1) == pytest.approx(0.5, abs=1e-15)
    # q = 0: every cdf value is ≥ q, so the bisection halves [0, 1] its full 200 times
    assert beta_ppf(0.0, 2, 3) == 2.0**-201
    for q in (1e-6, 0.3, 0.999999):
        assert beta_ppf(q, 3.5, 0.75) == pytest.approx(stats.beta.ppf(q, 3.5, 0.75), abs=1e-13)


def test_t_ppf_range_and_values() -> None:
    for bad in (0.4999, 1.0, 1.5, -1):
        with pytest.raises(ValueError, match="t_ppf takes q in"):
            t_ppf(bad, 3)
    assert t_ppf(0.5, 4) == pytest.approx(0.0, abs=1e-12)
    # df 1 is Cauchy: t(q) = tan(π(q − 1/2)); df 2: t(q) = (2q − 1)·√(2/(4q(1 − q)))
    for q in (0.6, 0.75, 0.9, 0.99, 0.9999):
        assert t_ppf(q, 1) == pytest.approx(math.tan(math.pi * (q - 0.5)), rel=1e-12)
        assert t_ppf(q, 2) == pytest.approx(
            (2 * q - 1) * math.sqrt(2 / (4 * q * (1 - q))), rel=1e-12
        )
    assert t_ppf(0.75, 1) == pytest.approx(1.0, abs=1e-13)


def test_betainc_switches_to_the_accurate_tail_at_a_plus_one_over_a_plus_b_plus_two() -> None:
    """I(0.5, 200): the switch is at 1.5/202.5 = 0.00741. Each side's continued fraction is the
    accurate one there (to 2e-15 of scipy); the other side's is off by 4e-14 or more."""
    for x in (0.0004938271604938275, 0.008395061728395062, 0.01111111111111111):
        assert betainc(0.5, 200, x) == pytest.approx(stats.beta.cdf(x, 0.5, 200), abs=2e-14)
