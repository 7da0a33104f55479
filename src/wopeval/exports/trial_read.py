"""One stored trial read back from a run's log: its view, and each tool call with its answer
(pure).

:func:`read_trial` reads the log once, holding only the chosen trial's calls (a trial a resume or
an infrastructure retry re-ran keeps its last attempt's, as grading does). ``events`` may be a
paged reader of a stored log (:func:`wopeval.service.runs.fold_log`); it is read a second time
only for a log that touches a closed trial again (never one wopeval writes), with every view kept,
as :func:`~wopeval.grading.views.collect_trials` reads it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from wopeval.grading.views import TrialCollector, TrialView, collect_trials
from wopeval.wire.events import InvocationStarted, RunEvent, ToolCalled, ToolReturned

__all__ = ["StoredCall", "StoredTrial", "read_trial"]


@dataclass(frozen=True)
class StoredCall:
    """One ``agent.tool-called`` of the trial, and its ``agent.tool-returned`` if any."""

    index: int
    called: ToolCalled
    returned: ToolReturned | None

    @property
    def tool(self) -> str:
        return self.called.toolName

    @property
    def args(self) -> Any:
        return self.called.inputs


@dataclass(frozen=True)
class StoredTrial:
    """What the log holds of one trial: its view (``None``: it is not in the log), the calls of
    its last attempt in call order, and the indexes of the task's trials that are in the log."""

    view: TrialView | None
    calls: tuple[StoredCall, ...]
    indexes: tuple[int, ...]
    incomplete: int = 0


class _Calls:
    """The chosen trial's calls, per attempt (root event id), in call order."""

    def __init__(self, task_id: str, trial_index: int) -> None:
        self.key = (task_id, trial_index)
        self.called: dict[str, dict[str, ToolCalled]] = {}
        self.returned: dict[str, dict[str, ToolReturned]] = {}
        self.incomplete: dict[str, int] = {}

    def feed(self, event: RunEvent) -> None:
        payload = event.typed
        if isinstance(payload, InvocationStarted):
            if (payload.task_id, payload.trial_index or 0) == self.key:
                self.called[event.eventId] = {}
                self.returned[event.eventId] = {}
                if payload.trace_incomplete:
                    self.incomplete[event.eventId] = payload.trace_incomplete
            return
        calls = self.called.get(event.causationId or "")
        if calls is None:
            return
        if isinstance(payload, ToolCalled):
            calls[payload.callId] = payload
        elif isinstance(payload, ToolReturned) and payload.callId in calls:
            self.returned[event.causationId or ""].setdefault(payload.callId, payload)

    def of(self, root: str | None) -> tuple[tuple[StoredCall, ...], int]:
        if root is None or root not in self.called:
            return (), 0
        answers = self.returned[root]
        calls = tuple(
            StoredCall(index, called, answers.get(call_id))
            for index, (call_id, called) in enumerate(self.called[root].items())
        )
        return calls, self.incomplete.get(root, 0)


def read_trial(events: Iterable[RunEvent], task_id: str, trial_index: int) -> StoredTrial:
    """The stored trial ``(task_id, trial_index)`` of the log ``events``."""
    calls = _Calls(task_id, trial_index)
    found: list[TrialView] = []
    indexes: set[int] = set()

    def keep(view: TrialView) -> None:
        if view.task_id != task_id:
            return
        indexes.add(view.trial_index)
        if view.trial_index == trial_index:
            found[:] = [view]

    collector = TrialCollector(keep)
    for event in events:
        collector.feed(event)
        calls.feed(event)
    collector.finish()
    if collector.anomaly is not None:
        found.clear()
        indexes.clear()
        for view in collect_trials(events).values():
            keep(view)
    chosen = found[0] if found else None
    stored, incomplete = calls.of(chosen.root_event_id if chosen is not None else None)
    return StoredTrial(chosen, stored, tuple(sorted(indexes)), incomplete)
