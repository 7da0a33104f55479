"""Read a run's event log into per-trial views (pure).

A trial is found by its root ``agent.invocation-started`` (the one carrying ``x-wopeval-taskId``);
every event of the trial carries ``causationId`` = the root's ``eventId`` (see
:mod:`wopeval.wire.events`), so concurrent trials can interleave freely in the log. An
``eval.scored`` without a bracket (a trial skipped by a cost ceiling) still yields a view. When a
resumed run re-runs a trial interrupted before its ``eval.scored``, the later bracket supersedes
the unfinished one (:mod:`wopeval.engine.resume`); so does an infrastructure retry's next
attempt (:mod:`wopeval.engine.retry`), and the view keeps the causes of the attempts it superseded.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from typing import Any, TypeVar

from wopeval.grading.log_event import LogEvent
from wopeval.grading.trajectory import ObservedCall
from wopeval.wire.events import (
    Decided,
    EvalScored,
    Failure,
    InvocationCompleted,
    InvocationStarted,
    Payload,
    ProviderUsage,
    RetryMark,
    ToolCalled,
    ToolReturned,
    TrialFailed,
    UserTurn,
    WorldStateRecorded,
)
from wopeval.wire.vocab import (
    DECIDED,
    EVAL_SCORED,
    INVOCATION_COMPLETED,
    INVOCATION_STARTED,
    PROVIDER_USAGE,
    TOOL_CALLED,
    TOOL_RETURNED,
    TRIAL_FAILED,
    USER_TURN,
    VENDOR_PREFIXES,
    WORLD_STATE,
    X_ERROR,
    X_TASK_ID,
)

__all__ = ["VENDOR_PREFIXES", "X_ERROR", "TrialCollector", "TrialView", "closed", "collect_trials"]


@dataclass(slots=True)
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
    # For each miss (one per missed tool): how many fixture entries had been served by then,
    # and the position of the missed call in ``calls`` (None: its call event was not seen).
    miss_served: list[int] = field(default_factory=list)
    miss_calls: list[int | None] = field(default_factory=list)
    # The calls not returned yet: callId → position in ``calls``.
    open_calls: dict[str, int] = field(default_factory=dict)
    output: Any = None
    has_output: bool = False
    outcome: str | None = None
    error_label: str | None = None
    failure: Failure | None = None
    started_at: str | None = None
    completed_at: str | None = None
    scored: EvalScored | None = None
    reason: TrialFailed | None = None
    # Its conversation with a simulated user: messages answered (``ended`` ones not counted),
    # the reply entries consumed, how it ended (stop, miss, max-turns) and the message missed.
    user_turns: int = 0
    user_replies: list[int] = field(default_factory=list)
    user_end: str | None = None
    user_missed: Any = None
    # A simulated (LLM) user's failure: its cause and what went wrong (an ``error`` turn).
    user_error: tuple[str, str] | None = None
    # This attempt's retry mark, and the causes of the earlier attempts retries superseded.
    retry: RetryMark | None = None
    retries: tuple[str, ...] = ()
    # A trial replayed from a model cassette: the latency it was recorded with.
    replayed_latency_ms: int | None = None
    # The trial's final world state (``wopeval.world-state``), for a task with a world.
    world_state: Any = None
    has_world_state: bool = False

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
        if self.replayed_latency_ms is not None:
            return self.replayed_latency_ms
        delta = _parse_ts(self.completed_at) - _parse_ts(self.started_at)
        return max(0, math.floor(delta.total_seconds() * 1000))


@lru_cache(maxsize=1024)
def _parse_ts(value: str) -> datetime:
    """A stored timestamp as a datetime (kept: a run's timestamps repeat, many a millisecond)."""
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def collect_trials(events: Iterable[LogEvent]) -> dict[tuple[str, int], TrialView]:
    """Group a run's events by ``(taskId, trialIndex)``. Pure; order of the log is kept.

    wopeval's own logs attribute by ``causationId`` (trials interleave). A log from another
    host without wopeval's markers is read by position (RFC 0081 order): a top-level bracket
    owns every event until it closes, and belongs to the next unattributed ``eval.scored``.
    Payloads are read through their typed models (:attr:`LogEvent.typed`). Every view is kept;
    :class:`TrialCollector` with ``on_close`` hands them over one at a time instead.
    """
    collector = TrialCollector()
    for event in events:
        collector.feed(event)
    return collector.views


def closed(view: TrialView) -> bool:
    """Nothing later in a well-formed log changes this view: it is scored, its bracket (if it
    ran) is complete, and a trial that did not pass has its ``wopeval.trial-failed`` reason —
    the engine records ``eval.scored`` then the reason as the trial's last events."""
    scored = view.scored
    if scored is None or (view.ran and view.completed_at is None):
        return False
    return scored.passed or view.reason is not None


class TrialCollector:
    """:func:`collect_trials` one event at a time; with ``on_close``, each view is handed over
    once :func:`closed` and forgotten, so only the open (interleaved) trials are held.

    The views handed over are those :func:`collect_trials` would give, provided no later event
    touches a closed trial — true of every log wopeval writes or imports. A log where one does (a
    second ``eval.scored`` or bracket for a closed key, an event caused by a closed root, a
    causation chain of another host) sets :attr:`anomaly`, and the caller must read the log
    again without closing (:func:`wopeval.grading.summary.grade_run` does). Closed keys are
    remembered in one byte per planned trial (``planned``: taskId → trial count), others in a set.
    With ``closing=False`` every view is kept and handed over by :meth:`finish`.
    """

    def __init__(
        self,
        on_close: Callable[[TrialView], None] | None = None,
        planned: Mapping[str, int] | None = None,
        *,
        closing: bool = True,
    ) -> None:
        self.views: dict[tuple[str, int], TrialView] = {}
        self.anomaly: str | None = None
        self._on_close = on_close
        self._closing = closing and on_close is not None
        self._by_root: dict[str, TrialView] = {}
        self._positional = _Positional()
        self._planned = {task: bytearray(count) for task, count in (planned or {}).items()}
        self._closed_other: set[tuple[str, int]] = set()

    def feed(self, event: LogEvent) -> None:
        cause = event.causationId
        if cause is not None and (view := self._by_root.get(cause)) is not None:
            # The common case: an event of an open trial (_apply inlined; no keyed type is in
            # _APPLY, so a type found there is never one _feed_keyed would read).
            type_ = event.type
            apply = _APPLY.get(type_)
            if apply is not None:
                apply(view, event.typed, event)
                if apply is _completed:
                    self._maybe_close((view.task_id, view.trial_index), view)
                return
            if type_ not in _KEYED:
                return
        self._feed_keyed(event)

    def _feed_keyed(self, event: LogEvent) -> None:
        if event.type == INVOCATION_STARTED and _has_key(event, X_TASK_ID):
            started = _as(event, InvocationStarted)
            key = (started.task_id or "", started.trial_index or 0)
            self._touch(key, event)
            view = self.views.get(key)
            if view is None or (view.ran and view.scored is None):  # a resume's or retry's
                earlier = _retried(view)
                view = self.views[key] = TrialView(task_id=key[0], trial_index=key[1])
                view.retries = earlier
            _open(view, event, started)
            self._by_root[event.eventId] = view
        elif event.type == EVAL_SCORED:
            scored = _as(event, EvalScored)
            key = (scored.taskId, scored.trialIndex or 0)
            self._touch(key, event)
            pending = self._positional.pending
            if key not in self.views and not self._is_closed(key) and pending:
                view = pending.pop(0)
                view.task_id, view.trial_index = key
                self.views[key] = view
            view = self._view(key)
            view.scored = scored
            self._maybe_close(key, view)
        elif event.type == TRIAL_FAILED:
            reason = _as(event, TrialFailed)
            key = (reason.taskId, reason.trialIndex)
            self._touch(key, event)
            view = self._view(key)
            view.reason = reason
            self._maybe_close(key, view)
        elif event.causationId is not None and event.causationId in self._by_root:
            view = self._by_root[event.causationId]
            _apply(view, event)
            if event.type == INVOCATION_COMPLETED:
                self._maybe_close((view.task_id, view.trial_index), view)
        else:
            if event.causationId is not None and self._closing:
                self._flag(event, "an event caused by no open trial")
            self._positional.feed(event)

    def _view(self, key: tuple[str, int]) -> TrialView:
        """The key's view, a new one if it has none (built only then: a view is not small)."""
        view = self.views.get(key)
        if view is None:
            view = self.views[key] = TrialView(task_id=key[0], trial_index=key[1])
        return view

    def finish(self) -> None:
        """Hand over every view still open (unscored, or failed without a recorded reason)."""
        if self._on_close is None:
            return
        for view in list(self.views.values()):
            self._on_close(view)
        self.views.clear()
        self._by_root.clear()

    def _maybe_close(self, key: tuple[str, int], view: TrialView) -> None:
        hand_over = self._on_close
        if not self._closing or hand_over is None or not closed(view):
            return
        if self.views.get(key) is not view:
            return
        del self.views[key]
        if view.root_event_id is not None:
            self._by_root.pop(view.root_event_id, None)
        marks = self._planned.get(key[0])
        if marks is not None and 0 <= key[1] < len(marks):
            marks[key[1]] = 1
        else:
            self._closed_other.add(key)
        hand_over(view)

    def _is_closed(self, key: tuple[str, int]) -> bool:
        marks = self._planned.get(key[0])
        if marks is not None and 0 <= key[1] < len(marks):
            return marks[key[1]] == 1
        return key in self._closed_other

    def _touch(self, key: tuple[str, int], event: LogEvent) -> None:
        if self._closing and self._is_closed(key):
            self._flag(event, f"{event.type} for the closed trial {key}")

    def _flag(self, event: LogEvent, why: str) -> None:
        if self.anomaly is None:
            self.anomaly = f"event {event.sequence}: {why}"


_P = TypeVar("_P", bound=Payload)


def _as(event: LogEvent, model: type[_P]) -> _P:
    """The event's typed payload (``event.type`` selects ``model``)."""
    payload = event.typed
    if not isinstance(payload, model):  # pragma: no cover - PAYLOAD_MODELS maps type → model
        raise TypeError(f"event {event.sequence}: {event.type} is not a {model.__name__}")
    return payload


def _has_key(event: LogEvent, key: str) -> bool:
    payload = event.payload
    return isinstance(payload, dict) and key in payload


def _open(view: TrialView, event: LogEvent, started: InvocationStarted) -> None:
    view.root_event_id = event.eventId
    view.root_agent_id = started.agentId
    view.root_invocation_id = started.invocationId
    view.started_at = event.timestamp


@dataclass
class _Positional:
    """Attribution by log position, for logs that carry no wopeval trial markers."""

    current: TrialView | None = None
    pending: list[TrialView] = field(default_factory=list)

    def feed(self, event: LogEvent) -> None:
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


def _retried(superseded: TrialView | None) -> tuple[str, ...]:
    """The retry causes a new attempt carries on from the attempt it supersedes."""
    if superseded is None:
        return ()
    mark = superseded.retry
    return superseded.retries + ((mark.cause,) if mark is not None else ())


def _apply(view: TrialView, event: LogEvent) -> None:
    """Add one event of the trial to its view; an event type grading does not read is not
    decoded at all (its payload's model is checked only where it is read)."""
    apply = _APPLY.get(event.type)
    if apply is not None:
        apply(view, event.typed, event)


def _tool_called(view: TrialView, payload: Any, _: LogEvent) -> None:
    call: ToolCalled = payload
    view.open_calls[call.callId] = len(view.calls)
    view.calls.append(ObservedCall(call.toolName, call.inputs, call.agentId, view.user_turns))


def _tool_returned(view: TrialView, payload: Any, _: LogEvent) -> None:
    returned: ToolReturned = payload
    position = view.open_calls.pop(returned.callId, None)
    fixture = returned.fixture
    if fixture in ("miss-failed", "miss-live"):
        view.fixture_misses += 1
        view.missed_tools.append(returned.toolName)
        view.miss_served.append(len(view.fixture_indexes))
        view.miss_calls.append(position)
    if fixture == "miss-failed":
        view.failed_closed = True
    if returned.fixture_index is not None:
        view.fixture_indexes.append(returned.fixture_index)


def _world_state(view: TrialView, payload: Any, _: LogEvent) -> None:
    recorded: WorldStateRecorded = payload
    view.world_state = recorded.state
    view.has_world_state = True


def _user_turn_event(view: TrialView, payload: Any, _: LogEvent) -> None:
    _user_turn(view, payload)


def _provider_usage(view: TrialView, payload: Any, _: LogEvent) -> None:
    usage: ProviderUsage = payload
    view.model_call_count += 1
    view.input_tokens += usage.inputTokens
    view.output_tokens += usage.outputTokens
    view.cost_usd += usage.costEstimateUsd or 0.0


def _decided(view: TrialView, payload: Any, _: LogEvent) -> None:
    decided: Decided = payload
    if decided.agentId == view.root_agent_id:
        view.output = decided.decision
        view.has_output = True


def _completed(view: TrialView, payload: Any, event: LogEvent) -> None:
    completed: InvocationCompleted = payload
    if completed.invocationId != view.root_invocation_id:
        return
    view.outcome = completed.outcome
    view.completed_at = event.timestamp
    view.error_label = completed.error_label
    view.failure = completed.failure
    view.retry = completed.retry
    view.replayed_latency_ms = completed.replayed_latency_ms


# The types that name their trial's key (a root's started only when it carries the task id).
_KEYED = frozenset({INVOCATION_STARTED, EVAL_SCORED, TRIAL_FAILED})
# Each event type a trial's view reads, and how (its payload is that type's model).
_APPLY: dict[str, Callable[[TrialView, Any, LogEvent], None]] = {
    TOOL_CALLED: _tool_called,
    TOOL_RETURNED: _tool_returned,
    WORLD_STATE: _world_state,
    USER_TURN: _user_turn_event,
    PROVIDER_USAGE: _provider_usage,
    DECIDED: _decided,
    INVOCATION_COMPLETED: _completed,
}


def _user_turn(view: TrialView, turn: UserTurn) -> None:
    if turn.kind == "ended":
        return
    view.user_turns += 1
    if turn.replyIndex is not None:
        view.user_replies.append(turn.replyIndex)
    if turn.kind != "reply" and view.user_end is None:
        view.user_end = turn.kind
        if turn.kind == "miss":
            view.user_missed = turn.message
        elif turn.kind == "error":
            view.user_error = (turn.cause or "unknown", turn.error or "")
