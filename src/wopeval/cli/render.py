"""Human output for the CLI: summary tables and run lists (rich)."""

from __future__ import annotations

from collections.abc import Sequence

from rich import box
from rich.console import Console
from rich.table import Table

from wopeval.events.store import RunRecord
from wopeval.grading.summary import DEFAULT_PASS_SCORE
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
    title = f"{summary.suiteId}@{summary.suiteVersion}" + (f"  run {run_id}" if run_id else "")
    table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("task", no_wrap=True)
    for column in ("result", "score", "trials", "pass@k", "pass^k", "path", "miss", "tools"):
        table.add_column(column, justify="left" if column == "result" else "right", no_wrap=True)
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


def summary_footer(summary: EvalSummary, suite: AgentEvalSuite | None = None) -> str:
    verdict = "[green]PASSED[/]" if summary.passed else "[red]FAILED[/]"
    aggregate = f"{verdict}  aggregate {summary.aggregateScore:.3f}"
    tasks = f"tasks {summary.passedCount}/{summary.taskCount} passed"
    if suite is not None:
        thresholds = suite.thresholds
        given = thresholds.passScore if thresholds is not None else None
        pass_score = DEFAULT_PASS_SCORE if given is None else given
        aggregate += f" (passScore {pass_score:g})"
        if suite.trials is not None:
            rule = suite.trial_plan.effective_pass_rule
            tasks = f"{summary.passedCount}/{summary.taskCount} tasks {_RULE_TEXT[rule]}"
    parts = [aggregate, tasks]
    if summary.trialStats is not None:
        st = summary.trialStats
        parts.append(f"pass@{st.k} {st.passAtK:.3f}  pass^{st.k} {st.passHatK:.3f}")
        if st.scoreStderr is not None:
            parts.append(f"stderr {st.scoreStderr:.3f}")
    if summary.totalCostUsd is not None:
        parts.append(f"cost ${summary.totalCostUsd:.4f}")
    if summary.regression is not None and summary.regression.verdict is not None:
        parts.append(f"vs baseline: {summary.regression.verdict}")
    return "  ·  ".join(parts)


def print_summary(
    console: Console,
    summary: EvalSummary,
    run_id: str | None = None,
    suite: AgentEvalSuite | None = None,
) -> None:
    console.print(summary_table(summary, run_id))
    console.print(summary_footer(summary, suite))


def runs_lines(runs: Sequence[RunRecord]) -> list[str]:
    """One line per run, run id first and whole (it is what users copy); no table to squeeze."""
    widest = max((len(run.run_id) for run in runs), default=3)
    lines = [f"{'run':<{widest}}  result  score  {'status':<10} created              suite"]
    for run in runs:
        summary = run.summary or {}
        passed = summary.get("passed")
        result = "-" if passed is None else ("pass" if passed else "FAIL")
        score = f"{summary['aggregateScore']:.3f}" if "aggregateScore" in summary else "-"
        created = run.created_at.replace("T", " ")[:19]
        lines.append(
            f"{run.run_id:<{widest}}  {result:<6}  {score:>5}  {run.status:<10} {created}  "
            f"{run.suite_id}@{run.suite_version}"
        )
    return lines
