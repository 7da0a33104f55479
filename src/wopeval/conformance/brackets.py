"""Every event inside each trial's bracket, for the counts RFC 0244 §C takes "inside the brackets".

Trials are found exactly as :mod:`wopeval.conformance.attribution` finds them (markers, then
causation, then log position). An event belongs to a trial when it lies inside the trial's root
bracket, from its ``agent.invocation-started`` to the matching ``agent.invocation-completed``
(same ``invocationId``; to the end of the log if it never closes), and, when trials were found
through ``causationId``, its causation chain reaches that root (trials may interleave). Events
outside every bracket (a judge's ``provider.usage``, the ``eval.*`` events) belong to no trial.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from wopeval.conformance.attribution import INVOCATION_COMPLETED, Event, attribute

TrialKey = tuple[str, int]


def _sequence(event: Event) -> int:
    value = event.get("sequence")
    return value if isinstance(value, int) else 0


def _payload(event: Event) -> dict[str, Any]:
    payload = event.get("payload")
    return payload if isinstance(payload, dict) else {}


def _spans(ordered: list[Event], roots: set[str]) -> dict[str, tuple[int, int]]:
    """Each root's bracket as ``(first, last)`` positions in ``ordered``, both inclusive."""
    spans: dict[str, tuple[int, int]] = {}
    for start, event in enumerate(ordered):
        root = str(event.get("eventId"))
        if root not in roots:
            continue
        invocation = _payload(event).get("invocationId")
        end = len(ordered) - 1
        for position in range(start + 1, len(ordered)):
            later = ordered[position]
            closes = _payload(later).get("invocationId") == invocation
            if later.get("type") == INVOCATION_COMPLETED and closes:
                end = position
                break
        spans[root] = (start, end)
    return spans


def _reaches(event: Event, root: str, causes: Mapping[str, Any]) -> bool:
    seen: set[str] = set()
    current = event.get("causationId")
    while isinstance(current, str) and current not in seen:
        if current == root:
            return True
        seen.add(current)
        current = causes.get(current)
    return False


def trial_events(events: Iterable[Event]) -> dict[TrialKey, list[Event]]:
    """``(taskId, trialIndex)`` → the events inside that trial's bracket, in log order.

    The root ``agent.invocation-started`` itself is left out. A trial whose bracket is found but
    whose task or index is unknown is left out too (the kit cannot say whose it is).
    """
    ordered = sorted(events, key=_sequence)
    attribution = attribute(ordered)
    owners: dict[str, TrialKey] = {
        record.root_event_id: (record.task_id, record.trial_index)
        for record in attribution.trials
        if record.root_event_id is not None
        and record.task_id is not None
        and record.trial_index is not None
    }
    causal = attribution.method != "position"
    causes = {str(e.get("eventId")): e.get("causationId") for e in ordered}
    found: dict[TrialKey, list[Event]] = {key: [] for key in owners.values()}
    for root, (first, last) in _spans(ordered, set(owners)).items():
        for event in ordered[first + 1 : last + 1]:
            if not causal or _reaches(event, root, causes):
                found[owners[root]].append(event)
    return found
