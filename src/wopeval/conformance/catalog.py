"""What the kit checks: the RFC 0244 requirement ids and the three eval-suite fixtures.

With ``--extended``, also wopeval's opt-in extension legs (ids ``wopeval.ext.<name>``, never RFC
requirement ids) and their five fixtures (``EXTENSIONS``, ``EXT_FIXTURES``).

Each host leg is gated on its fixture's ``agents.evalSuite`` members (RFC 0244 §G; one member,
except for an extension fixture that mixes features) and on its fixture id in discovery
``fixtures``; every fixture task targets the scripted agent
``core.conformance.agents.scripted`` (docs/agents.md), so each trajectory is known in advance.
"""

from __future__ import annotations

from dataclasses import dataclass

SCRIPTED_AGENT_ID = "core.conformance.agents.scripted"

TRAJECTORY_GRADED = "0244.trajectory-graded"
TRIALS_PER_TASK = "0244.trials-per-task"
TRIAL_STATS_FORMULA = "0244.trial-stats-formula"
FIXTURE_MISS_FAILS = "0244.fixture-miss-fails"
WIRE_SHAPE = "0244.wire-shape"
CONTENT_FREE = "0244.content-free"
FIXTURES_VALID = "0244.fixtures-valid"
UNADVERTISED_REFUSED = "0244.unadvertised-feature-refused"

REQUIREMENTS: tuple[str, ...] = (
    FIXTURES_VALID,
    TRAJECTORY_GRADED,
    TRIALS_PER_TASK,
    TRIAL_STATS_FORMULA,
    FIXTURE_MISS_FAILS,
    WIRE_SHAPE,
    CONTENT_FREE,
    UNADVERTISED_REFUSED,
)


@dataclass(frozen=True)
class Fixture:
    """One eval-suite fixture: its discovery id, suite id, and the facets its leg is gated on.

    ``facet`` is the member the fixture is about; ``also`` the further members it needs.
    """

    fixture_id: str
    facet: str
    version: str = "1.0.0"
    also: tuple[str, ...] = ()

    @property
    def facets(self) -> tuple[str, ...]:
        """Every ``agents.evalSuite`` member the fixture needs, ``facet`` first."""
        return (self.facet, *self.also)

    @property
    def suite_id(self) -> str:
        return f"core.openwop.evals.{self.fixture_id}"

    @property
    def file_name(self) -> str:
        return f"{self.fixture_id}.json"

    @property
    def suite_ref(self) -> str:
        """The ``evalSuiteRef`` the kit sends on ``POST /runs``."""
        return f"suite://{self.suite_id}@{self.version}"


TRAJECTORY_FIXTURE = Fixture("conformance-eval-trajectory", "trajectory")
TRIALS_FIXTURE = Fixture("conformance-eval-trials", "trials")
FIXTURE_MISS_FIXTURE = Fixture("conformance-eval-fixture-miss", "fixtureMatching")
FIXTURES: tuple[Fixture, ...] = (TRAJECTORY_FIXTURE, TRIALS_FIXTURE, FIXTURE_MISS_FIXTURE)

# --- Extension legs (opt-in, ``--extended``): wopeval's own ids, never RFC requirement ids. ---
# They probe RFC 0244 rows the official suite leaves unprobed (its Falsifiability table:
# "witnessable, not probed", and trial isolation, "seam-gated … deferred (G3)").

EXT_PREFIX = "wopeval.ext."
EXT_FIXTURES_VALID = EXT_PREFIX + "fixtures-valid"
EXT_EFFICIENCY_COUNTED = EXT_PREFIX + "efficiency-counted"
EXT_EFFICIENCY_NOT_GATED = EXT_PREFIX + "efficiency-not-gated"
EXT_COST_EVERY_TRIAL = EXT_PREFIX + "cost-counts-every-trial"
EXT_TRIAL_ISOLATION = EXT_PREFIX + "trial-isolation"
EXT_ONMISS_LIVE_REPORTED = EXT_PREFIX + "onmiss-live-reported"
EXT_UNMATCHED_KEEPS_SCORE = EXT_PREFIX + "unmatched-keeps-score"
EXT_GATING_SCORE_MEAN = EXT_PREFIX + "gating-score-mean"

EXTENSIONS: tuple[str, ...] = (
    EXT_FIXTURES_VALID,
    EXT_EFFICIENCY_COUNTED,
    EXT_EFFICIENCY_NOT_GATED,
    EXT_COST_EVERY_TRIAL,
    EXT_TRIAL_ISOLATION,
    EXT_ONMISS_LIVE_REPORTED,
    EXT_UNMATCHED_KEEPS_SCORE,
    EXT_GATING_SCORE_MEAN,
)

EFFICIENCY_FIXTURE = Fixture("conformance-eval-efficiency", "trials")
ISOLATION_FIXTURE = Fixture("conformance-eval-isolation", "trials")
ONMISS_LIVE_FIXTURE = Fixture("conformance-eval-onmiss-live", "fixtureMatching")
UNMATCHED_SCORE_FIXTURE = Fixture("conformance-eval-unmatched-score", "trajectory")
GATING_MEAN_FIXTURE = Fixture(
    "conformance-eval-gating-mean", "trials", also=("trajectory", "fixtureMatching")
)
EXT_FIXTURES: tuple[Fixture, ...] = (
    EFFICIENCY_FIXTURE,
    ISOLATION_FIXTURE,
    ONMISS_LIVE_FIXTURE,
    UNMATCHED_SCORE_FIXTURE,
    GATING_MEAN_FIXTURE,
)
