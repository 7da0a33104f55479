"""The v2 run-event envelope and one closed payload model per event type wopeval writes or reads.

Envelope: closed :class:`RunEvent` (``eventId``, ``runId``, ``type``, ``payload``, ``timestamp``,
``sequence``, ``schemaVersion``, optional ``nodeId``/``engineVersion``/``causationId``). The store
keeps the payload as the JSON it was given; :meth:`RunEvent.typed` validates it against the model
of its type (:data:`PAYLOAD_MODELS`), and :data:`TypedRunEvent` is the discriminated union of all
typed envelopes (unknown and vendor types fall to :class:`OtherEvent`, payload untouched).

Each payload model mirrors its upstream ``run-event-payloads`` def field for field (closed, with
the vendor hatch ``^(openwop-|x-|vendor\\.)`` where the def has one), plus the RFC 0244 optional
fields, plus wopeval's own ``x-wopeval-*`` keys as named fields.

Trial attribution: trials run concurrently, so their events interleave in the log. Every event
inside a trial carries ``causationId`` = the ``eventId`` of that trial's root
``agent.invocation-started``; the root carries ``x-wopeval-taskId`` and ``x-wopeval-trialIndex``.
"""

from __future__ import annotations

import re
from functools import cached_property, lru_cache
from typing import Annotated, Any, ClassVar, Literal, Self, Union, cast

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    create_model,
)
from pydantic_core import PydanticSerializationError

from wopeval.wire.vocab import (
    AGENT_ID_PATTERN,
    DECIDED,
    EVAL_COMPLETED,
    EVAL_SCORED,
    EVAL_STARTED,
    EVENT_ID_PATTERN,
    FIXTURE_MISS_ERROR_CODE,
    INVOCATION_COMPLETED,
    INVOCATION_STARTED,
    PROVIDER_USAGE,
    RUN_CANCELLED,
    RUN_COMPLETED,
    RUN_FAILED,
    RUN_STARTED,
    SCORE_LABEL_PATTERN,
    TERMINAL_TYPES,
    TOOL_CALLED,
    TOOL_RETURNED,
    TRIAL_FAILED,
    VENDOR_KEY_PATTERN,
    X_ERROR,
    X_FAILURE,
    X_FIXTURE,
    X_JUDGE,
    X_TASK_ID,
    X_TRIAL_INDEX,
    EvalMode,
    EvaluatorType,
    FixtureOutcome,
    NonNegFloat,
    NonNegInt,
    UnitFloat,
)

SCHEMA_VERSION = 1
EVENT_LOG_SCHEMA_VERSION = 3
_VENDOR_KEY = re.compile(VENDOR_KEY_PATTERN)


def _vendor_key(key: str) -> str:
    if not _VENDOR_KEY.match(key):
        raise ValueError(
            f"{key!r} is not a member of this payload (closed: only vendor keys, "
            "'openwop-', 'x-' or 'vendor.' ones, may be added)"
        )
    return key


class Payload(BaseModel):
    """A closed payload with the v2 vendor hatch: extra keys must match the vendor pattern.

    The extra keys are checked by their own validator, run for each extra key only: a model
    validator ran in Python for every payload (a sixth of the time building one took)."""

    model_config = ConfigDict(extra="allow", frozen=True, populate_by_name=True)
    event_type: ClassVar[str]
    __pydantic_extra__: dict[Annotated[str, AfterValidator(_vendor_key)], Any] = Field(init=False)

    @classmethod
    def build(cls, **fields: Any) -> Self:
        """``cls(**fields)``, validated the same, without ``BaseModel.__init__``'s Python
        wrapper (the engine builds several payloads per trial)."""
        return cast(Self, cls.__pydantic_validator__.validate_python(fields))

    def to_wire(self) -> dict[str, Any]:
        """The wire dict: ``model_dump(mode="json", exclude_none=True, by_alias=True)``, from
        the serializer directly (``model_dump``'s Python wrapper costs as much again), with
        the members :meth:`_null_kept` names written as ``null`` when absent (at the end)."""
        doc: dict[str, Any] = type(self).__pydantic_serializer__.to_python(
            self, mode="json", exclude_none=True, by_alias=True
        )
        for key in self._null_kept():
            doc.setdefault(key, None)
        return doc

    def wire_and_text(self) -> tuple[dict[str, Any], str | None]:
        """:meth:`to_wire` and its JSON text (as ``dumps_json`` writes it but for the digits of
        some floats: ``1e-7`` for ``1e-07``, the same number), or None for the text when the
        caller must encode the dict itself: the serializer wrote a ``null``, which may stand
        for a float JSON has no number for (``NaN``, ``±inf``: ``dumps_json`` refuses them),
        or could not write it.
        One pass of the serializer for the text instead of the ``json`` module's: the engine
        queues several payloads a trial (5% of a trial's CPU)."""
        serializer = type(self).__pydantic_serializer__
        doc: dict[str, Any] = serializer.to_python(
            self, mode="json", exclude_none=True, by_alias=True
        )
        try:
            raw = serializer.to_json(self, exclude_none=True, by_alias=True).decode()
        except PydanticSerializationError:  # a lone surrogate, say: the caller's encoder decides
            raw = "null"
        text = None if "null" in raw else raw
        for key in self._null_kept() if self._NULL_KEPT else ():
            if key not in doc:  # absent from the serializer's text as from its dict
                doc[key] = None
                if text is not None:
                    text = f'{text[:-1]},"{key}":null}}'
        return doc, text

    # The members a payload of this type may write as ``null`` (``_null_kept``: which do)
    _NULL_KEPT: ClassVar[tuple[str, ...]] = ()

    def _null_kept(self) -> tuple[str, ...]:
        """Members written as ``null`` when absent (``exclude_none`` drops every other)."""
        return self._NULL_KEPT


class ClosedPayload(Payload):
    """A payload def with no vendor hatch (``providerUsage``)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class ErrorObject(BaseModel):
    """``_errorObject``: ``{code, message, details?, retryable?}`` (+ vendor keys)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    code: Annotated[str, Field(min_length=1)]
    message: str
    details: dict[str, Any] | None = None
    retryable: bool | None = None


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


class Failure(BaseModel):
    """What went wrong inside an invocation (tenant content: the message and traceback)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    exceptionType: str | None = None
    message: str
    traceback: str | None = None


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
    )
}


class _Envelope(BaseModel):
    """The RunEventDoc envelope members every event carries."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    eventId: Annotated[str, Field(pattern=EVENT_ID_PATTERN)]
    runId: str
    timestamp: str
    sequence: NonNegInt
    schemaVersion: Annotated[int, Field(ge=1)] = SCHEMA_VERSION
    nodeId: str | None = None
    engineVersion: int | None = None
    causationId: str | None = None


class RunEvent(_Envelope):
    """One stored, append-only event (the v2 ``RunEventDoc``); ``payload`` as recorded."""

    type: str
    payload: Any

    def to_wire(self) -> dict[str, Any]:
        """The RunEventDoc: optional envelope members omitted when absent; ``payload`` always."""
        doc = self.model_dump(mode="json")
        return {k: v for k, v in doc.items() if v is not None or k == "payload"}

    @classmethod
    def recorded(
        cls,
        event_id: str,
        run_id: str,
        type: str,
        payload: Any,
        timestamp: str,
        sequence: int,
        schema_version: int = SCHEMA_VERSION,
        node_id: str | None = None,
        engine_version: int | None = None,
        causation_id: str | None = None,
        typed: Payload | None = None,
    ) -> RunEvent:
        """An event the store wrote or read back: built without validation (as
        ``model_construct``, without its per-field generic work; the store builds one per event).

        ``typed``, when given, is the already validated payload model this event was written
        from: it becomes :attr:`typed`'s cached value (its wire form *is* ``payload``).
        """
        event = cls.__new__(cls)
        values = {
            "eventId": event_id,
            "runId": run_id,
            "timestamp": timestamp,
            "sequence": sequence,
            "schemaVersion": schema_version,
            "nodeId": node_id,
            "engineVersion": engine_version,
            "causationId": causation_id,
            "type": type,
            "payload": payload,
        }
        if typed is not None:
            values["typed"] = typed  # functools.cached_property's slot in the instance dict
        _set = object.__setattr__
        _set(event, "__dict__", values)
        _set(event, "__pydantic_fields_set__", _ALL_EVENT_FIELDS)
        _set(event, "__pydantic_extra__", None)
        _set(event, "__pydantic_private__", None)
        return event

    @cached_property
    def typed(self) -> Payload | None:
        """The payload as its type's model (validated once), or None for an unknown type.

        Raises :class:`pydantic.ValidationError` when a known type's payload breaks its def.
        """
        model = PAYLOAD_MODELS.get(self.type)
        return None if model is None else model.model_validate(self.payload)


# Every event's fields set, one object shared by all: a RunEvent is frozen, so pydantic never
# adds to it (``model_copy`` copies it first); a set a stored event built took a fifth of the
# time building it did.
_ALL_EVENT_FIELDS: set[str] = set(RunEvent.model_fields)


# --- the discriminated union of typed envelopes ------------------------------------------------
def _typed_envelope(model: type[Payload]) -> type[_Envelope]:
    name = model.__name__ + "Event"
    fields: dict[str, Any] = {
        "type": (Literal[model.event_type], ...),
        "payload": (model, ...),
    }
    built: type[_Envelope] = create_model(name, __base__=_Envelope, **fields)
    return built


class OtherEvent(_Envelope):
    """An event of a type wopeval does not model (another host's, a vendor's): kept as is."""

    type: str
    payload: Any


def _event_tag(value: Any) -> str:
    event_type = value.get("type") if isinstance(value, dict) else getattr(value, "type", None)
    return event_type if event_type in PAYLOAD_MODELS else "other"


@lru_cache(maxsize=1)
def _typed_envelopes() -> dict[str, type[_Envelope]]:
    return {event_type: _typed_envelope(model) for event_type, model in PAYLOAD_MODELS.items()}


@lru_cache(maxsize=1)
def _typed_run_event() -> Any:
    members: tuple[Any, ...] = (
        Annotated[OtherEvent, Tag("other")],
        *(Annotated[envelope, Tag(tag)] for tag, envelope in _typed_envelopes().items()),
    )
    return Annotated[Union[members], Discriminator(_event_tag)]  # noqa: UP007


def __getattr__(name: str) -> Any:
    """``TYPED_ENVELOPES`` and ``TypedRunEvent`` are built on first use: fourteen pydantic
    models and their union cost more at import than ``wopeval run`` spends before its first
    trial, and only validators of foreign logs and the tests need them."""
    if name == "TYPED_ENVELOPES":  # one typed envelope model per payload model, by type
        return _typed_envelopes()
    if name == "TypedRunEvent":  # the discriminated union of every typed envelope
        return _typed_run_event()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DECIDED",
    "EVAL_COMPLETED",
    "EVAL_SCORED",
    "EVAL_STARTED",
    "EVENT_LOG_SCHEMA_VERSION",
    "FIXTURE_MISS_ERROR_CODE",
    "INVOCATION_COMPLETED",
    "INVOCATION_STARTED",
    "PAYLOAD_MODELS",
    "PROVIDER_USAGE",
    "RUN_CANCELLED",
    "RUN_COMPLETED",
    "RUN_FAILED",
    "RUN_STARTED",
    "SCHEMA_VERSION",
    "SCORE_LABEL_PATTERN",
    "TERMINAL_TYPES",
    "TOOL_CALLED",
    "TOOL_RETURNED",
    "TRIAL_FAILED",
    "X_ERROR",
    "X_FAILURE",
    "X_FIXTURE",
    "X_JUDGE",
    "X_TASK_ID",
    "X_TRIAL_INDEX",
    "Decided",
    "ErrorObject",
    "EvalCompleted",
    "EvalScored",
    "EvalStarted",
    "Failure",
    "FailureKind",
    "FailureReason",
    "FixtureOutcome",
    "InvocationCompleted",
    "InvocationStarted",
    "OtherEvent",
    "Payload",
    "ProviderUsage",
    "RunCancelled",
    "RunCompleted",
    "RunEvent",
    "RunFailed",
    "RunStarted",
    "ToolCalled",
    "ToolReturned",
    "TrialFailed",
    "TypedRunEvent",  # noqa: F822 (built on first use by the module's __getattr__)
]
