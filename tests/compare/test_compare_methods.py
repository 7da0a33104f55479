"""The four RFC 0244 §F methods, each checked against hand-worked numbers and scipy directly."""

from __future__ import annotations

import itertools
import math
import statistics
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from tests.compare.helpers import pairs
from tests.hypothesis_counts import examples
from wopeval.compare.methods import (
    MethodResult,
    bootstrap_floor,
    bootstrap_resamples,
    differences,
    mcnemar,
    paired_bootstrap,
    paired_bootstrap_equivalence_interval,
    paired_t,
    paired_t_tost,
    sign_flip_floor,
    sign_test,
)
from wopeval.compare.pairing import PairedTask

# Six tasks. d = candidate − baseline = (0.2, 0.2, 0, 0.4, 0, 0.2).
# mean(d) = 1.0/6 = 0.166667; Σ(d − mean)² = 3·(1/30)² + 2·(1/6)² + (7/30)² = 102/900 = 0.113333;
# var = 0.113333/5 = 0.0226667, sd = 0.150555, se = sd/√6 = 0.0614636;
# t = 0.166667/0.0614636 = 2.7116 on 5 df → two-sided p = 2·P(T5 > 2.7116) ≈ 0.0422.
# 95% interval: mean ± t(0.975, 5)·se = 0.166667 ± 2.570582·0.0614636 = [0.00867, 0.32466].
SIX_BASE = [0.2, 0.4, 0.6, 0.4, 0.8, 0.0]
SIX_CAND = [0.4, 0.6, 0.6, 0.8, 0.8, 0.2]


def test_0244_F_paired_t_six_task_hand_example() -> None:
    result = paired_t(pairs(SIX_BASE, SIX_CAND))
    d = [c - b for b, c in zip(SIX_BASE, SIX_CAND, strict=True)]
    se = statistics.stdev(d) / math.sqrt(6)
    t = statistics.mean(d) / se
    assert t == pytest.approx(2.7116, abs=1e-4)
    assert result.estimate == pytest.approx(1 / 6)
    assert result.p_value == pytest.approx(2 * stats.t.sf(t, 5), rel=1e-12)
    assert result.p_value == pytest.approx(0.0422, abs=1e-4)
    assert result.p_value == pytest.approx(stats.ttest_rel(SIX_CAND, SIX_BASE).pvalue, rel=1e-12)
    half = stats.t.ppf(0.975, 5) * se
    assert (result.ci_low, result.ci_high) == pytest.approx((1 / 6 - half, 1 / 6 + half))
    assert result.ci_low == pytest.approx(0.00867, abs=1e-5)
    assert result.n_used == 6
    assert result.statistic_name == "mean-task-score-difference"


def test_0244_F_paired_t_confidence_level_widens_interval() -> None:
    narrow = paired_t(pairs(SIX_BASE, SIX_CAND), confidence=0.90)
    wide = paired_t(pairs(SIX_BASE, SIX_CAND), confidence=0.99)
    assert narrow.ci_low is not None
    assert wide.ci_low is not None
    assert wide.ci_low < narrow.ci_low
    assert narrow.p_value == wide.p_value


def test_0244_F_paired_t_undefined_cases() -> None:
    assert paired_t([]).p_value is None
    assert paired_t(pairs([0.2], [0.8])).p_value is None  # one pair: no degrees of freedom
    zero = paired_t(pairs([0.2, 0.4, 0.6], [0.2, 0.4, 0.6]))
    assert zero.p_value is None
    assert zero.estimate == 0.0


def test_0244_F_paired_t_constant_shift_takes_scipy_limit() -> None:
    # Every task moves by exactly +1: sd(d) = 0, t = +inf. scipy returns p = 0 (with a precision
    # warning we avoid raising); the method returns the same limit without calling it.
    base, cand = [0.0, 0.0, 0.0], [1.0, 1.0, 1.0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        reference = stats.ttest_rel(cand, base)
    result = paired_t(pairs(base, cand))
    assert result.p_value == float(reference.pvalue) == 0.0
    assert (result.estimate, result.ci_low, result.ci_high) == (1.0, 1.0, 1.0)


@pytest.mark.parametrize("margin", [0.3, 0.5])
def test_0244_F_paired_t_tost_hand_example(margin: float) -> None:
    # Same six tasks: TOST p = max(P(T5 > (mean + m)/se), P(T5 < (mean − m)/se)).
    # margin 0.3 → max(0.000315, 0.0411) = 0.0411; margin 0.5 → max(0.0000578, 0.00144) = 0.00144.
    d = [c - b for b, c in zip(SIX_BASE, SIX_CAND, strict=True)]
    se = statistics.stdev(d) / math.sqrt(6)
    mean = statistics.mean(d)
    expected = max(stats.t.sf((mean + margin) / se, 5), stats.t.cdf((mean - margin) / se, 5))
    result = paired_t_tost(pairs(SIX_BASE, SIX_CAND), margin)
    assert result == pytest.approx(expected, rel=1e-9)
    assert result == pytest.approx({0.3: 0.0411, 0.5: 0.00144}[margin], rel=1e-2)


def test_0244_F_paired_t_tost_degenerate_cases() -> None:
    assert paired_t_tost(pairs([0.5], [0.5]), 0.1) is None
    assert paired_t_tost(pairs([0.5, 0.2], [0.5, 0.2]), 0.1) == 0.0  # identical: inside margin
    assert paired_t_tost(pairs([0.1, 0.2], [0.6, 0.7]), 0.1) == 1.0  # constant 0.5 > margin


def test_0244_F_sign_test_hand_example() -> None:
    # Ten tasks: 7 differences positive, 1 negative, 2 zero (dropped) → n_used = 8.
    # p = 2·P(X ≥ 7 | Bin(8, 1/2)) = 2·(C(8,7) + C(8,8))/2^8 = 2·9/256 = 0.0703125.
    base = [0.0, 0.0, 0.2, 0.2, 0.4, 0.4, 0.6, 0.8, 0.5, 0.5]
    cand = [0.2, 0.6, 0.4, 1.0, 0.6, 0.8, 0.8, 0.6, 0.5, 0.5]
    result = sign_test(pairs(base, cand))
    assert result.p_value == pytest.approx(18 / 256, rel=1e-12)
    assert result.p_value == pytest.approx(stats.binomtest(7, 8).pvalue, rel=1e-12)
    assert result.estimate == (7 - 1) / 8
    assert result.n_used == 8
    interval = stats.binomtest(7, 8).proportion_ci(confidence_level=0.95, method="exact")
    assert result.ci_low == pytest.approx(2 * interval.low - 1)
    assert result.ci_high == pytest.approx(2 * interval.high - 1)


def test_0244_F_sign_test_ignores_magnitude() -> None:
    small = sign_test(pairs([0.5] * 6, [0.51] * 6))
    large = sign_test(pairs([0.0] * 6, [1.0] * 6))
    assert small.p_value == large.p_value == pytest.approx(2 / 64)


def test_0244_F_sign_test_all_zero_is_undefined() -> None:
    result = sign_test(pairs([0.3, 0.7], [0.3, 0.7]))
    assert (result.p_value, result.n_used, result.estimate) == (None, 0, 0.0)


def test_0244_F_mcnemar_hand_example() -> None:
    # Ten tasks: b = 1 (pass → fail), c = 6 (fail → pass), 3 concordant.
    # p = 2·P(X ≤ 1 | Bin(7, 1/2)) = 2·(1 + 7)/128 = 0.125. estimate = (6 − 1)/10 = 0.5.
    base_ok = [True, False, False, False, False, False, False, True, True, False]
    cand_ok = [False, True, True, True, True, True, True, True, True, False]
    result = mcnemar(pairs([0.5] * 10, [0.5] * 10, base_ok, cand_ok))
    assert result.p_value == pytest.approx(16 / 128, rel=1e-12)
    assert result.p_value == pytest.approx(stats.binomtest(6, 7).pvalue, rel=1e-12)
    assert (result.estimate, result.n_used) == (0.5, 7)
    assert (result.ci_low, result.ci_high) == (None, None)


def test_0244_F_mcnemar_reads_only_pass_decisions() -> None:
    # Eight tasks fail → pass, none the other way: p = 2/2^8 = 0.0078125 whatever the scores.
    result = mcnemar(pairs([0.9] * 8, [0.1] * 8, [False] * 8, [True] * 8))
    assert result.p_value == pytest.approx(2 / 256)
    assert result.estimate == 1.0


def test_0244_F_mcnemar_without_discordant_tasks_is_undefined() -> None:
    result = mcnemar(pairs([0.2, 0.9], [0.9, 0.2], [True, False], [True, False]))
    assert (result.p_value, result.n_used, result.estimate) == (None, 0, 0.0)


def test_0244_F_bootstrap_is_reproducible_with_a_seed() -> None:
    table = pairs(SIX_BASE * 2, SIX_CAND[::-1] + SIX_CAND)
    assert paired_bootstrap(table, seed=7) == paired_bootstrap(table, seed=7)
    first, other = paired_bootstrap(table, seed=7), paired_bootstrap(table, seed=8)
    assert (first.ci_low, first.ci_high, first.p_value) != (
        other.ci_low,
        other.ci_high,
        other.p_value,
    )


def test_0244_F_bootstrap_interval_is_the_percentile_interval() -> None:
    table = pairs(SIX_BASE, SIX_CAND)
    means, _ = bootstrap_resamples(differences(table), seed=3, resamples=4000)
    result = paired_bootstrap(table, seed=3, resamples=4000, confidence=0.90)
    assert (result.ci_low, result.ci_high) == tuple(np.quantile(means, [0.05, 0.95]))
    assert paired_bootstrap_equivalence_interval(table, alpha=0.05, seed=3, resamples=4000) == (
        result.ci_low,
        result.ci_high,
    )


def _exact_bootstrap(d: list[float]) -> list[tuple[float, float]]:
    """Every one of the n^n equally likely resamples: (mean, sd with ddof=1)."""
    return [(statistics.mean(s), statistics.stdev(s)) for s in itertools.product(d, repeat=len(d))]


def test_0244_F_bootstrap_matches_exhaustive_enumeration() -> None:
    # n = 4 tasks → 4^4 = 256 equally likely resamples, enumerated by hand. The Monte Carlo
    # distribution of resample means and the bootstrap-t p-value must match the exact ones.
    # Resamples with zero spread have no t* and are left out of both counts: 18 of them here (one
    # task four times: 4; only the two zero differences, not all one task: 2^4 − 2 = 14). The
    # exact p, 37/119 ≈ 0.311, is above the floor 2 / 2^4 = 0.125.
    base, cand = [0.2, 0.4, 0.0, 0.6], [0.4, 0.4, 0.6, 0.6]  # d = 0.2, 0, 0.6, 0
    d = [c - b for b, c in zip(base, cand, strict=True)]
    exact = _exact_bootstrap(d)
    mean, se = statistics.mean(d), statistics.stdev(d)
    defined = [(m, s) for m, s in exact if s > 1e-12]
    assert len(exact) - len(defined) == 18
    extreme = sum(1 for m, s in defined if abs(m - mean) * se >= abs(mean) * s * (1 - 1e-9))
    studentized = extreme / len(defined)
    # the centred p reads every resample's mean alone: 35/256 ≈ 0.137 here
    centred = sum(1 for m, _ in exact if abs(m - mean) >= abs(mean) * (1 - 1e-9)) / len(exact)
    assert centred == 35 / 256
    exact_p = max(studentized, centred)
    assert exact_p > 0.125
    resamples = 40_000
    result = paired_bootstrap(pairs(base, cand), seed=11, resamples=resamples)
    assert result.p_value is not None
    assert result.p_value == pytest.approx(exact_p, abs=4 * math.sqrt(exact_p / resamples) + 1e-4)
    means, _ = bootstrap_resamples(np.array(d), seed=11, resamples=resamples)
    for value in {round(m, 9) for m, _ in exact}:
        want = sum(1 for m, _ in exact if round(m, 9) == value) / len(exact)
        got = float(np.mean(np.isclose(means, value)))
        assert got == pytest.approx(want, abs=4 * math.sqrt(want / resamples) + 1e-4)


def test_0244_F_bootstrap_agrees_with_t_on_many_tasks() -> None:
    # With 400 tasks the bootstrap-t p and the percentile interval approach the t-test ones
    # (here t-test p ≈ 0.084, bootstrap p ≈ 0.085).
    rng = np.random.default_rng(5)
    base = rng.uniform(0, 0.8, 400)
    cand = np.clip(base + rng.normal(0.003, 0.15, 400), 0, 1)
    table = pairs(base.tolist(), cand.tolist())
    boot, t = paired_bootstrap(table, seed=1), paired_t(table)
    assert boot.p_value is not None
    assert t.p_value is not None
    assert boot.p_value == pytest.approx(t.p_value, rel=0.1)
    assert boot.ci_low == pytest.approx(t.ci_low, abs=0.001)
    assert boot.ci_high == pytest.approx(t.ci_high, abs=0.001)


def test_0244_F_bootstrap_degenerate_cases() -> None:
    assert paired_bootstrap(pairs([0.5], [0.9])).p_value is None
    assert paired_bootstrap(pairs([0.5, 0.1], [0.5, 0.1])).p_value is None
    # Every task shifted by 0.5: the most extreme table there is, so p is the floor: with 3 tasks
    # the exact 2 / 2^3 = 0.25; with 12 tasks 2 / 2^12 < 1 / (999 + 1), the Monte Carlo's own.
    shifted = paired_bootstrap(pairs([0.0, 0.2, 0.4], [0.5, 0.7, 0.9]), resamples=999)
    assert shifted.p_value == 0.25
    assert (shifted.ci_low, shifted.ci_high) == pytest.approx((0.5, 0.5))
    many = paired_bootstrap(pairs([0.0, 0.2, 0.4] * 4, [0.5, 0.7, 0.9] * 4), resamples=999)
    assert many.p_value == 1 / 1000


def test_0244_F_bootstrap_needs_both_of_its_tests_to_reject() -> None:
    # Ten single-trial tasks, two of them lost, none gained: d = (−1, −1, 0 × 8), t = −1.5.
    # Resamples with k copies of −1, k ~ Binomial(10, 0.2): the studentized test finds |t*| ≥ 1.5
    # only for k ≥ 5 (3.3%), of the 89% with a spread: p ≈ 0.037 alone. The centred test counts
    # |mean* − mean| ≥ 0.2, k = 0 or k ≥ 4: p ≈ 0.23. The sign test agrees: 2 of 2, p = 0.5.
    table = pairs([1.0, 1.0] + [1.0] * 8, [0.0, 0.0] + [1.0] * 8)
    result = paired_bootstrap(table, seed=0)
    assert result.p_value is not None
    assert result.p_value == pytest.approx(0.228, abs=0.02)


def test_0244_F_bootstrap_zero_spread_resamples_are_not_extreme() -> None:
    # The README's scenario: every task of the candidate fails, d = (−1, −0.8, −1). Of the 27
    # equally likely resamples of 3 tasks, 9 draw only equal differences (zero spread). Counted
    # as extreme they made p ≈ (9/27) whatever the data; left out, the p is the floor 0.25.
    three = paired_bootstrap(pairs([1.0, 0.8, 1.0], [0.0, 0.0, 0.0]), seed=0)
    assert three.p_value == 0.25
    # Seven tasks, six of them −1 and one −0.8: (6/7)^7 ≈ 34% of resamples draw only the −1s.
    # Counted as extreme those alone would give p ≈ 0.34; left out, no resample with a spread is
    # as extreme as the data, so p is the floor 2 / 2^7 = 1/64.
    seven = paired_bootstrap(pairs([1.0] * 6 + [0.8], [0.0] * 7), seed=0)
    assert seven.p_value == 2 / 2**7
    assert seven.estimate < 0


@pytest.mark.parametrize(
    ("n", "resamples", "floor"),
    [
        (0, 10_000, 1.0),
        (1, 10_000, 1.0),  # undefined with one task
        (2, 10_000, 0.5),
        (3, 10_000, 0.25),
        (5, 10_000, 0.0625),
        (6, 10_000, 0.03125),
        (20, 10_000, 1 / 10_001),  # 2 / 2^20 is below the Monte Carlo's resolution
        (20, 19, 0.05),
    ],
)
def test_0244_F_bootstrap_floor_table(n: int, resamples: int, floor: float) -> None:
    assert bootstrap_floor(n, resamples) == floor


@pytest.mark.parametrize(("n", "floor"), [(0, 1.0), (1, 1.0), (2, 0.5), (5, 0.0625), (6, 0.03125)])
def test_0244_F_sign_flip_floor_table(n: int, floor: float) -> None:
    assert sign_flip_floor(n) == floor


@given(st.lists(st.sampled_from([-1.0, -0.5, 0.0, 0.3, 1.0]), min_size=2, max_size=9))
@settings(max_examples=examples(40), deadline=None)
def test_0244_F_no_method_reports_below_its_floor(diffs: list[float]) -> None:
    table = pairs([0.0] * len(diffs), diffs, [True] * len(diffs), [d >= 0 for d in diffs])
    floor = sign_flip_floor(len(diffs))
    for result in (sign_test(table), mcnemar(table), paired_bootstrap(table, resamples=200)):
        assert result.p_value is None or result.p_value >= floor - 1e-12


def test_bootstrap_draws_in_slices_for_large_tables() -> None:
    # 2^20 // 50_000 = 20 rows a slice: 45 resamples take three draws and still give 45 rows.
    means, sds = bootstrap_resamples(np.linspace(-1, 1, 50_000), seed=0, resamples=45)
    assert means.shape == sds.shape == (45,)
    assert np.all(np.abs(means) < 0.05)


_GRID = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
_MEANS = st.lists(st.sampled_from(_GRID), max_size=15)


def _all_methods(table: list[PairedTask]) -> list[MethodResult]:
    return [
        paired_t(table),
        sign_test(table),
        mcnemar(table),
        paired_bootstrap(table, resamples=300),
    ]


@settings(max_examples=examples(60), deadline=None)
@given(data=st.data(), base=_MEANS)
def test_0244_F_swapping_runs_mirrors_every_method(data: st.DataObject, base: list[float]) -> None:
    size = len(base)
    cand = data.draw(st.lists(st.sampled_from(_GRID), min_size=size, max_size=size))
    forward, backward = _all_methods(pairs(base, cand)), _all_methods(pairs(cand, base))
    for there, back in zip(forward, backward, strict=True):
        assert back.estimate == pytest.approx(-there.estimate, abs=1e-12)
        assert back.n_used == there.n_used
        if there.p_value is None:
            assert back.p_value is None
        else:
            assert back.p_value == pytest.approx(there.p_value, rel=1e-9)
            assert 0.0 <= there.p_value <= 1.0
        if there.ci_low is not None and there.ci_high is not None:
            assert back.ci_high == pytest.approx(-there.ci_low, abs=1e-9)
            assert back.ci_low == pytest.approx(-there.ci_high, abs=1e-9)
