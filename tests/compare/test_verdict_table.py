"""The RFC 0244 §F verdict rule as a boundary table (:func:`wopeval.compare.verdict.decide`).

Each row is one clause of the rule: ``unchanged`` only on a passed equivalence check, checked
first; ``inconclusive`` when the method cannot decide (no pairs, undefined p, p ≥ alpha, runs
identical on every pair, a method that cannot reach alpha); else the sign of the estimate.
"""

from __future__ import annotations

import math

import pytest

from tests.compare.helpers import RUN_ID, pairs, summary, task, trial_task
from wopeval.compare import compare_summaries
from wopeval.compare.methods import (
    ZERO_TOLERANCE,
    MethodResult,
    paired_bootstrap_equivalence_interval,
)
from wopeval.compare.verdict import choose_method, decide, identical_on_pairs, reach

ALPHA = 0.05
BELOW = math.nextafter(ALPHA, 0.0)


def _result(p: float | None, estimate: float = -0.2, n_used: int = 8) -> MethodResult:
    return MethodResult("mean-task-score-difference", estimate, p, None, None, n_used)


@pytest.mark.parametrize(
    ("result", "equivalent", "identical", "decidable", "verdict"),
    [
        (_result(BELOW, -0.2), None, False, True, "regressed"),
        (_result(BELOW, 0.2), None, False, True, "improved"),
        (_result(ALPHA, -0.2), None, False, True, "inconclusive"),  # p = alpha: not below
        (_result(math.nextafter(ALPHA, 1.0)), None, False, True, "inconclusive"),
        (_result(None), None, False, True, "inconclusive"),  # undefined test
        (_result(0.001, n_used=0), None, False, True, "inconclusive"),  # no pairs read
        (_result(0.001, n_used=1), None, False, True, "regressed"),
        (_result(0.001, estimate=0.0), None, False, True, "inconclusive"),  # no direction
        (_result(0.001), None, True, True, "inconclusive"),  # identical on every pair
        (_result(0.001), False, False, True, "regressed"),  # equivalence check failed
        (_result(0.001), True, False, True, "unchanged"),  # equivalence wins, checked first
        (_result(None), True, True, True, "unchanged"),
        (_result(0.001), True, False, False, "inconclusive"),  # cannot reach alpha: never more
        (_result(0.001), None, False, False, "inconclusive"),
    ],
)
def test_0244_F_verdict_boundary_table(
    result: MethodResult, equivalent: bool | None, identical: bool, decidable: bool, verdict: str
) -> None:
    got = decide(
        result, alpha=ALPHA, equivalent=equivalent, identical=identical, decidable=decidable
    )
    assert got == verdict


def test_0244_F_decide_defaults_to_a_method_that_can_decide() -> None:
    assert decide(_result(BELOW), alpha=ALPHA, equivalent=None, identical=False) == "regressed"


@pytest.mark.parametrize(
    ("base", "cand", "base_passed", "cand_passed", "identical"),
    [
        ([0.5, 1.0], [0.5, 1.0], None, None, True),
        ([0.5], [0.5 + ZERO_TOLERANCE / 2], None, None, True),  # float noise is equality
        ([0.0], [ZERO_TOLERANCE], None, None, True),  # at the tolerance
        ([0.0], [math.nextafter(ZERO_TOLERANCE, 1.0)], None, None, False),
        ([0.5], [0.5 + 1e-9], None, None, False),
        ([0.5], [0.5 - 1e-9], None, None, False),
        ([0.5, 0.5], [0.5, 0.5], [True, True], [True, False], False),  # one decision differs
        ([], [], None, None, True),
    ],
)
def test_0244_F_runs_identical_on_every_pair(
    base: list[float],
    cand: list[float],
    base_passed: list[bool] | None,
    cand_passed: list[bool] | None,
    identical: bool,
) -> None:
    assert identical_on_pairs(pairs(base, cand, base_passed, cand_passed)) is identical


@pytest.mark.parametrize(
    "kwargs",
    [
        {"alpha": math.nextafter(0.0, 1.0)},
        {"alpha": math.nextafter(1.0, 0.0)},
        {"equivalence_margin": math.nextafter(0.0, 1.0)},
        {"equivalence_margin": 0.1, "alpha": math.nextafter(0.5, 0.0)},
        {"resamples": 1},
    ],
)
def test_arguments_just_inside_their_bounds_are_accepted(kwargs: dict[str, float]) -> None:
    run = summary([task("a", 0.5), task("b", 1.0)])
    comparison = compare_summaries(run, run, RUN_ID, method="paired-bootstrap", **kwargs)  # type: ignore[arg-type]
    assert comparison.regression.verdict in {"inconclusive", "unchanged"}


# --- what each clause reads ----------------------------------------------------------------


def test_0244_F_alternatives_are_methods_below_alpha_not_at_it() -> None:
    # 3 pairs at alpha 0.25: the exact tests' smallest p is 2 / 2^3 = 0.25, equal to alpha
    can = reach("paired-bootstrap", 3, alpha=0.25)
    assert not can.decidable
    assert can.alternatives == ("paired-t",)


def test_0244_F_one_trial_per_task_in_a_trials_block_is_a_pass_fail_table() -> None:
    binary = summary([trial_task(f"t{i}", 1, i % 2) for i in range(8)])
    assert choose_method(binary, binary)[0] == "mcnemar"


def test_0244_F_reach_reads_the_resamples_given() -> None:
    # B = 10 resamples cannot give a p below 1 / 11 > 0.05, however many tasks regress
    baseline = summary([task(f"t{i}", 1.0) for i in range(20)])
    candidate = summary([task(f"t{i}", 0.0) for i in range(20)])
    comparison = compare_summaries(
        baseline, candidate, RUN_ID, method="paired-bootstrap", resamples=10
    )
    assert comparison.reach is not None
    assert not comparison.reach.decidable
    assert comparison.regression.verdict == "inconclusive"


def test_0244_F_default_seed_is_zero() -> None:
    """docs/regression.md: the resamples come from ``np.random.default_rng(seed)``, seed 0."""
    base = [0.2, 0.9, 0.4, 0.7, 0.5, 0.6, 0.3, 0.8]
    cand = [0.3, 0.7, 0.6, 0.6, 0.2, 0.9, 0.2, 0.5]
    baseline = summary([task(f"t{i}", s) for i, s in enumerate(base)])
    candidate = summary([task(f"t{i}", s) for i, s in enumerate(cand)])
    default = compare_summaries(baseline, candidate, RUN_ID, method="paired-bootstrap")
    seeded = compare_summaries(baseline, candidate, RUN_ID, method="paired-bootstrap", seed=0)
    other = compare_summaries(baseline, candidate, RUN_ID, method="paired-bootstrap", seed=1)
    assert default.result == seeded.result
    assert default.result != other.result


@pytest.mark.parametrize(("seed", "resamples"), [(7, 200), (0, 300)])
def test_0244_F_equivalence_interval_is_drawn_with_the_seed_and_resamples_given(
    seed: int, resamples: int
) -> None:
    base = [0.2, 0.9, 0.4, 0.7, 0.5, 0.6, 0.3, 0.8]
    cand = [0.25, 0.85, 0.45, 0.7, 0.45, 0.65, 0.3, 0.8]
    interval = paired_bootstrap_equivalence_interval(
        pairs(base, cand), alpha=ALPHA, seed=seed, resamples=resamples
    )
    assert interval is not None
    edge = max(-interval[0], interval[1])
    baseline = summary([task(f"t{i}", s) for i, s in enumerate(base)])
    candidate = summary([task(f"t{i}", s) for i, s in enumerate(cand)])

    def equivalent(margin: float) -> bool | None:
        return compare_summaries(
            baseline,
            candidate,
            RUN_ID,
            method="paired-bootstrap",
            seed=seed,
            resamples=resamples,
            equivalence_margin=margin,
        ).equivalent

    assert equivalent(edge) is False  # the interval must lie strictly inside
    assert equivalent(math.nextafter(edge, 1.0)) is True


@pytest.mark.parametrize(
    ("margin", "verdict"), [(0.25, "regressed"), (math.nextafter(0.25, 1.0), "unchanged")]
)
def test_0244_F_bootstrap_interval_low_edge_at_minus_margin_is_not_unchanged(
    margin: float, verdict: str
) -> None:
    # every one of 8 tasks loses exactly 0.25: the (1 − 2α) interval is [−0.25, −0.25]
    baseline = summary([task(f"t{i}", 0.75) for i in range(8)])
    candidate = summary([task(f"t{i}", 0.5) for i in range(8)])
    comparison = compare_summaries(
        baseline, candidate, RUN_ID, method="paired-bootstrap", equivalence_margin=margin
    )
    assert comparison.regression.verdict == verdict


def test_0244_F_equivalence_needs_both_ends_inside_the_margin() -> None:
    # one task loses a lot, the rest gain a little: the interval's low end is far below −margin
    base = [1.0, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]
    cand = [0.0, 0.52, 0.52, 0.52, 0.52, 0.52, 0.52, 0.52]
    interval = paired_bootstrap_equivalence_interval(pairs(base, cand), alpha=ALPHA)
    assert interval is not None
    low, high = interval
    assert -low > 0.1 > high > -0.1
    baseline = summary([task(f"t{i}", s) for i, s in enumerate(base)])
    candidate = summary([task(f"t{i}", s) for i, s in enumerate(cand)])
    comparison = compare_summaries(
        baseline, candidate, RUN_ID, method="paired-bootstrap", equivalence_margin=0.1
    )
    assert comparison.equivalent is False


def test_0244_F_definitions_are_checked_only_when_both_runs_have_digests() -> None:
    run = summary([task("a", 1.0), task("b", 1.0)])
    digests = {"a": "x", "b": "y"}
    one = compare_summaries(run, run, RUN_ID, baseline_digests=digests)
    other = compare_summaries(run, run, RUN_ID, candidate_digests=digests)
    both = compare_summaries(run, run, RUN_ID, baseline_digests=digests, candidate_digests=digests)
    assert (one.definitions_checked, other.definitions_checked) == (False, False)
    assert both.definitions_checked
