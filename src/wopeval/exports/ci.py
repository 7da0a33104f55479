"""CI-friendly renderings of a summary: JUnit XML (one testcase per task) and Markdown.

Both are built from the content-free summary only, so they are safe to publish as CI artifacts.
"""

from __future__ import annotations

from xml.etree import ElementTree as ET

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


def junit_xml(summary: EvalSummary, run_id: str) -> str:
    """JUnit XML: a ``testsuite`` per run, a ``testcase`` per task, ``failure`` when it failed."""
    failures = sum(1 for t in summary.tasks if not t.passed)
    suite = ET.Element(
        "testsuite",
        name=f"{summary.suiteId}@{summary.suiteVersion}",
        tests=str(summary.taskCount),
        failures=str(failures),
        errors="0",
        time=f"{sum((t.latencyMs or 0) for t in summary.tasks) / 1000:.3f}",
    )
    properties = ET.SubElement(suite, "properties")
    for name, value in (("runId", run_id), ("aggregateScore", f"{summary.aggregateScore:.6f}"),
                        ("passed", str(summary.passed).lower())):  # fmt: skip
        ET.SubElement(properties, "property", name=name, value=value)
    for task in summary.tasks:
        case = ET.SubElement(suite, "testcase", classname=summary.suiteId, name=task.taskId,
                             time=f"{(task.latencyMs or 0) / 1000:.3f}")  # fmt: skip
        if not task.passed:
            ET.SubElement(case, "failure", message=_failure_message(task), type="wopeval.task")
    ET.indent(suite)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suite, encoding="unicode")


def markdown(summary: EvalSummary, run_id: str) -> str:
    """A Markdown table, e.g. for ``$GITHUB_STEP_SUMMARY``."""
    verdict = "✅ passed" if summary.passed else "❌ failed"
    lines = [
        f"### {summary.suiteId}@{summary.suiteVersion}: {verdict}",
        "",
        f"Run `{run_id}` · aggregate {summary.aggregateScore:.3f} · "
        f"tasks {summary.passedCount}/{summary.taskCount} passed",
    ]
    if summary.trialStats is not None:
        st = summary.trialStats
        lines[-1] += f" · pass@{st.k} {st.passAtK:.3f} · pass^{st.k} {st.passHatK:.3f}"
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
    return "\n".join(lines) + "\n"
