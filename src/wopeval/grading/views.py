"""Read a run's event log into per-trial views (pure).

A trial is found by its root ``agent.invocation-started`` (the one carrying ``x-wopeval-taskId``);
every event of the trial carries ``causationId`` = the root's ``eventId`` (see
:mod:`wopeval.wire.events`), so concurrent trials can interleave freely in the log. An
``eval.scored`` without a bracket (a trial skipped by a cost ceiling) still yields a view. When a
resumed run re-runs a trial interrupted before its ``eval.scored``, the later bracket supersedes
the unfinished one (:mod:`wopeval.engine.resume`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar

from wopeval.grading.trajectory import ObservedCall
from wopeval.wire.events import (
    Decided,
    EvalScored,
    Failure,
    InvocationCompleted,
    InvocationStarted,
    Payload,
    ProviderUsage,
    RunEvent,
    ToolCalled,
    ToolReturned,
    TrialFailed,
)
from wopeval.wire.vocab import (
    EVAL_SCORED,
    INVOCATION_COMPLETED,
    INVOCATION_STARTED,
    TRIAL_FAILED,
    VENDOR_PREFIXES,
    X_ERROR,
    X_TASK_ID,
)

__all__ = ["VENDOR_PREFIXES", "X_ERROR", "TrialView", "collect_trials"]


@dataclass
class TrialView:
    """Everything grading needs to know about one trial, read from the log."""

    task_id: str
    trial_index: int
    root_event_id: str | None = None
    root_agent_id: str | None = None
    root_invocation_id: str | None = None
    calls: list[ObservedCall] = field(default_factory=list)
    model_call_count: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    fixture_misses: int = 0
    failed_closed: bool = False
    missed_tools: list[str] = field(default_factory=list)
    fixture_indexes: list[int] = field(default_factory=list)
    output: Any = None
    has_output: bool = False
    outcome: str | None = None
    error_label: str | None = None
    failure: Failure | None = None
    started_at: str | None = None
    completed_at: str | None = None
    scored: EvalScored | None = None
    reason: TrialFailed | None = None

    @property
    def ran(self) -> bool:
        return self.root_event_id is not None

    @property
    def fixtures_served(self) -> int:
        return len(self.fixture_indexes)

    @property
    def latency_ms(self) -> int | None:
        if self.started_at is None or self.completed_at is None:
            return None
        delta = _parse_ts(self.completed_at) - _parse_ts(self.started_at)
        return max(0, math.floor(delta.total_seconds() * 1000))


def _parse_ts(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def collect_trials(events: Iterable[RunEvent]) -> dict[tuple[str, int], TrialView]:
    """Group a run's events by ``(taskId, trialIndex)``. Pure; order of the log is kept.

    wopeval's own logs attribute by ``causationId`` (trials interleave). A log from another
    host without wopeval's markers is read by position (RFC 0081 order): a top-level bracket
    owns every event until it closes, and belongs to the next unattributed ``eval.scored``.
    Payloads are read through their typed models (:attr:`RunEvent.typed`).
    """
    views: dict[tuple[str, int], TrialView] = {}
    by_root: dict[str, TrialView] = {}
    positional = _Positional()
    for event in events:
        if event.type == INVOCATION_STARTED and _has_key(event, X_TASK_ID):
            started = _as(event, InvocationStarted)
            key = (started.task_id or "", started.trial_index or 0)
            view = views.get(key)
            if view is None or (view.ran and view.scored is None):  # a resume's new attempt
                view = views[key] = TrialView(task_id=key[0], trial_index=key[1])
            _open(view, event, started)
            by_root[event.eventId] = view
        elif event.type == EVAL_SCORED:
            scored = _as(event, EvalScored)
            key = (scored.taskId, scored.trialIndex or 0)
            if key not in views and positional.pending:
                view = positional.pending.pop(0)
                view.task_id, view.trial_index = key
                views[key] = view
            views.setdefault(key, TrialView(task_id=key[0], trial_index=key[1])).scored = scored
        elif event.type == TRIAL_FAILED:
            reason = _as(event, TrialFailed)
            key = (reason.taskId, reason.trialIndex)
            views.setdefault(key, TrialView(task_id=key[0], trial_index=key[1])).reason = reason
        elif event.causationId is not None and event.causationId in by_root:
            _apply(by_root[event.causationId], event)
        else:
            positional.feed(event)
    return views


_P = TypeVar("_P", bound=Payload)


def _as(event: RunEvent, model: type[_P]) -> _P:
    """The event's typed payload (``event.type`` selects ``model``)."""
    payload = event.typed
    if not isinstance(payload, model):  # pragma: no cover - PAYLOAD_MODELS maps type → model
        raise TypeError(f"event {event.sequence}: {event.type} is not a {model.__name__}")
    return payload


def _has_key(event: RunEvent, key: str) -> bool:
    return isinstance(event.payload, dict) and key in event.payload


def _open(view: TrialView, event: RunEvent, started: InvocationStarted) -> None:
    view.root_event_id = event.eventId
    view.root_agent_id = started.agentId
    view.root_invocation_id = started.invocationId
    view.started_at = event.timestamp


@dataclass
class _Positional:
    """Attribution by log position, for logs that carry no wopeval trial markers."""

    current: TrialView | None = None
    pending: list[TrialView] = field(default_factory=list)

    def feed(self, event: RunEvent) -> None:
        if self.current is None:
            if event.type == INVOCATION_STARTED:
                started = _as(event, InvocationStarted)
                self.current = TrialView(task_id="", trial_index=-1)
                _open(self.current, event, started)
            return
        _apply(self.current, event)
        if event.type == INVOCATION_COMPLETED:
            completed = _as(event, InvocationCompleted)
            if completed.invocationId == self.current.root_invocation_id:
                self.pending.append(self.current)
                self.current = None


def _apply(view: TrialView, event: RunEvent) -> None:
    payload = event.typed
    if isinstance(payload, ToolCalled):
        view.calls.append(ObservedCall(payload.toolName, payload.inputs, payload.agentId))
    elif isinstance(payload, ToolReturned):
        if payload.fixture in ("miss-failed", "miss-live"):
            view.fixture_misses += 1
            view.missed_tools.append(payload.toolName)
        if payload.fixture == "miss-failed":
            view.failed_closed = True
        if payload.fixture_index is not None:
            view.fixture_indexes.append(payload.fixture_index)
    elif isinstance(payload, ProviderUsage):
        view.model_call_count += 1
        view.input_tokens += payload.inputTokens
        view.output_tokens += payload.outputTokens
        view.cost_usd += payload.costEstimateUsd or 0.0
    elif isinstance(payload, Decided) and payload.agentId == view.root_agent_id:
        view.output = payload.decision
        view.has_output = True
    elif (
        isinstance(payload, InvocationCompleted) and payload.invocationId == view.root_invocation_id
    ):
        view.outcome = payload.outcome
        view.completed_at = event.timestamp
        view.error_label = payload.error_label
        view.failure = payload.failure
