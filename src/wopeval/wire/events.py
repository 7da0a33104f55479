"""The v2 run-event envelope and the payloads wopeval emits.

Envelope: closed ``RunEventDoc`` (``eventId``, ``runId``, ``type``, ``payload``, ``timestamp``,
``sequence``, ``schemaVersion``, optional ``nodeId``/``engineVersion``/``causationId``).

Trial attribution: trials run concurrently, so their events interleave in the log. Every event
inside a trial carries ``causationId`` = the ``eventId`` of that trial's root
``agent.invocation-started``; the root carries the vendor keys ``x-wopeval-taskId`` and
``x-wopeval-trialIndex``. This uses only fields the closed v2 schemas admit.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from wopeval.suite.models import EvalMode, UnitFloat

SCHEMA_VERSION = 1
EVENT_LOG_SCHEMA_VERSION = 3
SCORE_LABEL_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,63}$"

# Vendor keys (payload pattern ``^(openwop-|x-|vendor\.)``) carried on wopeval's own events.
X_TASK_ID = "x-wopeval-taskId"
X_TRIAL_INDEX = "x-wopeval-trialIndex"
X_FIXTURE = "x-wopeval-fixture"
X_JUDGE = "x-wopeval-judge"

# How a tool call was served, on ``agent.tool-returned`` (``X_FIXTURE``).
FixtureOutcome = Literal["served", "miss-failed", "miss-live", "live"]
FIXTURE_MISS_ERROR_CODE = "wopeval.fixture_miss"

EVAL_STARTED = "eval.started"
EVAL_SCORED = "eval.scored"
EVAL_COMPLETED = "eval.completed"
RUN_STARTED = "run.started"
RUN_COMPLETED = "run.completed"
RUN_FAILED = "run.failed"
RUN_CANCELLED = "run.cancelled"
INVOCATION_STARTED = "agent.invocation-started"
INVOCATION_COMPLETED = "agent.invocation-completed"
TOOL_CALLED = "agent.tool-called"
TOOL_RETURNED = "agent.tool-returned"
DECIDED = "agent.decided"
PROVIDER_USAGE = "provider.usage"
TERMINAL_TYPES = frozenset({RUN_COMPLETED, RUN_FAILED, RUN_CANCELLED})


class RunEvent(BaseModel):
    """One stored, append-only event (the v2 ``RunEventDoc``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    eventId: Annotated[str, Field(pattern=r"^[A-Za-z0-9._~-]{16,128}$")]
    runId: str
    type: str
    payload: Any
    timestamp: str
    sequence: Annotated[int, Field(ge=0)]
    schemaVersion: Annotated[int, Field(ge=1)] = SCHEMA_VERSION
    nodeId: str | None = None
    engineVersion: int | None = None
    causationId: str | None = None

    def to_wire(self) -> dict[str, Any]:
        """The RunEventDoc: optional envelope members omitted when absent; ``payload`` always."""
        doc = self.model_dump(mode="json")
        return {k: v for k, v in doc.items() if v is not None or k == "payload"}


class _Payload(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    def to_wire(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_none=True, by_alias=True)


class EvalStarted(_Payload):
    suiteId: Annotated[str, Field(min_length=1)]
    suiteVersion: Annotated[str, Field(min_length=1)]
    taskCount: Annotated[int, Field(ge=0)]
    modes: list[EvalMode]
    baselineRunId: str | None = None
    trialCount: Annotated[int, Field(ge=1)] | None = None


class EvalScored(_Payload):
    taskId: Annotated[str, Field(min_length=1)]
    score: UnitFloat
    passed: bool
    costUsd: Annotated[float, Field(ge=0)] | None = None
    latencyMs: Annotated[int, Field(ge=0)] | None = None
    schemaValid: bool | None = None
    safetyFindingCount: Annotated[int, Field(ge=0)] | None = None
    trialIndex: Annotated[int, Field(ge=0)] | None = None
    scoreLabel: Annotated[str, Field(pattern=SCORE_LABEL_PATTERN)] | None = None
    evaluatorType: Literal["deterministic", "llm_judge", "human"] | None = None


class EvalCompleted(_Payload):
    aggregateScore: UnitFloat
    passed: bool
    taskCount: Annotated[int, Field(ge=0)]
    passedCount: Annotated[int, Field(ge=0)]
    regressionVsBaseline: Annotated[float, Field(ge=-1, le=1)] | None = None
