"""The trials progress bar of ``wopeval run`` and ``run --resume`` (stderr, terminals only)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping

    from rich.progress import Progress

    from wopeval.grading.trial import TrialGrade
    from wopeval.suite.adaptive import AdaptivePlan
    from wopeval.suite.models import AgentEvalSuite

__all__ = ["ProgressView", "progress_bar"]


class ProgressView:
    """A progress bar: trials done / total and the pass rate so far.

    ``total`` counts every planned trial, an adaptive task's at its maximum. With the run's
    ``suite``, an adaptive task's outcomes are read by the sequential test the engine applies
    (:func:`~wopeval.grading.adaptive.first_stop` over its trials in order): when it decides
    early, the trials it will not run leave the total and are counted as saved, so the bar ends
    full and says how many trials the stops saved.

    A resumed run's view counts only the trials left (``total``) and is given the outcomes of
    the trials its log already holds (``finished``: each scored trial's pass, an interrupted one
    a failure, as the engine reads them): a task those already decide (a stop recorded before
    the interruption, or one the log lacks) takes its unrun trials out of the total at once, and
    the later ones read on from them, so "N saved" counts the whole run's savings.
    """

    def __init__(
        self,
        progress: Progress | None,
        total: int,
        suite: AgentEvalSuite | None = None,
        finished: Mapping[tuple[str, int], bool] | None = None,
    ) -> None:
        self.progress = progress
        self.total = total
        self.done = 0
        self.passed = 0
        self.saved = 0
        self.plans: dict[str, AdaptivePlan] = {}
        if suite is not None:
            from wopeval.engine.adaptive import adaptive_plans

            self.plans = {suite.tasks[i].taskId: p for i, p in adaptive_plans(suite).items()}
        self.outcomes: dict[str, dict[int, bool]] = {task_id: {} for task_id in self.plans}
        self.before: dict[str, set[int]] = {task_id: set() for task_id in self.plans}
        for (task_id, trial_index), passed in (finished or {}).items():
            if task_id in self.plans:
                self.outcomes[task_id][trial_index] = passed
                self.before[task_id].add(trial_index)
        for task_id in list(self.plans):
            self._stop(task_id)
        self.task = progress.add_task("trials", total=self.total, rate="-") if progress else None

    def __call__(self, task_id: str, trial_index: int, grade: TrialGrade | None) -> None:
        self.done += 1
        passed = grade is not None and grade.passed
        self.passed += passed
        if task_id in self.plans:
            self.outcomes[task_id][trial_index] = passed
            self._stop(task_id)
        if self.progress is not None and self.task is not None:
            self.progress.update(self.task, advance=1, total=self.total, rate=self.text)

    @property
    def text(self) -> str:
        """The pass rate so far, and the trials saved by adaptive stops when there are any."""
        rate = f"{self.passed / self.done:.0%} passing" if self.done else "-"
        return f"{rate}, {self.saved} saved" if self.saved else rate

    def _stop(self, task_id: str) -> None:
        """Take a decided task's unrun trials out of the total (the ones this view counts)."""
        from wopeval.grading.adaptive import first_stop

        plan, outcomes = self.plans[task_id], self.outcomes[task_id]
        prefix: list[bool] = []
        while len(prefix) in outcomes:
            prefix.append(outcomes[len(prefix)])
        stop = first_stop(plan, prefix)
        if stop.decision is not None:
            del self.plans[task_id]  # stopped: its later callbacks count as plain trials
            self.saved += plan.max_trials - stop.trials
            before = self.before[task_id]
            self.total -= sum(1 for i in range(stop.trials, plan.max_trials) if i not in before)


def progress_bar(enabled: bool) -> Progress | None:
    if not enabled:
        return None
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    return Progress(
        TextColumn("[bold]trials"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[rate]}"),
        TimeElapsedColumn(),
        console=Console(stderr=True),
        transient=True,
    )
