"""The trials progress bar of ``wopeval run`` and ``run --resume`` (stderr, terminals only)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.progress import Progress

    from wopeval.grading.trial import TrialGrade

__all__ = ["ProgressView", "progress_bar"]


class ProgressView:
    """A progress bar: trials done / total and the pass rate so far."""

    def __init__(self, progress: Progress | None, total: int) -> None:
        self.progress = progress
        self.done = 0
        self.passed = 0
        self.task = progress.add_task("trials", total=total, rate="-") if progress else None

    def __call__(self, task_id: str, trial_index: int, grade: TrialGrade | None) -> None:
        self.done += 1
        self.passed += 1 if grade is not None and grade.passed else 0
        if self.progress is not None and self.task is not None:
            rate = f"{self.passed / self.done:.0%} passing"
            self.progress.update(self.task, advance=1, rate=rate)


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
