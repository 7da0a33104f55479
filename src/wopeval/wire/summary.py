"""The v2 ``EvalSummary`` (RFC 0081 §C) with the RFC 0244 optional fields.

Content-free by construction (RFC 0244 §H): every field is an id, an enum, a count, a score or a
scalar. Every object is closed, so a trajectory block naming tools cannot even be built.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field

from wopeval.wire.vocab import (
    METHOD_PATTERN,
    SEMVER_PATTERN,
    SUITE_ID_PATTERN,
    Closed,
    ModelClass,
    NonNegFloat,
    NonNegInt,
    TaskId,
    TrajectoryMode,
    UnitFloat,
    Verdict,
)
from wopeval.wire.vocab import WIRE_RUN_ID_PATTERN as RUN_ID_PATTERN

__all__ = ["METHOD_PATTERN", "RUN_ID_PATTERN", "Verdict"]  # re-exported vocabulary (+ models)


class TrajectoryBlock(Closed):
    """RFC 0244 §A reporting block: counts only. With trials it describes the last trial."""

    mode: TrajectoryMode
    matched: bool
    expectedCount: NonNegInt
    observedCount: NonNegInt
    matchedCount: NonNegInt
    forbiddenCount: NonNegInt


class TrialsBlock(Closed):
    """RFC 0244 §B per-task trial statistics."""

    n: Annotated[int, Field(ge=1)]
    passedCount: NonNegInt
    meanScore: UnitFloat
    passAtK: UnitFloat
    passHatK: UnitFloat


class Efficiency(Closed):
    """RFC 0244 §C: means over the task's trials, counted inside the brackets. Never gated."""

    toolCallCount: NonNegFloat
    modelCallCount: NonNegFloat
    inputTokens: NonNegFloat
    outputTokens: NonNegFloat


class SafetyFinding(Closed):
    kind: Annotated[str, Field(min_length=1)]
    severity: Literal["low", "medium", "high", "critical"]


class FinalStateBlock(Closed):
    """A task's ``x-wopeval-finalState`` outcome: counts only, never the state (RFC 0244 §H).
    ``matched``: every trial that ran ended in the asserted state; ``mismatchCount``: how many
    did not (a trial whose state was not recorded counts as not matching)."""

    matched: bool
    mismatchCount: NonNegInt


class TaskSummary(Closed):
    """One task's results; ``x-wopeval-finalState`` is wopeval's, for a task with a world."""

    model_config = ConfigDict(serialize_by_alias=True, validate_by_name=True)

    taskId: TaskId
    score: UnitFloat
    passed: bool
    costUsd: NonNegFloat | None = None
    latencyMs: NonNegInt | None = None
    schemaValid: bool | None = None
    safetyFindings: list[SafetyFinding] | None = None
    trajectory: TrajectoryBlock | None = None
    trials: TrialsBlock | None = None
    efficiency: Efficiency | None = None
    fixtureMissCount: NonNegInt | None = None
    final_state: FinalStateBlock | None = Field(None, alias="x-wopeval-finalState")


class TrialStats(Closed):
    """RFC 0244 §B suite level: ``scoreStderr`` is omitted below two tasks."""

    k: Annotated[int, Field(ge=1)]
    passAtK: UnitFloat
    passHatK: UnitFloat
    scoreStderr: NonNegFloat | None = None


class RegressionBlock(Closed):
    baselineRunId: Annotated[str, Field(pattern=RUN_ID_PATTERN)]
    scoreDelta: Annotated[float, Field(ge=-1, le=1)]
    diffRef: str | None = None
    verdict: Verdict | None = None
    method: Annotated[str, Field(pattern=METHOD_PATTERN)] | None = None
    alpha: UnitFloat | None = None
    pairedTaskCount: NonNegInt | None = None


class UserSide(Closed):
    """``x-wopeval-userSide`` (wopeval's own, on a run whose suite has a simulated user): the
    trials that failed on the user side, counted apart from the agent's, and the per-trial pass
    rate with and without them. ``userMiss``: the agent said something the scripted user's
    script does not cover; ``userError``: the simulated (LLM) user itself failed. Counts
    and rates only (RFC 0244 §H)."""

    trials: NonNegInt
    passedTrials: NonNegInt
    userMiss: NonNegInt
    userError: NonNegInt
    passRate: UnitFloat
    passRateExcludingUserSide: UnitFloat | None = None

    def text(self) -> str:
        """One plain line every view shows (CLI, Markdown)."""
        without = self.passRateExcludingUserSide
        rest = "-" if without is None else f"{without:.3f}"
        return (
            f"user side: {self.userMiss} user-miss, {self.userError} user-error; "
            f"pass rate {self.passRate:.3f}, {rest} without them"
        )


class EvalSummary(Closed):
    suiteId: Annotated[str, Field(pattern=SUITE_ID_PATTERN)]
    suiteVersion: Annotated[str, Field(pattern=SEMVER_PATTERN)]
    evaluatedModelClass: ModelClass | None = None
    aggregateScore: UnitFloat
    passed: bool
    taskCount: NonNegInt
    passedCount: NonNegInt
    totalCostUsd: NonNegFloat | None = None
    tasks: list[TaskSummary]
    pinnedNodeIds: list[str] | None = None
    regression: RegressionBlock | None = None
    trialStats: TrialStats | None = None
    user_side: UserSide | None = Field(None, alias="x-wopeval-userSide")

    model_config = ConfigDict(extra="forbid", frozen=True, validate_by_name=True)

    def to_wire(self) -> dict[str, object]:
        """The JSON object as served: absent optionals are omitted, never ``null``."""
        return self.model_dump(mode="json", exclude_none=True, by_alias=True)

    def to_json(self) -> str:
        """Canonical bytes: the same summary always serializes identically."""
        return self.model_dump_json(exclude_none=True, by_alias=True)
