"""Record a run's tool boundary as fixtures: the cassette a replay serves (pure).

``record_suite(document, events)`` writes a run's suite back with each task's tool calls, as one
trial made them, as ``fixtures.toolResponses`` under ``onMiss: "fail"`` (RFC 0244 §D):

- one entry per call, in call order (the order of the trial's ``agent.tool-called`` events), with
  the call's ``args`` and ``argsMatch: "exact"``; repeated calls become a scripted sequence,
  because the gateway serves the first *unconsumed* matching entry;
- a successful call records its ``outcome`` as ``response``; a tool error is recorded as an
  error — ``response: {"x-wopeval-toolError": {"code", "message"}}``, which the gateway serves
  back as the same tool error (:data:`~wopeval.engine.gateway.FIXTURE_ERROR_KEY`);
- a call no tool answered (a fail-closed miss, no live tool registered, arguments that were
  not a JSON object, no ``tool-returned``) is not recorded, so the replay misses it too and
  fails closed, as the source did;
- a call the task's world (``x-wopeval-world``) answered is not recorded either: the world,
  kept in the suite, answers it again and changes the state as it did (a fixture would be
  served before the world and leave the state untouched). The scripted user is kept too, so a
  replayed conversation says and hears what the source did.

The source is typically a run that called live tools (unfixtured, or ``onMiss: "live"`` misses);
calls a fixture served are recorded as served. The trial used is the one asked for, or each
task's lowest trial index that ran; :class:`RecordedTask` says which.

The log is read twice, in order, and never held: once for which trials ran (each trial's view
is dropped once it is closed), once for the chosen trials' calls. So ``events``
may be a paged reader of a stored log (:func:`wopeval.service.runs.fold_log`) as well as a list.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from wopeval.engine.agent import INVALID_ARGUMENTS
from wopeval.engine.gateway import FIXTURE_ERROR_KEY, TOOL_UNAVAILABLE
from wopeval.errors import UserError
from wopeval.grading.views import TrialCollector, TrialView, collect_trials
from wopeval.wire.events import RunEvent, ToolCalled, ToolReturned

__all__ = [
    "FIXTURE_ERROR_KEY",
    "RecordError",
    "RecordedCall",
    "RecordedTask",
    "answer_of",
    "record_suite",
]


class RecordError(UserError):
    """The run cannot be recorded as asked (no such task, the trial did not run)."""


@dataclass(frozen=True)
class RecordedCall:
    tool: str
    args: Any
    response: Any = None
    error_code: str | None = None
    error_message: str | None = None

    def entry(self) -> dict[str, Any]:
        """The ``toolResponses`` entry that replays this call."""
        response = self.response
        if self.error_code is not None:
            error = {"code": self.error_code, "message": self.error_message or ""}
            response = {FIXTURE_ERROR_KEY: error}
        if self.args is None:  # a suite may not compare ``null`` exactly: any args match
            return {"tool": self.tool, "response": response}
        return {"tool": self.tool, "args": self.args, "argsMatch": "exact", "response": response}


@dataclass(frozen=True)
class RecordedTask:
    """One task's recorded boundary, and the trial it came from."""

    task_id: str
    trial_index: int
    calls: tuple[RecordedCall, ...]

    @property
    def error_count(self) -> int:
        return sum(1 for call in self.calls if call.error_code is not None)

    def fixtures(self, previous: dict[str, Any] | None) -> dict[str, Any]:
        kept = {k: v for k, v in (previous or {}).items() if k == "memorySeed"}
        return {**kept, "onMiss": "fail", "toolResponses": [c.entry() for c in self.calls]}


def _calls_of(
    events: Iterable[RunEvent], root_event_ids: Iterable[str]
) -> dict[str, tuple[RecordedCall, ...]]:
    """The answered tool calls of each trial rooted at one of ``root_event_ids``, in call
    order: one pass over the log."""
    called: dict[str, dict[str, ToolCalled]] = {root: {} for root in root_event_ids}
    answered: dict[str, dict[str, RecordedCall]] = {root: {} for root in called}
    for event in events:
        calls = called.get(event.causationId or "")
        if calls is None:
            continue
        payload = event.typed
        if isinstance(payload, ToolCalled):
            calls[payload.callId] = payload
        elif isinstance(payload, ToolReturned) and payload.callId in calls:
            call = answer_of(calls[payload.callId], payload)
            if call is not None:
                answered[event.causationId or ""][payload.callId] = call
    return {
        root: tuple(answered[root][call_id] for call_id in calls if call_id in answered[root])
        for root, calls in called.items()
    }


def answer_of(called: ToolCalled, returned: ToolReturned) -> RecordedCall | None:
    """The fixture that replays one answered call, or None when no tool answered it (a
    fail-closed miss, no live tool, arguments that were not an object: the replay misses it)
    or the task's world did (the replay's world answers it)."""
    if returned.fixture == "miss-failed":
        return None  # no tool answered: the replay misses it too
    if returned.world_rule is not None:
        return None  # the world answers it again, and changes its state as it did
    if returned.status == "ok":
        return RecordedCall(called.toolName, called.inputs, response=returned.outcome)
    error = returned.error
    if error is None or error.code in (TOOL_UNAVAILABLE, INVALID_ARGUMENTS):
        return None
    return RecordedCall(called.toolName, called.inputs, None, error.code, error.message)


def _each_view(
    events: Iterable[RunEvent], keep: Callable[[TrialView], None], reset: Callable[[], None]
) -> None:
    """``keep`` each trial's view of the log, handed over as it closes and dropped. A log that
    touches a closed trial again (never one wopeval writes) is read again with every view kept,
    as :func:`collect_trials` does, after ``reset`` forgets what was kept."""
    collector = TrialCollector(keep)
    for event in events:
        collector.feed(event)
    collector.finish()
    if collector.anomaly is not None:
        reset()
        for view in collect_trials(events).values():
            keep(view)


def _roots(
    events: Iterable[RunEvent], task_ids: set[str], trial: int | None
) -> tuple[dict[str, tuple[int, str]], set[str]]:
    """Each chosen task's trial to record, (trial index, root event id): ``trial``, or the
    lowest index that ran; and the chosen tasks of which any trial ran."""
    roots: dict[str, tuple[int, str]] = {}
    ran: set[str] = set()

    def keep(view: TrialView) -> None:
        task_id, index, root = view.task_id, view.trial_index, view.root_event_id
        if task_id not in task_ids or root is None:
            return
        ran.add(task_id)
        if trial is not None and index != trial:
            return
        if task_id in roots and roots[task_id][0] < index:
            return
        roots[task_id] = (index, root)

    def reset() -> None:
        roots.clear()
        ran.clear()

    _each_view(events, keep, reset)
    return roots, ran


def _ran_indexes(events: Iterable[RunEvent], task_id: str) -> list[int]:
    """Every trial index of ``task_id`` that ran (a pass for the error message only)."""
    ran: set[int] = set()

    def keep(view: TrialView) -> None:
        if view.task_id == task_id and view.root_event_id is not None:
            ran.add(view.trial_index)

    _each_view(events, keep, ran.clear)
    return sorted(ran)


def record_tasks(
    events: Iterable[RunEvent], task_ids: Iterable[str], trial: int | None = None
) -> list[RecordedTask]:
    """Each task's boundary from ``trial`` (or its lowest trial index that ran). ``events`` is
    iterated twice (a list, or a paged reader that starts again): once for the trials that
    ran, once for the chosen ones' calls; only their ids are held between the two."""
    chosen = list(task_ids)
    roots, ran = _roots(events, set(chosen), trial)
    picked: list[tuple[str, int, str]] = []
    for task_id in chosen:
        if task_id not in ran:
            raise RecordError(f"task {task_id!r}: no trial of it ran in this run")
        if task_id not in roots:
            indexes = _ran_indexes(events, task_id)
            raise RecordError(
                f"--trial: task {task_id!r} has no trial {trial} that ran "
                f"(trials that ran: {', '.join(str(i) for i in indexes)})"
            )
        index, root = roots[task_id]
        picked.append((task_id, index, root))
    calls = _calls_of(events, [root for _, _, root in picked])
    return [RecordedTask(task_id, index, calls[root]) for task_id, index, root in picked]


def record_suite(
    document: dict[str, Any],
    events: Iterable[RunEvent],
    *,
    trial: int | None = None,
    task_ids: Sequence[str] | None = None,
) -> tuple[dict[str, Any], list[RecordedTask]]:
    """The suite document with the chosen tasks' fixtures recorded from ``events`` (iterated
    twice).

    Tasks not chosen are kept as they were. Raises :class:`RecordError` naming an unknown task.
    """
    tasks = [dict(task) for task in document.get("tasks") or ()]
    known = [str(task.get("taskId")) for task in tasks]
    chosen = list(task_ids) if task_ids else known
    for task_id in chosen:
        if task_id not in known:
            raise RecordError(f"--task: the run's suite has no task {task_id!r}")
    recorded = record_tasks(events, chosen, trial)
    by_id = {item.task_id: item for item in recorded}
    for task in tasks:
        item = by_id.get(str(task.get("taskId")))
        if item is not None:
            task["fixtures"] = item.fixtures(task.get("fixtures"))
    return {**document, "tasks": tasks}, recorded
