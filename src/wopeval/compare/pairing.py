"""Pair two eval runs task by task (RFC 0244 §F).

A host emitting a regression ``verdict`` MUST compare only tasks present in both runs, paired by
``taskId``, and MUST report how many it paired. :func:`pair_tasks` is that rule and nothing else:
every method in :mod:`wopeval.compare.methods` reads only the table it returns.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from wopeval.wire.summary import EvalSummary, TaskSummary


@dataclass(frozen=True)
class PairedTask:
    """One task present in both runs.

    ``*_mean`` is the per-task mean score: ``trials.meanScore`` when the task ran trials
    (RFC 0244 §B), else the task ``score``. ``*_passed`` is the task pass decision (``passed``).
    ``*_pass_rate`` is ``trials.passedCount / trials.n``, or 1.0/0.0 from ``passed`` without
    trials.
    """

    task_id: str
    baseline_mean: float
    candidate_mean: float
    baseline_passed: bool
    candidate_passed: bool
    baseline_pass_rate: float
    candidate_pass_rate: float

    @property
    def difference(self) -> float:
        """Candidate minus baseline per-task mean: positive means the candidate scored higher."""
        return self.candidate_mean - self.baseline_mean


def task_mean(task: TaskSummary) -> float:
    """The per-task mean score: ``trials.meanScore`` with trials, else ``score``."""
    return task.trials.meanScore if task.trials is not None else task.score


def task_pass_rate(task: TaskSummary) -> float:
    """The per-trial pass rate: ``passedCount / n`` with trials, else 1.0 or 0.0 from ``passed``."""
    if task.trials is not None:
        return task.trials.passedCount / task.trials.n
    return 1.0 if task.passed else 0.0


def _index_by_task_id(tasks: Sequence[TaskSummary], side: str) -> dict[str, TaskSummary]:
    """Map ``taskId`` to its entry, refusing a summary that lists a task twice."""
    index: dict[str, TaskSummary] = {}
    for task in tasks:
        if task.taskId in index:
            raise ValueError(f"{side} summary lists taskId {task.taskId!r} more than once")
        index[task.taskId] = task
    return index


def pair_tasks(baseline: EvalSummary, candidate: EvalSummary) -> list[PairedTask]:
    """Pair the tasks of two runs by ``taskId`` (RFC 0244 §F).

    Only tasks present in both runs are paired; the result follows the candidate's suite order.
    ``len(result)`` is the ``pairedTaskCount`` to report. A summary listing the same ``taskId``
    twice cannot be paired and raises :class:`ValueError`.
    """
    base = _index_by_task_id(baseline.tasks, "baseline")
    _index_by_task_id(candidate.tasks, "candidate")
    pairs: list[PairedTask] = []
    for cand in candidate.tasks:
        old = base.get(cand.taskId)
        if old is None:
            continue
        pairs.append(
            PairedTask(
                task_id=cand.taskId,
                baseline_mean=task_mean(old),
                candidate_mean=task_mean(cand),
                baseline_passed=old.passed,
                candidate_passed=cand.passed,
                baseline_pass_rate=task_pass_rate(old),
                candidate_pass_rate=task_pass_rate(cand),
            )
        )
    return pairs
