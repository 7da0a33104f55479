"""Read a run's event log into per-trial views (pure).

A trial is found by its root ``agent.invocation-started`` (the one carrying ``x-wopeval-taskId``);
every event of the trial carries ``causationId`` = the root's ``eventId`` (see
:mod:`wopeval.wire.events`), so concurrent trials can interleave freely in the log. An
``eval.scored`` without a bracket (a trial skipped by a cost ceiling) still yields a view.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from wopeval.grading.trajectory import ObservedCall
from wopeval.wire.events import (
    DECIDED,
    EVAL_SCORED,
    INVOCATION_COMPLETED,
    INVOCATION_STARTED,
    PROVIDER_USAGE,
    TOOL_CALLED,
    TOOL_RETURNED,
    X_FIXTURE,
    X_TASK_ID,
    X_TRIAL_INDEX,
    EvalScored,
    RunEvent,
)

X_ERROR = "x-wopeval-error"
VENDOR_PREFIXES = ("openwop-", "x-", "vendor.")


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
    output: Any = None
    has_output: bool = False
    outcome: str | None = None
    error_label: str | None = None
    started_at: str | None = None
    completed_at: str | None = None
    scored: EvalScored | None = None

    @property
    def ran(self) -> bool:
        return self.root_event_id is not None

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
    """
    views: dict[tuple[str, int], TrialView] = {}
    by_root: dict[str, TrialView] = {}
    positional = _Positional()
    for event in events:
        payload = event.payload if isinstance(event.payload, dict) else {}
        if event.type == INVOCATION_STARTED and X_TASK_ID in payload:
            key = (str(payload[X_TASK_ID]), int(payload.get(X_TRIAL_INDEX, 0)))
            view = views.setdefault(key, TrialView(task_id=key[0], trial_index=key[1]))
            _open(view, event, payload)
            by_root[event.eventId] = view
        elif event.type == EVAL_SCORED:
            scored = EvalScored.model_validate(_without_vendor_keys(payload))
            key = (scored.taskId, scored.trialIndex or 0)
            if key not in views and positional.pending:
                view = positional.pending.pop(0)
                view.task_id, view.trial_index = key
                views[key] = view
            views.setdefault(key, TrialView(task_id=key[0], trial_index=key[1])).scored = scored
        elif event.causationId is not None and event.causationId in by_root:
            _apply(by_root[event.causationId], event, payload)
        else:
            positional.feed(event, payload)
    return views


def _without_vendor_keys(payload: dict[str, Any]) -> dict[str, Any]:
    """Drop the vendor pass-through keys v2 eval payloads admit (``x-``, ``vendor.``, …)."""
    return {k: v for k, v in payload.items() if not k.startswith(VENDOR_PREFIXES)}


def _open(view: TrialView, event: RunEvent, payload: dict[str, Any]) -> None:
    view.root_event_id = event.eventId
    view.root_agent_id = str(payload["agentId"])
    view.root_invocation_id = str(payload["invocationId"])
    view.started_at = event.timestamp


@dataclass
class _Positional:
    """Attribution by log position, for logs that carry no wopeval trial markers."""

    current: TrialView | None = None
    pending: list[TrialView] = field(default_factory=list)

    def feed(self, event: RunEvent, payload: dict[str, Any]) -> None:
        if self.current is None:
            if event.type == INVOCATION_STARTED:
                self.current = TrialView(task_id="", trial_index=-1)
                _open(self.current, event, payload)
            return
        _apply(self.current, event, payload)
        closes = payload.get("invocationId") == self.current.root_invocation_id
        if event.type == INVOCATION_COMPLETED and closes:
            self.pending.append(self.current)
            self.current = None


def _apply(view: TrialView, event: RunEvent, payload: dict[str, Any]) -> None:
    if event.type == TOOL_CALLED:
        view.calls.append(
            ObservedCall(
                tool=str(payload["toolName"]),
                inputs=payload.get("inputs"),
                agent_id=str(payload["agentId"]),
            )
        )
    elif event.type == TOOL_RETURNED:
        fixture = payload.get(X_FIXTURE)
        if fixture in ("miss-failed", "miss-live"):
            view.fixture_misses += 1
        if fixture == "miss-failed":
            view.failed_closed = True
    elif event.type == PROVIDER_USAGE:
        view.model_call_count += 1
        view.input_tokens += int(payload.get("inputTokens", 0))
        view.output_tokens += int(payload.get("outputTokens", 0))
        view.cost_usd += float(payload.get("costEstimateUsd", 0.0))
    elif event.type == DECIDED and payload.get("agentId") == view.root_agent_id:
        view.output = payload.get("decision")
        view.has_output = True
    elif (
        event.type == INVOCATION_COMPLETED
        and payload.get("invocationId") == view.root_invocation_id
    ):
        view.outcome = str(payload.get("outcome"))
        view.completed_at = event.timestamp
        error = payload.get(X_ERROR)
        view.error_label = str(error) if error is not None else None
