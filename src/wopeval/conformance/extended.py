"""The opt-in extension legs (``--extended``): RFC 0244 rows the official suite leaves unprobed.

They are wopeval's own checks, reported under ``wopeval.ext.<name>`` and never under an RFC
requirement id, and they run only when asked for, so the eight RFC results are the same with or
without them. Their fixtures (``catalog.EXT_FIXTURES``) are gated exactly like the RFC fixtures
(:func:`wopeval.conformance.gating.gate_for`): their facet members, then their fixture id in
discovery ``fixtures``.

| Leg | Fixture · facet | RFC 0244 row |
| --- | --- | --- |
| ``fixtures-valid`` | all five · none (server-free) | — |
| ``efficiency-counted`` | ``conformance-eval-efficiency`` · ``trials`` | §C efficiency counts |
| ``efficiency-not-gated`` | ``conformance-eval-efficiency`` · ``trials`` | §C MUST NOT gate |
| ``cost-counts-every-trial`` | ``conformance-eval-efficiency`` · ``trials`` | §B Cost |
| ``trial-isolation`` | ``conformance-eval-isolation`` · ``trials`` | §B isolation (G3) |
| ``onmiss-live-reported`` | ``conformance-eval-onmiss-live`` · ``fixtureMatching`` | §D live |
| ``unmatched-keeps-score`` | ``conformance-eval-unmatched-score`` · ``trajectory`` | §A score |
| ``gating-score-mean`` | ``conformance-eval-gating-mean`` · all three | §B ``mean`` (0246) |

(RFC 0246 corrects §A–§B: the score stays the output score, the pass decisions read a gating
score. ``conformance-eval-gating-mean`` needs ``trials``, ``trajectory`` and ``fixtureMatching``.)
"""

from __future__ import annotations

from collections.abc import Mapping

from wopeval.conformance.catalog import (
    EFFICIENCY_FIXTURE,
    EXT_COST_EVERY_TRIAL,
    EXT_EFFICIENCY_COUNTED,
    EXT_EFFICIENCY_NOT_GATED,
    EXT_FIXTURES,
    EXT_FIXTURES_VALID,
    EXT_GATING_SCORE_MEAN,
    EXT_ONMISS_LIVE_REPORTED,
    EXT_TRIAL_ISOLATION,
    EXT_UNMATCHED_KEEPS_SCORE,
    EXTENSIONS,
    GATING_MEAN_FIXTURE,
    ISOLATION_FIXTURE,
    ONMISS_LIVE_FIXTURE,
    UNMATCHED_SCORE_FIXTURE,
    Fixture,
)
from wopeval.conformance.gating import (
    Captured,
    Gate,
    LegCheck,
    fixture_leg_results,
    leg_result,
)
from wopeval.conformance.legs.efficiency import (
    check_cost_every_trial,
    check_efficiency_counted,
    check_efficiency_not_gated,
)
from wopeval.conformance.legs.ext_fixtures import check_ext_fixtures
from wopeval.conformance.legs.gating_score import check_gating_mean, check_unmatched_keeps_score
from wopeval.conformance.legs.isolation import check_onmiss_live, check_trial_isolation
from wopeval.conformance.report import RequirementResult
from wopeval.conformance.suites import Suite, load_fixture

EXT_LEGS: tuple[tuple[str, Fixture, LegCheck], ...] = (
    (EXT_EFFICIENCY_COUNTED, EFFICIENCY_FIXTURE, check_efficiency_counted),
    (EXT_EFFICIENCY_NOT_GATED, EFFICIENCY_FIXTURE, check_efficiency_not_gated),
    (EXT_COST_EVERY_TRIAL, EFFICIENCY_FIXTURE, check_cost_every_trial),
    (EXT_TRIAL_ISOLATION, ISOLATION_FIXTURE, check_trial_isolation),
    (EXT_ONMISS_LIVE_REPORTED, ONMISS_LIVE_FIXTURE, check_onmiss_live),
    (EXT_UNMATCHED_KEEPS_SCORE, UNMATCHED_SCORE_FIXTURE, check_unmatched_keeps_score),
    (EXT_GATING_SCORE_MEAN, GATING_MEAN_FIXTURE, check_gating_mean),
)


def load_extensions() -> dict[Fixture, Suite | str]:
    """Read the extension fixtures; a string stands for one that could not be read."""
    suites: dict[Fixture, Suite | str] = {}
    for fixture in EXT_FIXTURES:
        try:
            suites[fixture] = load_fixture(fixture)
        except (OSError, ValueError) as exc:
            suites[fixture] = f"cannot read {fixture.file_name}: {exc}"
    return suites


def extension_results(
    suites: dict[Fixture, Suite | str],
    gates: Mapping[Fixture, Gate],
    captures: Mapping[Fixture, Captured],
) -> list[RequirementResult]:
    """One result per extension leg, in ``catalog.EXTENSIONS`` order."""
    ids = tuple(fixture.fixture_id for fixture in EXT_FIXTURES)
    results = [
        leg_result(EXT_FIXTURES_VALID, check_ext_fixtures(suites), ids),
        *fixture_leg_results(EXT_LEGS, gates, captures),
    ]
    results.sort(key=lambda result: EXTENSIONS.index(result.requirement))
    return results
