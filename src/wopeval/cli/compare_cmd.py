"""``wopeval compare BASELINE CANDIDATE``: the paired regression verdict (RFC 0244 §F).

Exit codes: 0 no regression, 1 ``regressed``, 2 bad input, 3 a store error, and
:data:`EXIT_UNDECIDABLE` (4) when the method cannot reach alpha with the paired tasks at hand,
so a gate that could not have failed never passes silently (``--accept-undecidable`` makes it 0).
"""

from __future__ import annotations

import json
from typing import Annotated

import anyio
import typer
from rich import box
from rich.console import Console
from rich.table import Table

from wopeval.cli.common import EXIT_FAILED, EXIT_OK, fail_input, opened_store, store_option
from wopeval.cli.render import fit_lines
from wopeval.compare import Comparison, compare_summaries, registered_methods
from wopeval.compare.report import CompareReport, RunSide
from wopeval.events.store import RunRecord
from wopeval.wire.summary import EvalSummary, RegressionBlock

StoreOpt = Annotated[str | None, store_option()]
EXIT_UNDECIDABLE = 4
"""The method cannot reach alpha with the paired tasks at hand: the gate could not have failed."""


async def _records(url: str | None, ids: tuple[str, str]) -> list[RunRecord | None]:
    async with opened_store(url, must_exist=True) as store:
        return [await store.get_run(run_id) for run_id in ids]


def _summary_of(record: RunRecord | None, run_id: str, role: str) -> tuple[RunRecord, EvalSummary]:
    if record is None:
        fail_input(f"{role} run {run_id!r} is not in the store")
    if record.summary is None:
        fail_input(f"{role} run {run_id!r} has no summary (status {record.status})")
    return record, EvalSummary.model_validate(record.summary)


def paired_table(comparison: Comparison) -> Table:
    table = Table(title="paired tasks", title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("task", overflow="fold", min_width=12)  # 80 columns: fold ids, cut nothing
    for column in (
        "baseline\npass rate",
        "candidate\npass rate",
        "baseline\nmean",
        "candidate\nmean",
        "Δ mean",
    ):
        width = max(len(line) for line in column.splitlines())
        table.add_column(column, justify="right", no_wrap=True, min_width=width)
    for pair in comparison.pairs:
        delta = pair.candidate_mean - pair.baseline_mean
        colour = "green" if delta > 0 else "red" if delta < 0 else "white"
        table.add_row(
            pair.task_id,
            f"{pair.baseline_pass_rate:.0%}",
            f"{pair.candidate_pass_rate:.0%}",
            f"{pair.baseline_mean:.3f}",
            f"{pair.candidate_mean:.3f}",
            f"[{colour}]{delta:+.3f}[/]",
        )
    return table


def _print_text(report: CompareReport) -> None:
    console = Console()
    console.print(paired_table(report.comparison))
    for line in report.agents_lines():
        console.print(line, markup=False, highlight=False)
    parts = report.verdict_parts()
    parts[0] = f"verdict [bold]{report.comparison.regression.verdict}[/]"
    for line in fit_lines(parts, console.width, separator="  "):
        console.print(line)
    for note in report.notes():
        console.print(note, markup=False, highlight=False, style="yellow")


def _digests(record: RunRecord) -> dict[str, str] | None:
    digests = record.run_request.digests
    return dict(digests.tasks) if digests is not None else None


def compare(
    baseline: Annotated[str, typer.Argument(metavar="BASELINE", help="Baseline run id.")],
    candidate: Annotated[str, typer.Argument(metavar="CANDIDATE", help="Candidate run id.")],
    method: Annotated[
        str | None,
        typer.Option(
            help=f"One of: {', '.join(registered_methods())}. Default: chosen from the data "
            "(mcnemar for one pass/fail outcome per task, else paired-bootstrap).",
            show_default=False,
        ),
    ] = None,
    alpha: Annotated[float, typer.Option(min=0.0, max=1.0, help="Significance level.")] = 0.05,
    margin: Annotated[
        float | None,
        typer.Option(
            help="Equivalence margin: report 'unchanged' when the difference is "
            "provably inside ±margin (paired-t, paired-bootstrap)."
        ),
    ] = None,
    seed: Annotated[int, typer.Option(help="Bootstrap seed (the verdict is reproducible).")] = 0,
    accept_undecidable: Annotated[
        bool,
        typer.Option(
            "--accept-undecidable",
            help=f"Exit 0, not {EXIT_UNDECIDABLE}, when the method cannot reach alpha "
            "with the paired tasks at hand.",
        ),
    ] = False,
    store: StoreOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable JSON.")] = False,
    as_markdown: Annotated[
        bool, typer.Option("--markdown", help="A Markdown section for a CI job summary.")
    ] = False,
) -> None:
    """Compare two stored runs task by task. Exit 1 when the verdict is 'regressed'.

    Exit 4 when the method cannot reach alpha with the paired tasks at hand (a gate that could
    not have failed), unless --accept-undecidable. Tasks whose input, expectation or fixtures
    changed between the runs are named and left out.
    """
    if method is not None and method not in registered_methods():
        fail_input(f"--method: {method!r} is not one of {', '.join(registered_methods())}")
    records = anyio.run(_records, store, (baseline, candidate))
    base_record, base = _summary_of(records[0], baseline, "baseline")
    cand_record, cand = _summary_of(records[1], candidate, "candidate")
    if base.suiteId != cand.suiteId:
        fail_input(
            f"the runs are of different suites ({base.suiteId} vs {cand.suiteId}); "
            "a regression verdict pairs the tasks of one suite"
        )
    try:
        comparison = compare_summaries(
            base,
            cand,
            baseline,
            method=method,
            alpha=alpha,
            seed=seed,
            equivalence_margin=margin,
            baseline_digests=_digests(base_record),
            candidate_digests=_digests(cand_record),
        )
    except ValueError as exc:
        fail_input(str(exc))
    report = CompareReport(
        RunSide(baseline, base_record.agent_id),
        RunSide(candidate, cand_record.agent_id),
        comparison,
    )
    if as_json:
        typer.echo(json.dumps(report.to_json()))
    elif as_markdown:
        typer.echo(report.to_markdown(), nl=False)
    else:
        _print_text(report)
    raise typer.Exit(exit_code(report, accept_undecidable=accept_undecidable))


def baseline_report(
    store: str | None, regression: RegressionBlock, candidate: str
) -> CompareReport | None:
    """The comparison behind a run's ``regression`` block, as ``compare`` reports it (whether
    the method could decide, the tasks left out as changed), with the block's method and alpha;
    None when either run cannot be read back."""
    records = anyio.run(_records, store, (regression.baselineRunId, candidate))
    if records[0] is None or records[1] is None:
        return None
    if records[0].summary is None or records[1].summary is None:
        return None
    comparison = compare_summaries(
        EvalSummary.model_validate(records[0].summary),
        EvalSummary.model_validate(records[1].summary),
        regression.baselineRunId,
        method=regression.method,
        alpha=regression.alpha if regression.alpha is not None else 0.05,
        baseline_digests=_digests(records[0]),
        candidate_digests=_digests(records[1]),
    )
    return CompareReport(
        RunSide(regression.baselineRunId, records[0].agent_id),
        RunSide(candidate, records[1].agent_id),
        comparison,
    )


def exit_code(report: CompareReport, *, accept_undecidable: bool) -> int:
    """1 for 'regressed', 4 when the method could not decide (unless accepted), else 0."""
    if report.comparison.regression.verdict == "regressed":
        return EXIT_FAILED
    if not report.decidable and not accept_undecidable:
        return EXIT_UNDECIDABLE
    return EXIT_OK


def register(app: typer.Typer) -> None:
    app.command()(compare)
