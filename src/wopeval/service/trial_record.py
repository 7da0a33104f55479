"""One stored trial's recorded tool calls and results, read back from a run's log.

``await read_trial(store, run_id, task_id, trial_index)`` is what ``wopeval fork`` (and
``wopeval promote``) start from: the run, refused naming what is wrong when it is not there,
not finished, has no such task or trial; and the trial's calls in the order they were recorded,
each with its arguments, how the gateway served it and its result or tool error.

A call carries what the log says of it: :attr:`TrialCall.gateway` is False for a call the agent's
adapter refused before it reached the tool gateway (its arguments were not JSON: no fixture
marker on its result); :attr:`TrialCall.result_captured` is False when the log has no result for
it (no ``agent.tool-returned``, or a success whose ``outcome`` was left out: a content-free
import). The log is read in pages, twice (the trials that ran, then the chosen trial's calls);
only the chosen trial's calls are held.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from wopeval.errors import RunNotFound, UserError
from wopeval.events.store import EventStore, RunRecord
from wopeval.grading.views import TrialCollector, TrialView
from wopeval.service.runs import fold_log
from wopeval.wire.events import RunEvent, ToolCalled, ToolReturned
from wopeval.wire.vocab import FixtureOutcome

__all__ = ["TrialCall", "TrialNotReadable", "TrialRecord", "read_trial"]


class TrialNotReadable(UserError):
    """The trial asked for cannot be read back (no such task or trial, the run unfinished)."""


@dataclass(frozen=True)
class TrialCall:
    """One recorded tool call of the trial: ``index`` is its 0-based position in the log."""

    index: int
    tool: str
    args: Any
    agent_id: str
    answered: bool = False  # an ``agent.tool-returned`` was recorded for it
    result_captured: bool = False
    ok: bool = False
    outcome: Any = None
    error_code: str | None = None
    error_message: str | None = None
    fixture: FixtureOutcome | None = None  # how the gateway served it (None: it never did)
    fixture_index: int | None = None

    @property
    def gateway(self) -> bool:
        """It reached the tool gateway (a fixture, a live tool or a fail-closed miss)."""
        return self.fixture is not None


@dataclass(frozen=True)
class TrialRecord:
    """The run, the trial's final view (its score and failure, as graded) and its calls."""

    run: RunRecord
    task_id: str
    trial_index: int
    view: TrialView
    calls: tuple[TrialCall, ...]

    @property
    def gateway_calls(self) -> tuple[TrialCall, ...]:
        """The calls that reached the tool gateway, in order."""
        return tuple(call for call in self.calls if call.gateway)


async def read_trial(store: EventStore, run_id: str, task_id: str, trial_index: int) -> TrialRecord:
    """The stored trial ``(task_id, trial_index)`` of ``run_id``. Raises :class:`RunNotFound`
    or :class:`TrialNotReadable` (a :class:`UserError` naming the option: ``--task``,
    ``--trial``) when it cannot be read back."""
    record = await store.get_run(run_id)
    if record is None or record.kind != "eval":
        raise RunNotFound(f"RUN: no eval run {run_id!r} in the store")
    tasks = [str(t.get("taskId")) for t in record.suite_document.get("tasks") or ()]
    if task_id not in tasks:
        raise TrialNotReadable(
            f"--task: run {run_id} has no task {task_id!r} (its tasks: {', '.join(tasks)})"
        )
    if not record.terminal:
        raise TrialNotReadable(
            f"RUN: run {run_id} is {record.status}, not finished: finish it first "
            "(wopeval run --resume RUN)"
        )

    def fold(events: Iterable[RunEvent]) -> tuple[TrialView | None, list[int], list[TrialCall]]:
        views = _views_of(events, task_id)
        view = views.get(trial_index)
        ran = sorted(views)
        if view is None or view.root_event_id is None:
            return None, ran, []
        return view, ran, _calls_of(events, view.root_event_id)

    view, ran, calls = await fold_log(store, run_id, fold)
    if view is None:
        listed = ", ".join(str(i) for i in ran) or "none"
        raise TrialNotReadable(
            f"--trial: task {task_id!r} of run {run_id} has no trial {trial_index} that ran "
            f"(trials that ran: {listed})"
        )
    return TrialRecord(record, task_id, trial_index, view, tuple(calls))


def _views_of(events: Iterable[RunEvent], task_id: str) -> dict[int, TrialView]:
    """Each trial of ``task_id`` that ran, by index: its final view (a view is kept only for
    the task asked for; an anomalous log is read again keeping every view)."""
    views: dict[int, TrialView] = {}

    def keep(view: TrialView) -> None:
        if view.task_id == task_id and view.root_event_id is not None:
            views[view.trial_index] = view

    collector = TrialCollector(keep)
    for event in events:
        collector.feed(event)
    collector.finish()
    if collector.anomaly is not None:
        views.clear()
        every = TrialCollector(closing=False)
        for event in events:
            every.feed(event)
        every.finish()
        for view in every.views.values():
            keep(view)
    return views


def _calls_of(events: Iterable[RunEvent], root: str) -> list[TrialCall]:
    """The calls of the trial rooted at ``root``, in the order they were recorded."""
    calls: dict[str, TrialCall] = {}
    for event in events:
        if event.causationId != root:
            continue
        payload = event.typed
        if isinstance(payload, ToolCalled):
            calls[payload.callId] = TrialCall(
                len(calls), payload.toolName, payload.inputs, payload.agentId
            )
        elif isinstance(payload, ToolReturned) and payload.callId in calls:
            raw = event.payload if isinstance(event.payload, dict) else {}
            calls[payload.callId] = _answered(calls[payload.callId], payload, raw)
    return list(calls.values())


def _answered(call: TrialCall, returned: ToolReturned, raw: dict[str, Any]) -> TrialCall:
    ok = returned.status == "ok"
    error = returned.error
    return TrialCall(
        index=call.index,
        tool=call.tool,
        args=call.args,
        agent_id=call.agent_id,
        answered=True,
        result_captured=("outcome" in raw) if ok else error is not None,
        ok=ok,
        outcome=returned.outcome if ok else None,
        error_code=None if ok or error is None else error.code,
        error_message=None if ok or error is None else error.message,
        fixture=returned.fixture,
        fixture_index=returned.fixture_index,
    )
