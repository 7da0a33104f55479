"""What the kit checks: the RFC 0244 requirement ids and the three eval-suite fixtures.

Each host leg is gated on one ``agents.evalSuite`` member (RFC 0244 §G) and on its fixture id in
discovery ``fixtures``; every fixture task targets the scripted agent
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
    """One eval-suite fixture: its discovery id, suite id, and the facet its leg is gated on."""

    fixture_id: str
    facet: str
    version: str = "1.0.0"

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
