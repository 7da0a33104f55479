"""One closed payload model per event type wopeval writes or reads, by family.

Each mirrors its upstream ``run-event-payloads`` def field for field (closed, with the vendor
hatch where the def has one: :class:`~wopeval.wire.payload_base.Payload`), plus the RFC 0244
optional fields, plus wopeval's own ``x-wopeval-*`` keys as named fields.
:data:`PAYLOAD_MODELS` maps each event type to its model.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from wopeval.wire.payload_base import ClosedPayload, ErrorObject, Payload
from wopeval.wire.vocab import (
    ADAPTIVE_STOPPED,
    AGENT_ID_PATTERN,
    DECIDED,
    EVAL_COMPLETED,
    EVAL_SCORED,
    EVAL_STARTED,
    INVOCATION_COMPLETED,
    INVOCATION_STARTED,
    PROVIDER_USAGE,
    RUN_CANCELLED,
    RUN_COMPLETED,
    RUN_FAILED,
    RUN_STARTED,
    SCORE_LABEL_PATTERN,
    TOOL_CALLED,
    TOOL_RETURNED,
    TRIAL_FAILED,
    USER_TURN,
    WORLD_STATE,
    X_ERROR,
    X_FAILURE,
    X_FIXTURE,
    X_REPLAYED_LATENCY,
    X_RETRY,
    X_TASK_ID,
    X_TRACE_INCOMPLETE,
    X_TRIAL_INDEX,
    X_WORLD_RULE,
    EvalMode,
    EvaluatorType,
    FixtureOutcome,
    NonNegFloat,
    NonNegInt,
    RetryCause,
    UnitFloat,
)

__all__ = [
    "PAYLOAD_MODELS",
    "AdaptiveStopped",
    "Decided",
    "EvalCompleted",
    "EvalScored",
    "EvalStarted",
    "Failure",
    "FailureKind",
    "FailureReason",
    "InvocationCompleted",
    "InvocationStarted",
    "Owner",
    "ProviderUsage",
    "RetryMark",
    "RunCancelled",
    "RunCompleted",
    "RunFailed",
    "RunStarted",
    "ToolCalled",
    "ToolReturned",
    "TrialFailed",
    "WorldStateRecorded",
]


class Owner(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    tenant: str
    workspace: str | None = None
    subject: dict[str, Any]  # an RFC 0048 subject object


# --- run.* -------------------------------------------------------------------------------------
class RunStarted(Payload):
    event_type: ClassVar[str] = RUN_STARTED
    workflowId: Annotated[str, Field(min_length=1)]
    inputs: dict[str, Any] | None = None
    transport: Literal["rest", "mcp", "a2a", "ui"] | None = None
    engineVersion: int | None = None
    owner: Owner | None = None
    tags: list[str] | None = None
    metadata: dict[str, Any] | None = None


class RunCompleted(Payload):
    event_type: ClassVar[str] = RUN_COMPLETED
    outputs: dict[str, Any]
    durationMs: NonNegInt | None = None


class RunFailed(Payload):
    event_type: ClassVar[str] = RUN_FAILED
    error: ErrorObject
    failedNodeId: str | None = None
    durationMs: NonNegInt | None = None


class RunCancelled(Payload):
    event_type: ClassVar[str] = RUN_CANCELLED
    reason: str | None = None


# --- eval.* (content-free: ids, enums, counts, scalars only; RFC 0244 §H) -----------------------
class EvalStarted(Payload):
    event_type: ClassVar[str] = EVAL_STARTED
    suiteId: Annotated[str, Field(min_length=1)]
    suiteVersion: Annotated[str, Field(min_length=1)]
    taskCount: NonNegInt
    modes: list[EvalMode]
    baselineRunId: str | None = None
    trialCount: Annotated[int, Field(ge=1)] | None = None
    # RFC 0252: the accepted ``fixtureRuns`` map (taskId → source runId), ids only.
    fixtureRuns: Annotated[dict[str, str], Field(min_length=1)] | None = None


class EvalScored(Payload):
    event_type: ClassVar[str] = EVAL_SCORED
    taskId: Annotated[str, Field(min_length=1)]
    score: UnitFloat
    passed: bool
    costUsd: NonNegFloat | None = None
    latencyMs: NonNegInt | None = None
    schemaValid: bool | None = None
    safetyFindingCount: NonNegInt | None = None
    trialIndex: NonNegInt | None = None
    scoreLabel: Annotated[str, Field(pattern=SCORE_LABEL_PATTERN)] | None = None
    evaluatorType: EvaluatorType | None = None


class EvalCompleted(Payload):
    event_type: ClassVar[str] = EVAL_COMPLETED
    aggregateScore: UnitFloat
    passed: bool
    taskCount: NonNegInt
    passedCount: NonNegInt
    regressionVsBaseline: Annotated[float, Field(ge=-1, le=1)] | None = None


# --- agent.* (RFC 0077) -------------------------------------------------------------------------
class InvocationStarted(Payload):
    event_type: ClassVar[str] = INVOCATION_STARTED
    invocationId: Annotated[str, Field(min_length=1)]
    agentId: Annotated[str, Field(pattern=AGENT_ID_PATTERN)]
    source: Literal["workflow-node", "run-api", "chat-mention"]
    modelClass: str | None = None
    resolvedModel: str | None = None
    resolvedProvider: str | None = None
    resolvedAgentVersion: str | None = None
    resolvedChannel: str | None = None
    toolSurfaceCount: NonNegInt | None = None
    memoryBound: bool | None = None
    task_id: str | None = Field(None, alias=X_TASK_ID)
    trial_index: NonNegInt | None = Field(None, alias=X_TRIAL_INDEX)
    # An imported trial's spans whose parent span is not in the trace: the trace was cut short
    # (a span is exported when it ends, so an unfinished parent is missing).
    trace_incomplete: NonNegInt | None = Field(None, alias=X_TRACE_INCOMPLETE)


class Failure(BaseModel):
    """What went wrong inside an invocation (tenant content: the message and traceback)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    exceptionType: str | None = None
    message: str
    traceback: str | None = None


class RetryMark(BaseModel):
    """The mark on an attempt a retry superseded: which attempt it was (1 the first) and why
    (content-free: the class of the component that failed, never its message)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    attempt: Annotated[int, Field(ge=1)]
    cause: RetryCause


class InvocationCompleted(Payload):
    event_type: ClassVar[str] = INVOCATION_COMPLETED
    invocationId: Annotated[str, Field(min_length=1)]
    agentId: Annotated[str, Field(pattern=AGENT_ID_PATTERN)]
    outcome: Literal["completed", "handed-off", "escalated", "refused", "failed"]
    schemaValidated: bool | None = None
    confidence: UnitFloat | None = None
    enqueuedRunId: str | None = None
    error_label: str | None = Field(None, alias=X_ERROR)
    failure: Failure | None = Field(None, alias=X_FAILURE)
    retry: RetryMark | None = Field(None, alias=X_RETRY)
    replayed_latency_ms: NonNegInt | None = Field(None, alias=X_REPLAYED_LATENCY)


class ToolCalled(Payload):
    event_type: ClassVar[str] = TOOL_CALLED
    agentId: str
    toolName: Annotated[str, Field(min_length=1)]
    callId: Annotated[str, Field(min_length=1)]
    inputs: Any = None
    argsHash: str | None = None
    principal: str | None = None
    transport: Literal["mcp", "http", "native"] | None = None
    causationHostId: str | None = None


class ToolReturned(Payload):
    event_type: ClassVar[str] = TOOL_RETURNED
    agentId: str
    toolName: Annotated[str, Field(min_length=1)]
    callId: Annotated[str, Field(min_length=1)]
    outcome: Any = None
    error: ErrorObject | None = None
    status: Literal["ok", "error", "forbidden", "rate_limited"] | None = None
    durationMs: NonNegInt | None = None
    causationHostId: str | None = None
    fixture: FixtureOutcome | None = Field(None, alias=X_FIXTURE)
    # Which fixture entry served the call (its index in ``fixtures.toolResponses``).
    fixture_index: NonNegInt | None = Field(None, alias="x-wopeval-fixtureIndex")
    # Which rule of the task's world served the call (its index among the tool's rules).
    world_rule: NonNegInt | None = Field(None, alias=X_WORLD_RULE)

    _NULL_KEPT: ClassVar[tuple[str, ...]] = ("outcome",)

    def _null_kept(self) -> tuple[str, ...]:
        """``outcome`` is any JSON, ``null`` included: kept whenever the call succeeded."""
        return self._NULL_KEPT if self.status == "ok" else ()


class Decided(Payload):
    event_type: ClassVar[str] = DECIDED
    agentId: str
    decision: Any
    confidence: UnitFloat | None = None
    causationHostId: str | None = None

    _NULL_KEPT: ClassVar[tuple[str, ...]] = ("decision",)  # ``null`` is a decision too


class ProviderUsage(ClosedPayload):
    event_type: ClassVar[str] = PROVIDER_USAGE
    provider: Annotated[str, Field(min_length=1)]
    model: Annotated[str, Field(min_length=1)]
    inputTokens: NonNegInt
    outputTokens: NonNegInt
    totalTokens: NonNegInt | None = None
    costEstimateUsd: NonNegFloat | None = None
    currency: Annotated[str, Field(pattern=r"^[A-Z]{3}$")] | None = None
    cacheHit: bool | None = None
    cacheReadTokens: NonNegInt | None = None
    cacheWriteTokens: NonNegInt | None = None
    nodeId: str | None = None
    traceId: Annotated[str, Field(pattern=r"^[0-9a-f]{32}$")] | None = None


# --- wopeval.* ---------------------------------------------------------------------------------
FailureKind = Literal[
    "agent-error",
    "timeout",
    "cancelled",
    "output-not-json",
    "fixture-miss",
    "trajectory",
    "output-mismatch",
    "below-pass-score",
    "judge-error",
    "grader-error",
    "skipped-budget",
    "not-run",
    "interrupted",  # a resumed run's trial that may have touched a live tool
    "infrastructure",  # a model server, MCP server or agent process failed, not the agent
    "model-miss",  # a replayed model request with no recording in the cassette
    "final-state",  # the trial's world state is not the one x-wopeval-finalState asserts
    "user-miss",  # the agent told a scripted user something its script does not cover
    "max-turns",  # the agent sent a scripted user more messages than its maxTurns
    "user-error",  # a simulated (LLM) user that failed: the user side's failure, not the agent's
]


class FailureReason(BaseModel):
    """One reason a trial did not pass: its kind, one short ``message``, the ``details``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: FailureKind
    message: str
    details: dict[str, Any] = Field(default_factory=dict)


class TrialFailed(ClosedPayload):
    """Why one trial did not pass.

    ``kind`` classifies the trial's failure (an agent error, a fixture miss that failed it
    closed, a wrong answer …) and ``message``/``details`` are that reason. ``reasons``, when
    present, lists every reason, most decisive first (it holds the ``kind`` one too); absent,
    the trial has that one reason only (:attr:`every_reason`).

    Recorded after the trial's ``eval.scored``. It carries content (exception messages, tool
    names, expected and observed calls), so it lives only in the tenant's own log and views —
    never in an ``eval.*`` event or the summary (RFC 0244 §H).
    """

    event_type: ClassVar[str] = TRIAL_FAILED
    taskId: Annotated[str, Field(min_length=1)]
    trialIndex: NonNegInt
    kind: FailureKind
    message: str
    details: dict[str, Any] = Field(default_factory=dict)
    reasons: Annotated[list[FailureReason], Field(min_length=2)] | None = None

    @property
    def every_reason(self) -> list[FailureReason]:
        """Every reason, most decisive first (never empty)."""
        if self.reasons:
            return list(self.reasons)
        return [FailureReason(kind=self.kind, message=self.message, details=self.details)]


class AdaptiveStopped(ClosedPayload):
    """Where an adaptive task's sequential test stopped (``x-wopeval-adaptive``): after
    ``trials`` of at most ``maxTrials`` trials, ``passedCount`` of them passing, deciding its pass
    rate ``above`` or ``below`` the threshold, or ``undecided`` at the maximum.

    Recorded once per adaptive task, after the ``eval.scored`` of its last trial. A record, not
    a fact grading reads: the summary recomputes the stop from the scored trials and the suite.
    Counts and enums only.
    """

    event_type: ClassVar[str] = ADAPTIVE_STOPPED
    taskId: Annotated[str, Field(min_length=1)]
    rule: Literal["sprt"]
    decision: Literal["above", "below", "undecided"]
    trials: Annotated[int, Field(ge=1)]
    passedCount: NonNegInt
    maxTrials: Annotated[int, Field(ge=1)]


class WorldStateRecorded(ClosedPayload):
    """A trial's final world state (a task's ``x-wopeval-world``), recorded inside its bracket
    before ``agent.invocation-completed``; grading reads the final-state expectation against it.
    Content, like a tool result: it stays in the tenant's log (RFC 0244 §H), and the summary
    carries only whether it matched."""

    event_type: ClassVar[str] = WORLD_STATE
    state: Any = None

    _NULL_KEPT: ClassVar[tuple[str, ...]] = ("state",)  # ``null`` is a state too


UserTurnKind = Literal["reply", "stop", "miss", "max-turns", "ended", "error"]
# Why a simulated user failed (``error`` turns): its model's server failed or timed out, its
# reply broke the format, it did not stop within its maxTurns, a replayed run's cassette has no
# recording of its request, or a resumed trial's agent said something else than before.
UserErrorCause = Literal["model-error", "format", "max-turns", "model-miss", "resume-diverged"]


class UserTurn(ClosedPayload):
    """One message the agent sent a simulated user (``x-wopeval-user``) and how it was answered:
    ``reply`` (entry ``replyIndex``), ``stop`` (that entry ended the conversation), ``miss`` (no
    unconsumed entry matched: the trial fails closed), ``max-turns`` (past ``maxTurns``), or
    ``ended`` (the conversation had already ended: no answer), or ``error`` (the simulated user
    itself failed: ``cause`` says how, ``error`` the detail; the trial fails ``user-error``).
    ``turn`` counts the messages from 0. It carries content (the message, the reply), so it
    lives only in the tenant's own log and views, like a tool call's arguments (RFC 0244 §H)."""

    event_type: ClassVar[str] = USER_TURN
    agentId: str
    turn: NonNegInt
    kind: UserTurnKind
    message: Any = None
    replyIndex: NonNegInt | None = None
    reply: Any = None
    cause: UserErrorCause | None = None
    error: str | None = None


PAYLOAD_MODELS: dict[str, type[Payload]] = {
    model.event_type: model
    for model in (
        RunStarted,
        RunCompleted,
        RunFailed,
        RunCancelled,
        EvalStarted,
        EvalScored,
        EvalCompleted,
        InvocationStarted,
        InvocationCompleted,
        ToolCalled,
        ToolReturned,
        Decided,
        ProviderUsage,
        TrialFailed,
        AdaptiveStopped,
        WorldStateRecorded,
        UserTurn,
    )
}
