"""``wopeval compare BASELINE CANDIDATE``: the paired regression verdict (RFC 0244 §F)."""

from __future__ import annotations

import json
from typing import Annotated, Any

import anyio
import typer
from rich import box
from rich.console import Console
from rich.table import Table

from wopeval.cli.common import EXIT_FAILED, EXIT_OK, fail_input, opened_store, store_option
from wopeval.cli.render import fit_lines
from wopeval.compare import Comparison, compare_summaries, registered_methods
from wopeval.events.store import RunRecord
from wopeval.wire.summary import EvalSummary

StoreOpt = Annotated[str | None, store_option()]


async def _records(url: str | None, ids: tuple[str, str]) -> list[RunRecord | None]:
    async with opened_store(url, must_exist=True) as store:
        return [await store.get_run(run_id) for run_id in ids]


def _summary_of(record: RunRecord | None, run_id: str, role: str) -> EvalSummary:
    if record is None:
        fail_input(f"{role} run {run_id!r} is not in the store")
    if record.summary is None:
        fail_input(f"{role} run {run_id!r} has no summary (status {record.status})")
    return EvalSummary.model_validate(record.summary)


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


def _to_json(comparison: Comparison) -> dict[str, Any]:
    result = comparison.result
    return {
        "regression": comparison.regression.model_dump(mode="json", exclude_none=True),
        "statistic": result.statistic_name,
        "estimate": result.estimate,
        "pValue": result.p_value,
        "ciLow": result.ci_low,
        "ciHigh": result.ci_high,
        "pairs": [
            {
                "taskId": p.task_id,
                "baselineMean": p.baseline_mean,
                "candidateMean": p.candidate_mean,
                "baselinePassRate": p.baseline_pass_rate,
                "candidatePassRate": p.candidate_pass_rate,
                "baselinePassed": p.baseline_passed,
                "candidatePassed": p.candidate_passed,
            }
            for p in comparison.pairs
        ],
    }


def compare(
    baseline: Annotated[str, typer.Argument(metavar="BASELINE", help="Baseline run id.")],
    candidate: Annotated[str, typer.Argument(metavar="CANDIDATE", help="Candidate run id.")],
    method: Annotated[
        str, typer.Option(help=f"One of: {', '.join(registered_methods())}.")
    ] = "paired-bootstrap",
    alpha: Annotated[float, typer.Option(min=0.0, max=1.0, help="Significance level.")] = 0.05,
    margin: Annotated[
        float | None,
        typer.Option(
            help="Equivalence margin: report 'unchanged' when the difference is "
            "provably inside ±margin (paired-t, paired-bootstrap)."
        ),
    ] = None,
    seed: Annotated[int, typer.Option(help="Bootstrap seed (the verdict is reproducible).")] = 0,
    store: StoreOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable JSON.")] = False,
) -> None:
    """Compare two stored runs task by task. Exit 1 only when the verdict is 'regressed'."""
    if method not in registered_methods():
        fail_input(f"--method: {method!r} is not one of {', '.join(registered_methods())}")
    base_record, cand_record = anyio.run(_records, store, (baseline, candidate))
    base = _summary_of(base_record, baseline, "baseline")
    cand = _summary_of(cand_record, candidate, "candidate")
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
        )
    except ValueError as exc:
        fail_input(str(exc))
    regression = comparison.regression
    if as_json:
        typer.echo(json.dumps(_to_json(comparison)))
    else:
        console = Console()
        console.print(paired_table(comparison))
        p_value = comparison.result.p_value
        parts = [
            f"verdict [bold]{regression.verdict}[/]",
            f"method {regression.method}",
            f"alpha {regression.alpha}",
            f"paired {regression.pairedTaskCount}",
            f"scoreDelta {regression.scoreDelta:+.4f}",
            f"p {'-' if p_value is None else f'{p_value:.4g}'}",
        ]
        for line in fit_lines(parts, console.width, separator="  "):
            console.print(line)
    raise typer.Exit(EXIT_FAILED if regression.verdict == "regressed" else EXIT_OK)


def register(app: typer.Typer) -> None:
    app.command()(compare)
