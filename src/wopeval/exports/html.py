"""A self-contained HTML report of one run (jinja2): the content-free summary, and with the run's
:class:`~wopeval.grading.detail.RunDetail` (the tenant's own view) the tasks × trials grid, each
failing trial's reasons, its trajectory diff (expected calls matched or missing, observed calls
matched, unexpected or forbidden) and an agent error's traceback. No script, no external asset:
``wopeval view`` is the browsable version of the same run."""

from __future__ import annotations

from importlib import resources
from typing import Any

from jinja2 import Environment, StrictUndefined, select_autoescape

from wopeval.grading.detail import STATUS_MARK, RunDetail
from wopeval.grading.gate import GateVerdict, decide
from wopeval.grading.reasons import reason_line, reason_texts
from wopeval.wire.summary import EvalSummary


def _environment() -> Environment:
    env = Environment(autoescape=select_autoescape(default=True), undefined=StrictUndefined)
    env.filters["pct"] = lambda v: f"{float(v) * 100:.1f}%"
    env.filters["num"] = lambda v, d=3: f"{float(v):.{d}f}"
    env.globals["reason_texts"] = reason_texts
    env.globals["reason_line"] = reason_line
    return env


def render_report(
    summary: EvalSummary,
    *,
    run_id: str,
    status: str,
    created_at: str,
    detail: RunDetail | None = None,
    verdict: GateVerdict | None = None,
) -> str:
    """The report page. Pass rates drive the bars; reasons appear only with ``detail``; the
    verdict is ``verdict``'s (the suite gate's by default)."""
    details = {t.task_id: t for t in detail.tasks} if detail is not None else {}
    source = resources.files("wopeval.data.templates").joinpath("report.html.j2").read_text()
    rows: list[dict[str, Any]] = []
    for task in summary.tasks:
        trials = task.trials
        rate = trials.passedCount / trials.n if trials else (1.0 if task.passed else 0.0)
        rows.append({"task": task, "rate": rate, "detail": details.get(task.taskId)})
    failing = [(t, c) for t in detail.tasks for c in t.failures] if detail is not None else []
    return (
        _environment()
        .from_string(source)
        .render(
            summary=summary,
            rows=rows,
            run_id=run_id,
            status=status,
            created_at=created_at,
            detail=detail,
            failing=failing,
            marks=STATUS_MARK,
            gate=verdict or decide(summary),
        )
    )
