"""Human output for the CLI: summary tables and run lists (rich).

Everything fits 80 columns, on a terminal or piped: headers are never cut (the short columns are
``no_wrap`` with a minimum width of their header, one space apart), a long task id folds onto a
second line instead of losing its end, and the footer breaks between its parts.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from wopeval.cli.render_detail import print_detail, verdict_lines
from wopeval.cli.render_intervals import aggregate_part, intervals_table
from wopeval.grading.adaptive_report import adaptive_report
from wopeval.grading.detail import RunDetail
from wopeval.grading.gate import GateVerdict, decide
from wopeval.grading.intervals import DEFAULT_LEVEL
from wopeval.grading.summary import DEFAULT_PASS_SCORE
from wopeval.grading.summary_intervals import SuiteIntervals, summary_intervals
from wopeval.suite.models import AgentEvalSuite
from wopeval.wire.summary import EvalSummary, TaskSummary


def _pct(value: float) -> str:
    return f"{value * 100:.1f}%"


def _trajectory_cell(task: TaskSummary) -> str:
    tr = task.trajectory
    if tr is None:
        return "-"
    mark = "[green]ok[/]" if tr.matched else "[red]no[/]"
    forbidden = f" !{tr.forbiddenCount}" if tr.forbiddenCount else ""
    return f"{mark} {tr.matchedCount}/{tr.expectedCount}{forbidden}"


def summary_table(summary: EvalSummary, run_id: str | None = None) -> Table:
    title = f"{summary.suiteId}@{summary.suiteVersion}" + (f"\nrun {run_id}" if run_id else "")
    table = Table(
        title=title, title_justify="left", box=box.SIMPLE_HEAD, padding=(0, 0), show_edge=False
    )
    table.add_column("task", overflow="fold", min_width=12)
    k = summary.trialStats.k if summary.trialStats is not None else "k"
    columns = ("result", "score", "trials", f"pass@{k}", f"pass^{k}", "path", "miss", "tools")
    for column in columns:
        table.add_column(
            column,
            justify="left" if column == "result" else "right",
            no_wrap=True,
            min_width=len(column),
        )
    for task in summary.tasks:
        eff = task.efficiency
        trials = task.trials
        table.add_row(
            task.taskId,
            "[green]pass[/]" if task.passed else "[red]FAIL[/]",
            f"{task.score:.2f}",
            f"{trials.passedCount}/{trials.n}" if trials else "-",
            f"{trials.passAtK:.2f}" if trials else "-",
            f"{trials.passHatK:.2f}" if trials else "-",
            _trajectory_cell(task),
            str(task.fixtureMissCount) if task.fixtureMissCount is not None else "-",
            f"{eff.toolCallCount:.1f}" if eff else "-",
        )
    return table


_RULE_TEXT = {
    "all": "passed every trial",
    "any": "passed at least one trial",
    "mean": "met passScore on average",
}


def summary_footer(
    summary: EvalSummary, suite: AgentEvalSuite | None = None, verdict: GateVerdict | None = None
) -> str:
    """The verdict line (its parts joined by `` · ``)."""
    return _SEPARATOR.join(footer_parts(summary, suite, verdict))


_SEPARATOR = "  ·  "


def footer_parts(
    summary: EvalSummary,
    suite: AgentEvalSuite | None = None,
    verdict: GateVerdict | None = None,
    intervals: SuiteIntervals | None = None,
) -> list[str]:
    """The gate's verdict (the suite gate's by default), then the aggregate statistics, each a
    short markup string; with ``intervals``, the aggregate's interval after its stderr."""
    verdict = verdict or decide(summary)
    word = "[green]PASSED[/]" if verdict.passed else "[red]FAILED[/]"
    aggregate = f"{word}  aggregate {summary.aggregateScore:.3f}"
    tasks = f"tasks {summary.passedCount}/{summary.taskCount} passed"
    if suite is not None:
        thresholds = suite.thresholds
        given = thresholds.passScore if thresholds is not None else None
        pass_score = DEFAULT_PASS_SCORE if given is None else given
        aggregate += f" (passScore {pass_score:g})"
        if suite.trials is not None:
            rule = suite.trial_plan.effective_pass_rule
            tasks = f"{summary.passedCount}/{summary.taskCount} tasks {_RULE_TEXT[rule]}"
    parts = [aggregate, f"gate {verdict.gate}", tasks]
    if summary.trialStats is not None:
        st = summary.trialStats
        parts.append(f"pass@{st.k} {st.passAtK:.3f}  pass^{st.k} {st.passHatK:.3f}")
        if st.scoreStderr is not None:
            parts.append(f"stderr {st.scoreStderr:.3f}")
    if intervals is not None:
        parts.append(aggregate_part(summary, intervals))
    if summary.totalCostUsd is not None:
        parts.append(f"cost ${summary.totalCostUsd:.4f}")
    if summary.user_side is not None:
        parts.append(summary.user_side.text())
    if summary.regression is not None and summary.regression.verdict is not None:
        parts.append(f"vs baseline: {summary.regression.verdict}")
    return parts


def fit_lines(parts: Sequence[str], width: int, separator: str = _SEPARATOR) -> list[str]:
    """Join markup parts with ``separator``, starting a new line rather than breaking a part."""
    lines: list[str] = []
    current = ""
    for part in parts:
        joined = f"{current}{separator}{part}" if current else part
        if current and Text.from_markup(joined).cell_len > width:
            lines.append(current)
            joined = part
        current = joined
    return [*lines, current] if current else lines


def print_summary(
    console: Console,
    summary: EvalSummary,
    run_id: str | None = None,
    suite: AgentEvalSuite | None = None,
    *,
    detail: RunDetail | None = None,
    verdict: GateVerdict | None = None,
    level: float = DEFAULT_LEVEL,
) -> None:
    """The task table and the verdict (``verdict``'s gate, the suite gate by default); with
    trials, the intervals at ``level``; with ``detail``, why, the trial grid and the reasons."""
    console.print(summary_table(summary, run_id))
    intervals = summary_intervals(summary, level)
    if summary.trialStats is not None:
        console.print(intervals_table(summary, intervals))
    for line in fit_lines(footer_parts(summary, suite, verdict, intervals), console.width):
        console.print(line)
    adaptive = adaptive_report(suite, summary) if suite is not None else None
    if adaptive is not None:
        for line in textwrap.wrap(adaptive.line(), console.width):
            console.print(escape(line), highlight=False)
    if detail is None:
        return
    lines = verdict_lines(detail, console.width)
    if verdict is not None and not verdict.passed and verdict.gate != "suite":
        # the suite gate's numbers alone would read as a pass: say what this gate failed on
        lines = [escape(part) for part in textwrap.wrap(verdict.headline(), console.width)] + lines
    for line in lines:
        console.print(line, highlight=False, soft_wrap=True)
    if suite is not None and suite.trials is not None and any(t.trajectory for t in summary.tasks):
        console.print("path: the last trial's trajectory (RFC 0244 §A); the grid shows every trial")
    print_detail(console, detail)
