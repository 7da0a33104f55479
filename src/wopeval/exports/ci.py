"""CI-friendly renderings of a run: JUnit XML (one testcase per task) and Markdown.

From the content-free summary alone they are safe to publish anywhere. Given the run's
:class:`~wopeval.grading.detail.RunDetail` (the tenant's own view) they also carry why each
trial failed: JUnit reports a task whose failing trials all crashed (agent error, timeout,
judge error …) as ``<error>`` and a wrong answer as ``<failure>``, the reason as the message.
"""

from __future__ import annotations

from xml.etree import ElementTree as ET

from wopeval.exports.textsafe import markdown_text, xml_text
from wopeval.grading.adaptive_report import AdaptiveReport
from wopeval.grading.detail import RunDetail, TaskDetail
from wopeval.grading.efficiency import P50, P95, RunEfficiency, per_success_text, run_efficiency
from wopeval.grading.gate import GateVerdict, decide
from wopeval.grading.intervals import DEFAULT_LEVEL, Interval
from wopeval.grading.reasons import reason_line, reason_texts
from wopeval.grading.summary_intervals import SuiteIntervals, summary_intervals
from wopeval.wire.summary import EvalSummary, TaskSummary


def _failure_message(task: TaskSummary) -> str:
    parts = [f"score {task.score:.3f}"]
    if task.trials is not None:
        t = task.trials
        parts.append(f"{t.passedCount}/{t.n} trials passed, pass@k {t.passAtK:.3f}, "
                     f"pass^k {t.passHatK:.3f}")  # fmt: skip
    if task.trajectory is not None and not task.trajectory.matched:
        tr = task.trajectory
        parts.append(f"trajectory {tr.mode} unmatched ({tr.matchedCount}/{tr.expectedCount}, "
                     f"forbidden {tr.forbiddenCount})")  # fmt: skip
    if task.fixtureMissCount:
        parts.append(f"{task.fixtureMissCount} fixture miss(es)")
    return "; ".join(parts)


def _reasons(task: TaskDetail | None) -> tuple[bool, str, str]:
    """(crashed, first reason, every reason) of a task's failing trials."""
    if task is None or not task.failures:
        return False, "", ""
    crashed = all(cell.status == "error" for cell in task.failures)
    lines = [
        f"trial {cell.trial_index} {cell.status}: {reason_line(cell.reason, cell.status)}"
        for cell in task.failures
    ]
    return crashed, lines[0], "\n".join(lines)


def _interval_properties(parent: ET.Element, items: list[tuple[str, Interval | None]]) -> None:
    for name, interval in items:
        if interval is not None:
            ET.SubElement(parent, "property", name=f"{name}.low", value=f"{interval.low:.6f}")
            ET.SubElement(parent, "property", name=f"{name}.high", value=f"{interval.high:.6f}")


def _suite_interval_properties(properties: ET.Element, intervals: SuiteIntervals) -> None:
    """The suite's intervals as ``NAME.low``/``NAME.high`` properties, after their level."""
    ET.SubElement(properties, "property", name="ciLevel", value=f"{intervals.level:g}")
    _interval_properties(properties, [("aggregateScore", intervals.aggregate),
                                      ("passAtK", intervals.pass_at_k),
                                      ("passHatK", intervals.pass_hat_k)])  # fmt: skip


def gate_case_name(gate: str) -> str:
    """The name of the JUnit test case that carries the gate's verdict."""
    return f"wopeval gate ({gate})"


def junit_xml(
    summary: EvalSummary,
    run_id: str,
    detail: RunDetail | None = None,
    verdict: GateVerdict | None = None,
    level: float = DEFAULT_LEVEL,
) -> str:
    """JUnit XML: a ``testsuite`` per run, a ``testcase`` per task; ``failure`` for a wrong
    answer, ``error`` for a task whose failing trials crashed (needs ``detail``). A last case,
    ``wopeval gate (NAME)``, carries the run's verdict by ``verdict``'s gate (the suite gate by
    default): a pipeline reads that case, not the count of failing tasks. The intervals at
    ``level`` are properties: the suite's, and a task's pass rate, pass@k and pass^k."""
    gated = verdict or decide(summary)
    intervals = summary_intervals(summary, level)
    details = {t.task_id: t for t in detail.tasks} if detail is not None else {}
    verdicts = {t.taskId: _reasons(details.get(t.taskId)) for t in summary.tasks if not t.passed}
    errors = sum(1 for crashed, _, _ in verdicts.values() if crashed)
    suite = ET.Element(
        "testsuite",
        name=f"{summary.suiteId}@{summary.suiteVersion}",
        tests=str(summary.taskCount + 1),
        failures=str(len(verdicts) - errors + (0 if gated.passed else 1)),
        errors=str(errors),
        time=f"{sum((t.latencyMs or 0) for t in summary.tasks) / 1000:.3f}",
    )
    properties = ET.SubElement(suite, "properties")
    for name, value in (("runId", run_id), ("aggregateScore", f"{summary.aggregateScore:.6f}"),
                        ("passed", str(gated.passed).lower()), ("gate", gated.gate)):  # fmt: skip
        ET.SubElement(properties, "property", name=name, value=value)
    _suite_interval_properties(properties, intervals)
    for task, its in zip(summary.tasks, intervals.tasks, strict=True):
        case = ET.SubElement(suite, "testcase", classname=summary.suiteId, name=task.taskId,
                             time=f"{(task.latencyMs or 0) / 1000:.3f}")  # fmt: skip
        if task.trials is not None:
            _interval_properties(ET.SubElement(case, "properties"), [
                ("passRate", its.pass_rate), ("meanScore", its.mean_score),
                ("passAtK", its.pass_at_k), ("passHatK", its.pass_hat_k)])  # fmt: skip
        if not task.passed:
            crashed, first, every = verdicts[task.taskId]
            stats = _failure_message(task)
            element = ET.SubElement(
                case,
                "error" if crashed else "failure",
                message=xml_text(f"{first} ({stats})" if first else stats),
                type="wopeval.trial-error" if crashed else "wopeval.task",
            )
            element.text = xml_text(every) or None
    _gate_case(suite, summary, gated)
    ET.indent(suite)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suite, encoding="unicode")


def _gate_case(suite: ET.Element, summary: EvalSummary, verdict: GateVerdict) -> None:
    case = ET.SubElement(suite, "testcase", classname=summary.suiteId,
                         name=gate_case_name(verdict.gate), time="0.000")  # fmt: skip
    if not verdict.passed:
        failure = ET.SubElement(case, "failure", message=verdict.headline(), type="wopeval.gate")
        failure.text = "\n".join(
            f.why if f.task_id is None else f"{f.task_id}: {f.why}" for f in verdict.failures
        )


def markdown(
    summary: EvalSummary,
    run_id: str,
    detail: RunDetail | None = None,
    verdict: GateVerdict | None = None,
    level: float = DEFAULT_LEVEL,
    adaptive: AdaptiveReport | None = None,
) -> str:
    """A Markdown table, e.g. for ``$GITHUB_STEP_SUMMARY``; the heading gives ``verdict``'s
    (the suite gate's by default); the intervals at ``level`` follow the table, then what
    ``adaptive`` trials did, if any."""
    gated = verdict or decide(summary)
    intervals = summary_intervals(summary, level)
    word = "✅ passed" if gated.passed else "❌ failed"
    lines = [
        f"### {summary.suiteId}@{summary.suiteVersion}: {word} (gate `{gated.gate}`)",
        "",
        f"Run `{run_id}` · aggregate {summary.aggregateScore:.3f} · "
        f"tasks {summary.passedCount}/{summary.taskCount} passed",
    ]
    if summary.trialStats is not None:
        st = summary.trialStats
        lines[-1] += f" · pass@{st.k} {st.passAtK:.3f} · pass^{st.k} {st.passHatK:.3f}"
    if summary.user_side is not None:
        lines += ["", summary.user_side.text()]
    if not gated.passed:
        lines += ["", f"**{gated.headline()}**"]
    lines += ["", "| task | result | score | trials | pass@k | pass^k | path |",
              "| --- | --- | ---: | ---: | ---: | ---: | --- |"]  # fmt: skip
    for task in summary.tasks:
        t, tr = task.trials, task.trajectory
        path = "-" if tr is None else ("matched" if tr.matched else "**unmatched**")
        lines.append(
            f"| `{task.taskId}` | {'pass' if task.passed else '**FAIL**'} | {task.score:.3f} | "
            f"{f'{t.passedCount}/{t.n}' if t else '-'} | {f'{t.passAtK:.3f}' if t else '-'} | "
            f"{f'{t.passHatK:.3f}' if t else '-'} | {path} |"
        )
    lines += _markdown_intervals(summary, intervals)
    if adaptive is not None:
        lines += ["", adaptive.line() + " (trials saved against the fixed count)"]
    if detail is not None:
        lines += markdown_efficiency(run_efficiency(detail, level))
        lines += _markdown_reasons(detail)
    return "\n".join(lines) + "\n"


def _markdown_intervals(summary: EvalSummary, intervals: SuiteIntervals) -> list[str]:
    """The aggregate's interval and, with trials, each task's (a section after the table)."""
    level = f"{intervals.level * 100:g}%"
    aggregate = intervals.aggregate
    lines = ["", f"#### {level} intervals", ""]
    if aggregate is not None:
        lines.append(f"Aggregate {summary.aggregateScore:.3f}, {aggregate.text(3)} "
                     f"({aggregate.method}, the task as the unit).")  # fmt: skip
    if summary.trialStats is None:
        return lines
    k = summary.trialStats.k
    lines += ["", f"| task | pass rate | mean score | pass@{k} | pass^{k} |",
              "| --- | ---: | ---: | ---: | ---: |"]  # fmt: skip
    for task, its in zip(summary.tasks, intervals.tasks, strict=True):
        t, at, hat = task.trials, its.pass_at_k, its.pass_hat_k
        at_k = "-" if t is None or at is None else f"{t.passAtK:.2f} {at.text()}"
        hat_k = "-" if t is None or hat is None else f"{t.passHatK:.2f} {hat.text()}"
        score = f"{task.score:.2f} {its.mean_score.text()}"
        lines.append(f"| `{task.taskId}` | {its.passed_count}/{its.n} {its.pass_rate.text()} "
                     f"| {score} | {at_k} | {hat_k} |")  # fmt: skip
    lines += ["", "Rates: Clopper-Pearson; mean scores: the same on n × mean of n; pass@k and "
              "pass^k: the rate's bounds mapped through 1-(1-p)^k and p^k."]  # fmt: skip
    return lines


METHOD_NOTE = "Clopper-Pearson bounds mapped through C/(n·p)"


def markdown_efficiency(run: RunEfficiency) -> list[str]:
    """Cost and tokens per success and latency quantiles, per task and for the suite."""
    lines = ["", "#### Efficiency (informational, never gated)", "",
             f"| task | successes | cost per success, USD ({run.level * 100:g}%) "
             "| tokens per success | latency p50, ms | p95, ms |",
             "| --- | ---: | ---: | ---: | ---: | ---: |"]  # fmt: skip
    for name, eff in [*((f"`{t}`", e) for t, e in run.tasks), ("**suite**", run.suite)]:
        p50, p95 = eff.latency(P50), eff.latency(P95)
        lines.append(
            f"| {name} | {eff.successes}/{eff.trials} "
            f"| {per_success_text(eff.cost_per_success, eff.cost_interval)} "
            f"| {per_success_text(eff.tokens_per_success, eff.tokens_interval)} "
            f"| {'-' if p50 is None else p50.value} | {'-' if p95 is None else p95.value} |"
        )
    lines += ["", f"Cost per success: every trial's cost (failed ones too) over the successes; "
              f"its interval: the success rate's {METHOD_NOTE}."]  # fmt: skip
    return lines


def _markdown_reasons(detail: RunDetail) -> list[str]:
    failing = [(task, cell) for task in detail.tasks for cell in task.failures]
    if not failing:
        return []
    lines = ["", "#### Why trials failed", ""]
    for task, cell in failing[:50]:
        first, *more = (markdown_text(why) for why in reason_texts(cell.reason, cell.status))
        lines.append(f"- `{task.task_id}` trial {cell.trial_index} ({cell.status}): {first}")
        lines += [f"  - {why}" for why in more]
    if len(failing) > 50:
        lines.append(f"- … and {len(failing) - 50} more")
    return lines
