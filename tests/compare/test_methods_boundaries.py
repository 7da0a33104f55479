"""The §F methods at their boundaries (:mod:`wopeval.compare.methods`): the fewest pairs each
test is defined on, the zero tolerance, what every result names, and the bootstrap p-values
computed by their documented formulas from the same resamples.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.compare.helpers import pairs
from wopeval.compare.methods import (
    ZERO_TOLERANCE,
    _centred_p,
    _studentized_p,
    bootstrap_floor,
    bootstrap_resamples,
    differences,
    mcnemar,
    paired_bootstrap,
    paired_bootstrap_equivalence_interval,
    paired_t,
    paired_t_tost,
    sign_test,
)

MEAN_DIFF = "mean-task-score-difference"


@pytest.mark.parametrize("method", [paired_t, paired_bootstrap])
def test_0244_F_mean_difference_tests_are_defined_from_two_pairs(method: object) -> None:
    one = method(pairs([0.2], [0.9]))  # type: ignore[operator]
    assert (one.statistic_name, one.p_value, one.n_used) == (MEAN_DIFF, None, 1)
    two = method(pairs([0.2, 0.4], [0.9, 0.5]))  # type: ignore[operator]
    assert two.statistic_name == MEAN_DIFF
    assert two.p_value is not None
    assert two.n_used == 2


def test_0244_F_equivalence_interval_is_defined_from_two_pairs() -> None:
    assert paired_bootstrap_equivalence_interval(pairs([0.2], [0.9]), alpha=0.05) is None
    assert paired_bootstrap_equivalence_interval(pairs([0.2, 0.4], [0.9, 0.5]), alpha=0.05)


@pytest.mark.parametrize("method", [paired_t, paired_bootstrap])
def test_0244_F_a_constant_difference_at_the_zero_tolerance_is_no_difference(
    method: object,
) -> None:
    zero = method(pairs([0.0] * 4, [ZERO_TOLERANCE] * 4))  # type: ignore[operator]
    assert (zero.statistic_name, zero.p_value, zero.n_used) == (MEAN_DIFF, None, 4)
    shifted = method(pairs([0.0] * 4, [0.25] * 4))  # type: ignore[operator]
    assert shifted.statistic_name == MEAN_DIFF
    assert shifted.p_value is not None
    assert shifted.n_used == 4


def test_0244_F_differences_within_the_zero_tolerance_are_constant() -> None:
    # spread exactly ZERO_TOLERANCE: constant, mean within the tolerance: undefined
    result = paired_t(pairs([0.0, 0.0, 0.0], [0.0, ZERO_TOLERANCE, 0.0]))
    assert result.p_value is None


def test_0244_F_tost_at_the_margin_is_not_equivalent() -> None:
    assert paired_t_tost(pairs([0.5] * 3, [0.75] * 3), 0.25) == 1.0
    assert paired_t_tost(pairs([0.5] * 3, [0.75] * 3), math.nextafter(0.25, 1.0)) == 0.0


def test_0244_F_tost_is_the_larger_of_two_one_sided_tests() -> None:
    from scipy import stats

    for cand in ([0.55, 0.58, 0.47, 0.69, 0.52], [0.43, 0.52, 0.31, 0.64, 0.41]):
        table = pairs([0.5, 0.6, 0.4, 0.7, 0.5], cand)
        diffs = differences(table)
        lower = stats.ttest_1samp(diffs, -0.1, alternative="greater").pvalue
        upper = stats.ttest_1samp(diffs, 0.1, alternative="less").pvalue
        assert paired_t_tost(table, 0.1) == pytest.approx(max(lower, upper), rel=1e-12)
        assert lower != pytest.approx(upper)


def test_0244_F_paired_t_is_two_sided() -> None:
    from scipy import stats

    base = [0.6, 0.8, 0.9, 0.7, 1.0, 0.5]
    cand = [0.4, 0.7, 0.5, 0.6, 0.6, 0.5]
    result = paired_t(pairs(base, cand))
    two_sided = stats.ttest_rel(cand, base).pvalue
    assert result.p_value == pytest.approx(two_sided, rel=1e-12)
    assert result.statistic_name == MEAN_DIFF


def test_0244_F_sign_test_drops_differences_within_the_zero_tolerance() -> None:
    result = sign_test(pairs([0.0, 0.0, 0.0], [ZERO_TOLERANCE, 0.5, 0.5]))
    assert result.n_used == 2
    assert result.statistic_name == "net-sign-fraction"
    assert sign_test(pairs([0.0], [ZERO_TOLERANCE])).statistic_name == "net-sign-fraction"


def test_0244_F_sign_test_is_the_exact_two_sided_binomial_at_one_half() -> None:
    # 7 of 8 non-zero differences positive: p = 2 · (1 + 8) / 2^8 = 0.0703125
    table = pairs([0.5] * 8, [0.6] * 7 + [0.4])
    result = sign_test(table, confidence=0.9)
    assert result.p_value == pytest.approx(18 / 256, rel=1e-12)
    from scipy import stats

    ci = stats.binomtest(7, 8, 0.5).proportion_ci(confidence_level=0.9, method="exact")
    assert result.ci_low == pytest.approx(2 * ci.low - 1, rel=1e-12)
    assert result.ci_high == pytest.approx(2 * ci.high - 1, rel=1e-12)
    wilson = stats.binomtest(7, 8, 0.5).proportion_ci(confidence_level=0.9, method="wilson")
    assert result.ci_low != pytest.approx(2 * wilson.low - 1, rel=1e-6)


def test_0244_F_mcnemar_is_the_exact_two_sided_binomial_at_one_half() -> None:
    # b = 1, c = 6 discordant: p = 2 · (1 + 7) / 2^7 = 0.125
    base = [True] * 1 + [False] * 6 + [True] * 3
    cand = [False] * 1 + [True] * 6 + [True] * 3
    result = mcnemar(pairs([0.0] * 10, [0.0] * 10, base, cand))
    assert result.p_value == pytest.approx(16 / 128, rel=1e-12)
    assert (result.statistic_name, result.n_used) == ("pass-rate-difference", 7)
    assert result.estimate == pytest.approx(0.5)
    none = mcnemar(pairs([0.0], [0.0], [True], [True]))
    assert (none.statistic_name, none.p_value) == ("pass-rate-difference", None)


# --- the bootstrap's resamples and p-values -----------------------------------------------


def test_bootstrap_resamples_of_one_task_have_no_spread() -> None:
    means, sds = bootstrap_resamples(np.array([0.3]), seed=0, resamples=5)
    assert means.tolist() == [0.3] * 5
    assert sds.tolist() == [0.0] * 5


def test_bootstrap_resamples_report_the_sample_standard_deviation() -> None:
    # two tasks 0 and 1: a resample holding both has sd √(1/2) (ddof = 1), else 0
    _, sds = bootstrap_resamples(np.array([0.0, 1.0]), seed=0, resamples=200)
    assert set(np.round(sds, 12).tolist()) == {0.0, round(math.sqrt(0.5), 12)}


def _reference_p_values(diffs: list[float], seed: int, resamples: int) -> tuple[float, float]:
    """The two p-values by their docstrings' formulas, one resample at a time."""
    means, sds = bootstrap_resamples(np.array(diffs), seed=seed, resamples=resamples)
    n = len(diffs)
    mean = sum(diffs) / n
    se = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (n - 1))
    defined = extreme_t = extreme_c = 0
    for m, sd in zip(means.tolist(), sds.tolist(), strict=True):
        if abs(m - mean) >= abs(mean) or math.isclose(abs(m - mean), abs(mean), rel_tol=1e-9):
            extreme_c += 1
        if sd > ZERO_TOLERANCE:
            defined += 1
            t_star, t = abs(m - mean) * se, abs(mean) * sd  # |t*| ≥ |t|, cross-multiplied
            if t_star >= t or math.isclose(t_star, t, rel_tol=1e-9):
                extreme_t += 1
    return (1 + extreme_t) / (1 + defined), (1 + extreme_c) / (1 + resamples)


@pytest.mark.parametrize(
    "diffs",
    [
        [0.0, 1.0, 1.0, 0.0, 1.0, 1.0, 0.0, 1.0],  # pass/fail
        [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0],  # resample means of 0 tie with |mean(d)|
        [0.1, -0.2, 0.3, 0.25, -0.05, 0.4, 0.15, 0.2, -0.1, 0.3],
    ],
)
def test_0244_F_bootstrap_p_values_follow_their_formulas(diffs: list[float]) -> None:
    seed, resamples = 3, 400
    studentized, centred = _reference_p_values(diffs, seed, resamples)
    means, sds = bootstrap_resamples(np.array(diffs), seed=seed, resamples=resamples)
    assert _studentized_p(np.array(diffs), means, sds) == pytest.approx(studentized, rel=1e-12)
    assert _centred_p(np.array(diffs), means) == pytest.approx(centred, rel=1e-12)
    table = pairs([0.0] * len(diffs), diffs)
    result = paired_bootstrap(table, seed=seed, resamples=resamples)
    floor = bootstrap_floor(len(diffs), resamples)
    assert result.p_value == pytest.approx(max(floor, studentized, centred), rel=1e-12)
    assert result.statistic_name == MEAN_DIFF


def test_0244_F_bootstrap_resample_spread_at_the_zero_tolerance_is_no_spread() -> None:
    diffs = np.array([0.0, 0.5, 1.0])
    means = np.array([0.5, 0.0, 1.0])
    sds = np.array([ZERO_TOLERANCE, 0.5, 0.5])  # the first resample has no t*
    assert _studentized_p(diffs, means, sds) == pytest.approx((1 + 2) / (1 + 2))
    sds_all = np.array([0.5, 0.5, 0.5])
    assert _studentized_p(diffs, means, sds_all) == pytest.approx((1 + 2) / (1 + 3))


def test_0244_F_bootstrap_default_seed_is_zero() -> None:
    table = pairs([0.2, 0.9, 0.4, 0.7, 0.5, 0.6], [0.3, 0.7, 0.6, 0.6, 0.2, 0.9])
    assert paired_bootstrap(table, resamples=300) == paired_bootstrap(table, seed=0, resamples=300)
    assert paired_bootstrap_equivalence_interval(
        table, alpha=0.1, resamples=300
    ) == paired_bootstrap_equivalence_interval(table, alpha=0.1, seed=0, resamples=300)
    assert paired_bootstrap_equivalence_interval(
        table, alpha=0.1, resamples=300
    ) != paired_bootstrap_equivalence_interval(table, alpha=0.1, seed=1, resamples=300)
