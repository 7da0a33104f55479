"""The RFC 0244 §F verdict rule as a boundary table (:func:`wopeval.compare.verdict.decide`).

Each row is one clause of the rule: ``unchanged`` only on a passed equivalence check, checked
first; ``inconclusive`` when the method cannot decide (no pairs, undefined p, p ≥ alpha, runs
identical on every pair, a method that cannot reach alpha); else the sign of the estimate.
"""

from __future__ import annotations

import math

import pytest

from tests.compare.helpers import RUN_ID, pairs, summary, task
from wopeval.compare import compare_summaries
from wopeval.compare.methods import ZERO_TOLERANCE, MethodResult
from wopeval.compare.verdict import decide, identical_on_pairs

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
