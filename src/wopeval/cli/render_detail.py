"""Human output of a run's detail: the tasks × trials grid, why trials failed, and why the suite
passed or failed (the RFC 0246 gating aggregate against ``passScore``). Fits 80 columns."""

from __future__ import annotations

import textwrap
from collections import Counter

from rich.console import Console
from rich.markup import escape

from wopeval.exports.textsafe import counted, terminal_text
from wopeval.grading.detail import STATUS_MARK, RunDetail, TrialCell
from wopeval.grading.reasons import reason_texts

_COLOURS = {"pass": "green", "fail": "red", "fail-closed": "magenta", "error": "yellow",
            "skipped": "dim", "missing": "dim"}  # fmt: skip
LEGEND = "✓ pass  ✗ fail  ! fail-closed  E error  - skipped  ? not run  ~ flaky"
MAX_REASONS_PER_TASK = 3
MAX_GRID_TRIALS = 50


def _mark(cell: TrialCell) -> str:
    return f"[{_COLOURS[cell.status]}]{STATUS_MARK[cell.status]}[/]"


def grid_lines(detail: RunDetail, width: int) -> list[str]:
    """One line per task: its id, then one mark per trial (folded to fit ``width``)."""
    if not detail.tasks:
        return []
    name_width = min(max(len(t.task_id) for t in detail.tasks), max(12, width // 3))
    room = max(10, width - name_width - 3)
    lines = [f"[bold]trials[/]  {LEGEND}"]
    for task in detail.tasks:
        cells = task.cells[:MAX_GRID_TRIALS]
        marks = [_mark(cell) for cell in cells]
        more = len(task.cells) - len(cells)
        flaky = "~" if task.flaky else " "
        name = task.task_id
        if len(name) > name_width:  # a long id keeps a line of its own, whole
            lines.append(escape(name))
            name = ""
        rows = [marks[i : i + room] for i in range(0, len(marks), room)] or [[]]
        for number, row in enumerate(rows):
            label = f"{name:<{name_width}}" if number == 0 else " " * name_width
            tail = f" +{more}" if more and number == len(rows) - 1 else ""
            lines.append(f"{escape(label)} {flaky if number == 0 else ' '} {''.join(row)}{tail}")
    return lines


def reason_lines(detail: RunDetail, width: int) -> list[str]:
    """Why each failing trial failed (a few per task): its most decisive reason on the trial's
    line, each other reason on a line of its own below."""
    lines: list[str] = []
    for task in detail.tasks:
        failures = task.failures
        for cell in failures[:MAX_REASONS_PER_TASK]:
            first, *more = reason_texts(cell.reason, cell.status)
            texts = [f"{task.task_id} #{cell.trial_index}: {first}", *(f"  · {t}" for t in more)]
            for text in texts:
                wrapped = textwrap.wrap(
                    text, width, subsequent_indent="    ", break_on_hyphens=False
                )
                for part in wrapped or [text]:
                    lines.append(f"[{_COLOURS[cell.status]}]{escape(part)}[/]")
        if len(failures) > MAX_REASONS_PER_TASK:
            lines.append(f"  … and {len(failures) - MAX_REASONS_PER_TASK} more failing trials")
    return (["[bold]why trials failed[/]", *lines]) if lines else []


def verdict_lines(detail: RunDetail, width: int = 80) -> list[str]:
    """The numbers that decide the verdict, and which tasks pulled it down."""
    relation = "≥" if detail.aggregate_passes else "<"
    statuses = Counter(cell.status for task in detail.tasks for cell in task.cells)
    infra = detail.infrastructure_failures()
    text = (
        f"why: gating aggregate {detail.gating_aggregate:.3f} {relation} "
        f"passScore {detail.pass_score:g}"
        + ("" if detail.within_ceilings else "; a cost or latency ceiling was exceeded")
        + (f"; {_trials(statuses['skipped'])} skipped (budget)" if statuses["skipped"] else "")
        + (f"; {_trials(statuses['missing'])} not in this log" if statuses["missing"] else "")
        + (f"; {_trials(infra)} failed for infrastructure, not the agent" if infra else "")
    )
    lines = [escape(part) for part in textwrap.wrap(text, width, break_on_hyphens=False)]
    low = detail.below_pass_score()
    if low:
        shown = ", ".join(f"{t.task_id} {t.gating_score:.2f}" for t in low[:4])
        more = f" and {len(low) - 4} more" if len(low) > 4 else ""
        text = f"below passScore (gating score): {shown}{more}"
        lines += [escape(part) for part in textwrap.wrap(text, width, break_on_hyphens=False)]
    return lines


def _trials(count: int) -> str:
    return counted(count, "trial")


def print_detail(console: Console, detail: RunDetail) -> None:
    """The grid, then why trials failed."""
    width = console.width
    for line in [*grid_lines(detail, width), *reason_lines(detail, width)]:
        console.print(terminal_text(line), highlight=False, soft_wrap=True)
