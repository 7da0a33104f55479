"""Human output of a run's intervals (:mod:`wopeval.grading.summary_intervals`): one table,
a row per task and the suite's row, at 80 columns (each cell is ``point [low, high]``)."""

from __future__ import annotations

from rich import box
from rich.table import Table

from wopeval.grading.intervals import Interval
from wopeval.grading.summary_intervals import SuiteIntervals
from wopeval.wire.summary import EvalSummary


def _cell(point: float, interval: Interval | None) -> str:
    return "-" if interval is None else f"{point:.2f} {interval.text()}"


def _percent(level: float) -> str:
    return f"{level * 100:g}%"


def intervals_table(summary: EvalSummary, intervals: SuiteIntervals) -> Table:
    """Per task: the pass rate, pass@k and pass^k with their intervals; then the suite's row
    (the share of tasks passed, and the means of pass@k and pass^k, the task as the unit)."""
    k = intervals.k if intervals.k is not None else "k"
    table = Table(
        title=f"{_percent(intervals.level)} intervals (Clopper-Pearson; pass@{k} and pass^{k} "
        "mapped from it; suite: over tasks)",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        padding=(0, 0),
        show_edge=False,
    )
    table.add_column("task", overflow="fold", min_width=12)
    for column in ("pass rate", f"pass@{k}", f"pass^{k}"):
        table.add_column(column, justify="right", no_wrap=True, min_width=len(column))
    for task, its in zip(summary.tasks, intervals.tasks, strict=True):
        trials = task.trials
        table.add_row(
            task.taskId,
            f"{its.passed_count}/{its.n} {its.pass_rate.text()}",
            _cell(trials.passAtK, its.pass_at_k) if trials else "-",
            _cell(trials.passHatK, its.pass_hat_k) if trials else "-",
        )
    stats = summary.trialStats
    passed = intervals.tasks_passed
    table.add_section()
    table.add_row(
        "suite (tasks)",
        "-" if passed is None else f"{summary.passedCount}/{summary.taskCount} {passed.text()}",
        _cell(stats.passAtK, intervals.pass_at_k) if stats else "-",
        _cell(stats.passHatK, intervals.pass_hat_k) if stats else "-",
    )
    return table


def aggregate_part(summary: EvalSummary, intervals: SuiteIntervals) -> str:
    """The footer's part for the aggregate's interval (or why there is none)."""
    level = _percent(intervals.level)
    aggregate = intervals.aggregate
    if aggregate is None:
        return f"no {level} CI without a task"
    return f"aggregate {level} CI [{aggregate.low:.3f}, {aggregate.high:.3f}]"


__all__ = ["aggregate_part", "intervals_table"]
