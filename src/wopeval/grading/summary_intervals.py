"""The intervals of a run's summary, recomputed wherever they are shown (pure).

Everything here is a function of the content-free summary (graded from the log, reproduced by
``wopeval grade``) and a confidence level: the summary on the wire is unchanged, and no interval
is stored. Per task: the pass rate ``passedCount/n`` (a task without ``trials`` ran one trial:
``1/1`` or ``0/1``), pass@k and pass^k (:mod:`wopeval.grading.intervals`). Per suite, the task
as the unit: the aggregate score, pass@k and pass^k (``task-clopper-pearson``), and the share of
tasks that passed (Clopper–Pearson over the tasks).
"""

from __future__ import annotations

from dataclasses import dataclass

from wopeval.grading.intervals import (
    CLOPPER_PEARSON,
    DEFAULT_LEVEL,
    TASK_CLOPPER_PEARSON,
    Interval,
    check_level,
    clopper_pearson,
    mean_score_interval,
    pass_at_k_interval,
    pass_hat_k_interval,
    task_clopper_pearson,
)
from wopeval.wire.summary import EvalSummary, TaskSummary

__all__ = ["METHODS", "SuiteIntervals", "TaskIntervals", "summary_intervals", "task_intervals"]

METHODS = {
    "passRate": CLOPPER_PEARSON,
    "meanScore": TASK_CLOPPER_PEARSON,
    "passAtK": f"{CLOPPER_PEARSON}-mapped",
    "passHatK": f"{CLOPPER_PEARSON}-mapped",
    "suite": TASK_CLOPPER_PEARSON,
    "tasksPassed": CLOPPER_PEARSON,
}


@dataclass(frozen=True)
class TaskIntervals:
    """One task's intervals; pass@k and pass^k only for a task with a ``trials`` block."""

    task_id: str
    n: int
    passed_count: int
    pass_rate: Interval
    mean_score: Interval
    pass_at_k: Interval | None
    pass_hat_k: Interval | None

    def to_json(self) -> dict[str, object]:
        doc: dict[str, object] = {
            "taskId": self.task_id,
            "n": self.n,
            "passedCount": self.passed_count,
            "passRate": self.pass_rate.to_json(),
            "meanScore": self.mean_score.to_json(),
        }
        if self.pass_at_k is not None and self.pass_hat_k is not None:
            doc["passAtK"] = self.pass_at_k.to_json()
            doc["passHatK"] = self.pass_hat_k.to_json()
        return doc


@dataclass(frozen=True)
class SuiteIntervals:
    """A run's intervals at ``level``: the suite's and each task's."""

    level: float
    k: int | None
    aggregate: Interval | None
    pass_at_k: Interval | None
    pass_hat_k: Interval | None
    tasks_passed: Interval | None
    tasks: tuple[TaskIntervals, ...]

    def to_json(self) -> dict[str, object]:
        """The ``intervals`` member of ``--json`` outputs: numbers and method names only."""

        def opt(interval: Interval | None) -> dict[str, float] | None:
            return None if interval is None else interval.to_json()

        suite: dict[str, object] = {
            "aggregateScore": opt(self.aggregate),
            "tasksPassed": opt(self.tasks_passed),
        }
        if self.k is not None:
            suite["passAtK"] = opt(self.pass_at_k)
            suite["passHatK"] = opt(self.pass_hat_k)
        return {
            "level": self.level,
            "methods": dict(METHODS),
            "suite": suite,
            "tasks": [task.to_json() for task in self.tasks],
        }


def task_intervals(task: TaskSummary, k: int | None, level: float) -> TaskIntervals:
    """A task's intervals at ``level`` (pass@k and pass^k at the suite's ``k``)."""
    trials = task.trials
    n, c = (trials.n, trials.passedCount) if trials is not None else (1, int(task.passed))
    at_k = hat_k = None
    if trials is not None and k is not None and k <= n:
        at_k = pass_at_k_interval(c, n, k, level)
        hat_k = pass_hat_k_interval(c, n, k, level)
    mean = trials.meanScore if trials is not None else task.score
    return TaskIntervals(
        task.taskId, n, c, clopper_pearson(c, n, level), mean_score_interval(mean, n, level),
        at_k, hat_k,
    )  # fmt: skip


def summary_intervals(summary: EvalSummary, level: float = DEFAULT_LEVEL) -> SuiteIntervals:
    """Every interval of ``summary`` at ``level`` (pure: the summary alone decides)."""
    level = check_level(level)
    k = summary.trialStats.k if summary.trialStats is not None else None
    tasks = tuple(task_intervals(task, k, level) for task in summary.tasks)
    at_k = hat_k = None
    if k is not None:
        with_trials = [t.trials for t in summary.tasks if t.trials is not None]
        at_k = task_clopper_pearson([trials.passAtK for trials in with_trials], level)
        hat_k = task_clopper_pearson([trials.passHatK for trials in with_trials], level)
    count = summary.taskCount
    return SuiteIntervals(
        level=level,
        k=k,
        aggregate=task_clopper_pearson([task.score for task in summary.tasks], level),
        pass_at_k=at_k,
        pass_hat_k=hat_k,
        tasks_passed=clopper_pearson(summary.passedCount, count, level) if count else None,
        tasks=tasks,
    )
