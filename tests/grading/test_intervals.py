"""The interval methods (wopeval.grading.intervals), with hand-worked numbers, and the plain-Python
quantiles checked against scipy."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from wopeval.grading.intervals import (
    check_level,
    clopper_pearson,
    cluster_t,
    mean_score_interval,
    pass_at_k_interval,
    pass_hat_k_interval,
    task_clopper_pearson,
    wilson,
)
from wopeval.grading.quantiles import beta_ppf, t_ppf
from wopeval.grading.stats import pass_at_k, pass_hat_k


def test_clopper_pearson_at_the_ends_is_closed_form() -> None:
    # c = n = 5 at 95 %: low = (0.025)^(1/5) = e^(ln 0.025 / 5) = e^(-3.6889/5) = 0.4782
    full = clopper_pearson(5, 5, 0.95)
    assert full.low == pytest.approx(0.4781762498950186, abs=1e-12)
    assert full.high == 1.0
    # c = 0 of n = 3: high = 1 − 0.025^(1/3) = 1 − 0.2924 = 0.7076; low exactly 0
    none = clopper_pearson(0, 3, 0.95)
    assert (none.low, none.low_exact) == (0.0, Fraction(0))
    assert none.high == pytest.approx(1 - 0.025 ** (1 / 3), abs=1e-12)


def test_clopper_pearson_inside() -> None:
    # c = 1 of n = 2 at 95 %: low solves 1 − (1 − p)² = 0.025, i.e. p = 1 − √0.975 = 0.012579;
    # high by symmetry √0.975 = 0.987421.
    one = clopper_pearson(1, 2, 0.95)
    assert one.low == pytest.approx(1 - math.sqrt(0.975), abs=1e-12)
    assert one.high == pytest.approx(math.sqrt(0.975), abs=1e-12)
    # 4 of 5 (the published table value, e.g. Newcombe 1998): [0.2836, 0.9949]
    four = clopper_pearson(4, 5)
    assert (round(four.low, 4), round(four.high, 4)) == (0.2836, 0.9949)
    assert four.low_exact < Fraction(four.low)  # rounded outward, never up


def test_wilson_by_hand() -> None:
    # 4 of 5, z = 1.959964, z² = 3.841459: centre (0.8 + z²/10)/(1 + z²/5) = 1.184146/1.768292
    # = 0.669654; half z·√(0.8·0.2/5 + z²/100)/1.768292 = 1.959964·0.265357/1.768292 = 0.294121
    interval = wilson(4, 5)
    assert interval.low == pytest.approx(0.669654 - 0.294121, abs=1e-5)
    assert interval.high == pytest.approx(0.669654 + 0.294121, abs=1e-5)
    assert (wilson(0, 4).low, wilson(4, 4).high) == (0.0, 1.0)


def test_pass_hat_k_maps_the_rate_bounds_through_p_to_the_k() -> None:
    # 5 of 5, k = 2: [0.47818², 1] = [0.22866, 1]; the estimate C(5,2)/C(5,2) = 1 is inside.
    interval = pass_hat_k_interval(5, 5, 2)
    assert interval.low == pytest.approx(0.4781762498950186**2, abs=1e-12)
    assert interval.high == 1.0
    # 1 of 5, k = 2: the estimate C(1,2)/C(5,2) = 0 is below L² = 0.00505² : widened to 0.
    widened = pass_hat_k_interval(1, 5, 2)
    assert (widened.low, widened.low_exact) == (0.0, Fraction(0))


def test_pass_at_k_maps_the_rate_bounds_through_one_minus_one_minus_p_to_the_k() -> None:
    # 0 of 3, k = 2: [0, 1 − (1 − 0.70760)²] = [0, 0.91451]
    interval = pass_at_k_interval(0, 3, 2)
    assert interval.low == 0.0
    assert interval.high == pytest.approx(1 - (0.025 ** (1 / 3)) ** 2, abs=1e-12)
    # 4 of 5, k = 3: the estimate 1 − C(1,3)/C(5,3) = 1 lies above 1 − (1 − 0.99495)³: widened
    assert pass_at_k_interval(4, 5, 3).high == 1.0


@given(n=st.integers(1, 40), data=st.data(), level=st.sampled_from([0.8, 0.9, 0.95, 0.99]))
def test_every_interval_holds_its_estimate_in_order(
    n: int, data: st.DataObject, level: float
) -> None:
    c = data.draw(st.integers(0, n))
    k = data.draw(st.integers(1, n))
    rate = clopper_pearson(c, n, level)
    assert 0 <= rate.low_exact <= rate.low <= c / n <= rate.high <= 1
    pairs = ((pass_at_k_interval(c, n, k, level), pass_at_k(n, c, k)),
             (pass_hat_k_interval(c, n, k, level), pass_hat_k(n, c, k)))  # fmt: skip
    for interval, point in pairs:
        assert interval.low_exact <= point
        assert interval.low <= float(point) <= interval.high
    wider = clopper_pearson(c, n, min(0.999, level + 0.005))
    assert (wider.low <= rate.low, wider.high >= rate.high) == (True, True)


def test_cluster_t_by_hand() -> None:
    # tasks 0.5, 1.0, 0.75: mean 0.75, s = 0.25, t(0.975; 2) = 4.302653, half = 4.302653·0.25/√3
    # = 0.621034: [0.128966, 1.371] clipped to [0.128966, 1]
    interval = cluster_t([0.5, 1.0, 0.75])
    assert interval is not None
    assert interval.low == pytest.approx(0.75 - 4.302652729749464 * 0.25 / math.sqrt(3), abs=1e-9)
    assert interval.high == 1.0
    assert cluster_t([0.9]) is None  # no spread to estimate from one task


def test_cluster_t_ties_are_exact() -> None:
    """Equal task scores have no spread: the lower bound is the exact mean, 0.7 (the float mean
    of three 0.7 is 0.7000000000000001 or 0.6999999999999998 depending on the order)."""
    interval = cluster_t([0.7, 0.7, 0.7])
    assert interval is not None
    assert interval.low_exact == Fraction(7, 10)


def test_task_clopper_pearson_by_hand() -> None:
    # one task scoring 1: 1/1's interval, [0.025, 1]; ten at 1: [0.025^(1/10), 1] = [0.6915, 1]
    one = task_clopper_pearson([1.0])
    assert one is not None
    assert one.low == pytest.approx(0.025, abs=1e-15)
    assert one.high == 1.0
    ten = task_clopper_pearson([1.0] * 10)
    assert ten is not None
    assert ten.low == pytest.approx(0.025 ** (1 / 10), abs=1e-12)
    # whole counts are the binomial's: 3 tasks passed of 5 is clopper_pearson(3, 5)
    three = task_clopper_pearson([1.0, 0.0, 1.0, 1.0, 0.0])
    exact = clopper_pearson(3, 5)
    assert three is not None
    assert (three.low, three.high, three.method) == (exact.low, exact.high, "task-clopper-pearson")
    # three tasks at 0.7: s = 2.1 of 3 (exactly: 7/10 three times), Beta⁻¹(0.025; 2.1, 1.9)
    alike = task_clopper_pearson([0.7, 0.7, 0.7])
    assert alike is not None
    assert alike.low == pytest.approx(stats.beta.ppf(0.025, 2.1, 1.9), abs=1e-10)
    assert alike.high < 1
    assert task_clopper_pearson([]) is None
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        task_clopper_pearson([1.5, 0.0])


def test_mean_score_interval_by_hand() -> None:
    # 0/1 scores: the pass rate's interval (a float mean 0.8 of 5 is 4 of 5 exactly)
    rate = clopper_pearson(4, 5)
    four = mean_score_interval(0.8, 5)
    assert (four.low, four.high) == (rate.low, rate.high)
    # three trials scoring 0.5, 0.6, 0.7: mean 0.6, s = 1.8 of 3: Beta⁻¹(0.025; 1.8, 2.2)
    graded = mean_score_interval(0.6, 3)
    assert graded.low == pytest.approx(stats.beta.ppf(0.025, 1.8, 2.2), abs=1e-10)
    assert graded.high == pytest.approx(stats.beta.ppf(0.975, 2.8, 1.2), abs=1e-10)


def test_levels_are_checked() -> None:
    for bad in (0.0, 1.0, -0.5, 95.0):
        with pytest.raises(ValueError, match="strictly between 0 and 1"):
            check_level(bad)
    with pytest.raises(ValueError, match="0 ≤ c ≤ n"):
        clopper_pearson(3, 2)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 10, 20, 100, 1000])
def test_beta_quantiles_match_scipy(n: int) -> None:
    for c in range(1, n + 1, max(1, n // 10)):
        for q in (0.005, 0.025, 0.1, 0.9, 0.975, 0.995):
            assert beta_ppf(q, c, n - c + 1) == pytest.approx(
                stats.beta.ppf(q, c, n - c + 1), abs=1e-10
            )


@pytest.mark.parametrize("df", [1, 2, 3, 9, 30, 1000])
def test_t_quantiles_match_scipy(df: int) -> None:
    for q in (0.5, 0.75, 0.9, 0.975, 0.995, 0.9995):
        assert t_ppf(q, df) == pytest.approx(stats.t.ppf(q, df), rel=1e-10, abs=1e-12)
