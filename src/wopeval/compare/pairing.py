"""Pair two eval runs task by task (RFC 0244 §F).

A host emitting a regression ``verdict`` MUST compare only tasks present in both runs, paired by
``taskId``, and MUST report how many it paired. :func:`pair_tasks` is that rule and nothing else:
every method in :mod:`wopeval.compare.methods` reads only the table it returns.

When both runs stored the digests of their task definitions (:mod:`wopeval.suite.digest`), a task
is the same task only when its ``taskId`` **and** its digest agree: a task whose input,
expectation or fixtures changed between the runs is not present in both, so it is left out
(:func:`changed_tasks` names it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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


Digests = Mapping[str, str]
"""A run's task definition digests by ``taskId``."""


def changed_tasks(
    baseline: EvalSummary,
    candidate: EvalSummary,
    baseline_digests: Digests | None,
    candidate_digests: Digests | None,
) -> tuple[str, ...]:
    """The ``taskId`` s in both runs whose definitions differ, in the candidate's suite order.

    Empty when either run has no digests (nothing can be checked). A task missing from a run's
    digests counts as changed: a definition that cannot be shown unchanged is not compared.
    """
    if baseline_digests is None or candidate_digests is None:
        return ()
    base_ids = {task.taskId for task in baseline.tasks}
    return tuple(
        task.taskId
        for task in candidate.tasks
        if task.taskId in base_ids
        and (
            task.taskId not in candidate_digests
            or baseline_digests.get(task.taskId) != candidate_digests[task.taskId]
        )
    )


def pair_tasks(
    baseline: EvalSummary, candidate: EvalSummary, changed: Sequence[str] = ()
) -> list[PairedTask]:
    """Pair the tasks of two runs by ``taskId`` (RFC 0244 §F), leaving out ``changed`` ones.

    Only tasks present in both runs are paired; the result follows the candidate's suite order.
    ``len(result)`` is the ``pairedTaskCount`` to report. A summary listing the same ``taskId``
    twice cannot be paired and raises :class:`ValueError`.
    """
    base = _index_by_task_id(baseline.tasks, "baseline")
    _index_by_task_id(candidate.tasks, "candidate")
    left_out = set(changed)
    pairs: list[PairedTask] = []
    for cand in candidate.tasks:
        old = base.get(cand.taskId)
        if old is None or cand.taskId in left_out:
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
