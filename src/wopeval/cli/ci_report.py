"""The Markdown report of ``wopeval ci``: its verdict, the run's scope (a quick subset or the
whole suite), the per-task changes against the baseline with each side's pass-rate interval,
then the run's own CI section (:func:`wopeval.exports.ci.markdown`: the gate, intervals, cost,
why trials failed). Ids are pattern-checked by the suite schema; every other text an agent or
operator chose (agent ids, notes that quote them) goes through
:func:`~wopeval.exports.textsafe.markdown_text`."""

from __future__ import annotations

from dataclasses import dataclass

from wopeval.compare.report import CompareReport
from wopeval.exports.ci import markdown
from wopeval.exports.textsafe import markdown_text
from wopeval.grading.detail import RunDetail
from wopeval.grading.gate import GateVerdict
from wopeval.grading.summary_intervals import TaskIntervals, summary_intervals
from wopeval.wire.summary import EvalSummary

VERDICT_WORDS = {
    0: "✅ pass",
    1: "❌ fail",
    2: "⛔ bad input",
    3: "🔌 outage: could not be judged",
    4: "⚠️ cannot decide",
}


@dataclass(frozen=True)
class Scope:
    """Which of the suite's tasks ran: all, the first ``size``, or a sample seeded by ``seed``."""

    total: int
    size: int
    seed: int | None = None

    @property
    def whole(self) -> bool:
        return self.size >= self.total

    def line(self) -> str:
        if self.whole:
            return f"Whole suite: all {self.total} task(s)."
        how = (
            f"the first {self.size}"
            if self.seed is None
            else f"a sample of {self.size} (seed {self.seed})"
        )
        return (
            f"**Quick subset**: {how} of {self.total} tasks; the verdict covers only these. "
            "Run the whole suite (no --subset/--sample) for the full picture."
        )


@dataclass(frozen=True)
class CiOutcome:
    """What one ``wopeval ci`` found: its run, gate, comparison and exit code."""

    run_id: str
    agent_id: str
    summary: EvalSummary
    detail: RunDetail | None
    verdict: GateVerdict
    compared: CompareReport | None
    baseline_summary: EvalSummary | None
    scope: Scope
    level: float
    code: int


def _rate(its: TaskIntervals | None) -> str:
    if its is None:
        return "-"
    return f"{its.passed_count}/{its.n} {its.pass_rate.text()}"


def _change(before: bool, after: bool) -> str:
    if before == after:
        return "-"
    return "fixed" if after else "**broke**"


def changes_section(outcome: CiOutcome) -> list[str]:
    """The comparison's verdict line, its notes, and one row per paired task."""
    report = outcome.compared
    if report is None:
        return ["", "No baseline: the gate alone decides."]
    comparison = report.comparison
    result = comparison.result
    alpha = comparison.regression.alpha
    level = "" if alpha is None else f" ({100 * (1 - alpha):g}%)"
    estimate = "-" if result.estimate is None else f"{result.estimate:+.3f}"
    if result.ci_low is not None and result.ci_high is not None:
        estimate += f" [{result.ci_low:+.3f}, {result.ci_high:+.3f}]{level}"
    lines = [
        "",
        f"### Changes vs baseline `{report.baseline.run_id}`: {comparison.regression.verdict}",
        "",
        f"Baseline agent {markdown_text(report.baseline.agent_id or '-')}, "
        f"candidate agent {markdown_text(report.candidate.agent_id or '-')} · "
        f"method {comparison.regression.method} · alpha {comparison.regression.alpha} · "
        f"paired tasks {comparison.regression.pairedTaskCount} · "
        f"{result.statistic_name} {estimate} · "
        f"p {'-' if result.p_value is None else f'{result.p_value:.4g}'}",
    ]
    notes = report.notes()
    if notes:
        lines.append("")
        lines += [f"- {markdown_text(note)}" for note in notes]
    before = _intervals(outcome.baseline_summary, outcome.level)
    after = _intervals(outcome.summary, outcome.level)
    lines += [
        "",
        f"| task | baseline pass rate ({outcome.level * 100:g}%) | candidate pass rate "
        "| Δ mean score | change |",
        "| --- | ---: | ---: | ---: | --- |",
    ]
    for pair in comparison.pairs:
        lines.append(
            f"| `{pair.task_id}` | {_rate(before.get(pair.task_id))} "
            f"| {_rate(after.get(pair.task_id))} | {pair.difference:+.3f} "
            f"| {_change(pair.baseline_passed, pair.candidate_passed)} |"
        )
    return lines


def _intervals(summary: EvalSummary | None, level: float) -> dict[str, TaskIntervals]:
    if summary is None:
        return {}
    return {its.task_id: its for its in summary_intervals(summary, level).tasks}


def ci_markdown(outcome: CiOutcome) -> str:
    """The whole report: a heading with the verdict, the scope, the changes, the run."""
    summary = outcome.summary
    lines = [
        f"## wopeval ci: {VERDICT_WORDS.get(outcome.code, str(outcome.code))}",
        "",
        f"Suite `{summary.suiteId}@{summary.suiteVersion}` · run `{outcome.run_id}` · "
        f"agent {markdown_text(outcome.agent_id)} · exit {outcome.code}",
        "",
        outcome.scope.line(),
    ]
    lines += changes_section(outcome)
    body = markdown(summary, outcome.run_id, outcome.detail, outcome.verdict, outcome.level)
    return "\n".join(lines) + "\n\n" + body


__all__ = ["VERDICT_WORDS", "CiOutcome", "Scope", "changes_section", "ci_markdown"]
