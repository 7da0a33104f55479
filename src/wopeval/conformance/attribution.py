"""Split a run's wire log into trials, to recompute each trial's grade from its own events.

A trial is one task's child agent invocation (RFC 0244 §B): its root ``agent.invocation-started``
bracket. Three ways to find the trials, tried in this order:

1. **Markers** (wopeval's convention, ``wopeval.wire.events``): the root carries the vendor keys
   ``x-wopeval-taskId`` / ``x-wopeval-trialIndex``, and every event of the trial reaches the
   root through its ``causationId`` chain. Trials may interleave freely in the log.
2. **Causation**: no markers, but each ``eval.scored`` names its trial's root through
   ``causationId``; the task and trial come from the ``eval.scored`` payload.
3. **Position** (any host): the log is read in sequence order; a top-level
   ``agent.invocation-started`` opens a trial, its matching ``agent.invocation-completed``
   closes it, and the next ``eval.scored`` names it. This assumes trials do not interleave.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from wopeval.conformance.reference import ObservedCall

X_TASK_ID = "x-wopeval-taskId"
X_TRIAL_INDEX = "x-wopeval-trialIndex"
INVOCATION_STARTED = "agent.invocation-started"
INVOCATION_COMPLETED = "agent.invocation-completed"
TOOL_CALLED = "agent.tool-called"
EVAL_SCORED = "eval.scored"

Event = Mapping[str, Any]
Method = Literal["markers", "causation", "position"]


@dataclass
class TrialRecord:
    """One trial as read from the log."""

    task_id: str | None = None
    trial_index: int | None = None
    root_event_id: str | None = None
    calls: list[ObservedCall] = field(default_factory=list)
    call_payloads: list[dict[str, Any]] = field(default_factory=list)
    scored: list[dict[str, Any]] = field(default_factory=list)

    def add_call(self, payload: dict[str, Any]) -> None:
        self.call_payloads.append(payload)
        self.calls.append(
            ObservedCall(
                tool=str(payload.get("toolName")),
                inputs=payload.get("inputs"),
                agent_id=str(payload.get("agentId")),
            )
        )


@dataclass
class Attribution:
    """The trials of one run and how they were found."""

    method: Method
    trials: list[TrialRecord]

    def of_task(self, task_id: str) -> list[TrialRecord]:
        """The task's trials that ran (have a bracket), ordered by trial index."""
        found = [t for t in self.trials if t.task_id == task_id and t.root_event_id is not None]
        return sorted(found, key=lambda t: t.trial_index if t.trial_index is not None else -1)

    def trial(self, task_id: str, trial_index: int) -> TrialRecord | None:
        for record in self.of_task(task_id):
            if record.trial_index == trial_index:
                return record
        return None

    @property
    def bracket_count(self) -> int:
        return sum(1 for t in self.trials if t.root_event_id is not None)


def _payload(event: Event) -> dict[str, Any]:
    payload = event.get("payload")
    return payload if isinstance(payload, dict) else {}


def _sequence(event: Event) -> int:
    value = event.get("sequence")
    return value if isinstance(value, int) else 0


def _ordered(events: Iterable[Event]) -> list[Event]:
    return sorted(events, key=_sequence)


def _index(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class _Causation:
    """Resolve an event to the trial root its ``causationId`` chain reaches."""

    def __init__(self, events: list[Event], roots: Mapping[str, TrialRecord]) -> None:
        self._cause = {str(e.get("eventId")): e.get("causationId") for e in events}
        self._roots = roots

    def root_of(self, event: Event) -> TrialRecord | None:
        seen: set[str] = set()
        current = event.get("causationId")
        while isinstance(current, str) and current not in seen:
            if current in self._roots:
                return self._roots[current]
            seen.add(current)
            current = self._cause.get(current)
        return None


def _by_causation(
    events: list[Event], roots: dict[str, TrialRecord], method: Method
) -> Attribution:
    chain = _Causation(events, roots)
    loose: list[TrialRecord] = []
    ordinal: dict[str, int] = {}
    for event in events:
        payload = _payload(event)
        if event.get("type") == TOOL_CALLED:
            record = chain.root_of(event)
            if record is not None:
                record.add_call(payload)
        elif event.get("type") == EVAL_SCORED:
            task_id = str(payload.get("taskId"))
            index = _index(payload.get("trialIndex"))
            if index is None:
                index = ordinal.get(task_id, 0)
            ordinal[task_id] = index + 1
            record = chain.root_of(event)
            if record is None:
                record = _find(roots.values(), task_id, index)
            if record is None:
                record = TrialRecord(task_id, index)
                loose.append(record)
            if record.task_id is None:
                record.task_id, record.trial_index = task_id, index
            record.scored.append(payload)
    return Attribution(method, [*roots.values(), *loose])


def _find(records: Iterable[TrialRecord], task_id: str, index: int) -> TrialRecord | None:
    for record in records:
        if record.task_id == task_id and record.trial_index == index:
            return record
    return None


def _by_position(events: list[Event]) -> Attribution:
    trials: list[TrialRecord] = []
    pending: list[TrialRecord] = []
    open_ids: list[str] = []
    current: TrialRecord | None = None
    ordinal: dict[str, int] = {}
    for event in events:
        payload, kind = _payload(event), event.get("type")
        if kind == INVOCATION_STARTED:
            if not open_ids:
                current = TrialRecord(root_event_id=str(event.get("eventId")))
                trials.append(current)
            open_ids.append(str(payload.get("invocationId")))
        elif kind == INVOCATION_COMPLETED and str(payload.get("invocationId")) in open_ids:
            open_ids.remove(str(payload.get("invocationId")))
            if not open_ids and current is not None:
                pending.append(current)
                current = None
        elif kind == TOOL_CALLED and current is not None:
            current.add_call(payload)
        elif kind == EVAL_SCORED:
            task_id = str(payload.get("taskId"))
            index = _index(payload.get("trialIndex"))
            index = ordinal.get(task_id, 0) if index is None else index
            ordinal[task_id] = index + 1
            if pending:
                record = pending.pop(0)
            else:
                record = TrialRecord()
                trials.append(record)
            record.task_id, record.trial_index = task_id, index
            record.scored.append(payload)
    return Attribution("position", trials)


def attribute(events: Iterable[Event]) -> Attribution:
    """Group a run's events into trials (markers, then causation, then log position)."""
    ordered = _ordered(events)
    marked: dict[str, TrialRecord] = {}
    for event in ordered:
        payload = _payload(event)
        if event.get("type") == INVOCATION_STARTED and X_TASK_ID in payload:
            index = _index(payload.get(X_TRIAL_INDEX))
            record = TrialRecord(str(payload[X_TASK_ID]), index or 0, str(event.get("eventId")))
            marked[str(event.get("eventId"))] = record
    if marked:
        return _by_causation(ordered, marked, "markers")
    caused = {e.get("causationId") for e in ordered if e.get("type") == EVAL_SCORED}
    roots = {
        str(e.get("eventId")): TrialRecord(root_event_id=str(e.get("eventId")))
        for e in ordered
        if e.get("type") == INVOCATION_STARTED and e.get("eventId") in caused
    }
    if roots:
        return _by_causation(ordered, roots, "causation")
    return _by_position(ordered)
