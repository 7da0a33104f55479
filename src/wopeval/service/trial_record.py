"""One stored trial's recorded tool calls and results, read back from a run's stored log.

``await read_trial(store, run_id, task_id, trial_index)`` is what ``wopeval fork`` starts from:
the run, refused naming what is wrong when it is not there, not finished, has no such task or
trial; and the trial's calls in the order they were recorded, each with its arguments, how the
gateway served it and its result or tool error (:class:`~wopeval.grading.trial_calls.TrialCall`,
read by :func:`~wopeval.grading.trial_calls.read_trial_calls` over the log read in pages).
"""

from __future__ import annotations

from dataclasses import dataclass

from wopeval.errors import RunNotFound, UserError
from wopeval.events.store import EventStore, RunRecord
from wopeval.grading.trial_calls import TrialCall, read_trial_calls
from wopeval.grading.views import TrialView
from wopeval.service.runs import fold_log

__all__ = ["TrialNotReadable", "TrialRecord", "read_trial"]


class TrialNotReadable(UserError):
    """The trial asked for cannot be read back (no such task or trial, the run unfinished)."""


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
    trial = await fold_log(store, run_id, lambda log: read_trial_calls(log, task_id, trial_index))
    view = trial.view
    if view is None or not view.ran:
        listed = ", ".join(str(i) for i in trial.ran) or "none"
        raise TrialNotReadable(
            f"--trial: task {task_id!r} of run {run_id} has no trial {trial_index} that ran "
            f"(trials that ran: {listed})"
        )
    return TrialRecord(record, task_id, trial_index, view, trial.calls)
