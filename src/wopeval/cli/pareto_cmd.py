"""``wopeval pareto RUN [RUN...]``: success against cost per success across stored runs of one
suite (agents, models, prompts), with intervals, the frontier marked.

Every number is read from each run's log (:mod:`wopeval.grading.efficiency`,
:mod:`wopeval.grading.frontier`); nothing is stored. Informational only: RFC 0244 §C forbids
gating on efficiency, so the exit code is 0 whatever the runs' figures; 2 on bad input (no run,
an unknown run, a run without a summary, runs of different suites).
"""

from __future__ import annotations

import json
from typing import Annotated

import anyio
import typer
from rich import box
from rich.console import Console
from rich.table import Table

from wopeval.cli.common import EXIT_OK, fail_input, opened_store, store_option
from wopeval.cli.gate_opts import CiLevelOpt
from wopeval.exports.textsafe import markdown_text, terminal_text
from wopeval.grading.efficiency import (
    METHODS,
    NO_SUCCESS,
    Efficiency,
    figure,
    per_success_text,
)
from wopeval.grading.intervals import DEFAULT_LEVEL
from wopeval.service.efficiency import ParetoRow, mixed_suites, pareto_rows

StoreOpt = Annotated[str | None, store_option()]
NOTE = "informational: RFC 0244 §C forbids gating on efficiency"
FRONTIER_RULE = (
    "a run is on the frontier (*) when no other run has a success rate at least as high and a "
    "cost per success at least as low (one strictly); a run with no success never is"
)


async def _rows(url: str | None, run_ids: list[str], level: float) -> list[ParetoRow]:
    async with opened_store(url, must_exist=True) as store:
        records = []
        for run_id in run_ids:
            record = await store.get_run(run_id)
            if record is None:
                fail_input(f"run {run_id!r} is not in the store")
            if record.summary is None:
                fail_input(f"run {run_id!r} has no summary (status {record.status})")
            records.append(record)
        suites = mixed_suites(records)
        if suites:
            fail_input(f"the runs are of different suites ({', '.join(suites)}): their success "
                       "rates and costs are not comparable; give runs of one suite")  # fmt: skip
        return await pareto_rows(store, records, level)


def _rate(eff: Efficiency) -> str:
    span = eff.success_interval
    return "-" if span is None else f"{eff.successes}/{eff.trials} {span.text()}"


def pareto_table(rows: list[ParetoRow], level: float) -> Table:
    """A numbered row per run (the runs, whole, are listed after it: :func:`run_lines`)."""
    table = Table(
        title=f"success against cost per success ({level * 100:g}% intervals; USD)",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        padding=(0, 1, 0, 0),
        show_edge=False,
    )
    table.add_column("#", justify="right", no_wrap=True)
    table.add_column("success", justify="right", no_wrap=True)
    table.add_column("cost/success", justify="right", overflow="fold", min_width=12)
    table.add_column("total", justify="right", no_wrap=True)
    table.add_column("frontier", justify="center", no_wrap=True)
    for i, row in enumerate(rows, 1):
        eff = row.efficiency
        table.add_row(
            str(i), _rate(eff), per_success_text(eff.cost_per_success, eff.cost_interval),
            figure(float(eff.cost_usd)), "*" if row.frontier else "",
        )  # fmt: skip
    return table


def run_lines(rows: list[ParetoRow]) -> list[str]:
    """``#1 RUN_ID  agent AGENT``: the run id whole (it is what users copy)."""
    return [f"#{i} {terminal_text(row.run_id)}  agent {terminal_text(row.agent_id)}"
            for i, row in enumerate(rows, 1)]  # fmt: skip


def pareto_markdown(rows: list[ParetoRow], level: float) -> str:
    suites = sorted({row.suite for row in rows})
    lines = [f"### Cost/accuracy frontier: {markdown_text(', '.join(suites))}", "",
             f"| run | agent | success ({level * 100:g}%) | cost per success, USD | total, USD "
             "| frontier |", "| --- | --- | ---: | ---: | ---: | :---: |"]  # fmt: skip
    for row in rows:
        eff = row.efficiency
        lines.append(
            f"| {markdown_text(row.run_id)} | {markdown_text(row.agent_id)} | {_rate(eff)} | "
            f"{per_success_text(eff.cost_per_success, eff.cost_interval)} | "
            f"{figure(float(eff.cost_usd))} | {'✓' if row.frontier else ''} |"
        )
    rule = FRONTIER_RULE[0].upper() + FRONTIER_RULE[1:]
    lines += ["", f"{rule}. Success: Clopper-Pearson over every trial; cost per success: total "
              "cost over successes, its interval the rate's bounds mapped through C/(n·p). "
              f"This is {NOTE}."]  # fmt: skip
    return "\n".join(lines) + "\n"


def pareto(
    run_ids: Annotated[list[str], typer.Argument(metavar="RUN...", show_default=False)],
    ci_level: CiLevelOpt = DEFAULT_LEVEL,
    store: StoreOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON only.")] = False,
    as_markdown: Annotated[bool, typer.Option("--markdown", help="Print Markdown.")] = False,
) -> None:
    """Plot success against cost per success across runs of one suite; mark the frontier."""
    if as_json and as_markdown:
        fail_input("--json and --markdown: choose one")
    rows = anyio.run(_rows, store, list(dict.fromkeys(run_ids)), ci_level)
    if as_json:
        typer.echo(json.dumps({
            "level": ci_level, "methods": dict(METHODS), "frontierRule": FRONTIER_RULE,
            "runs": [row.to_json() for row in rows],
            "frontier": [row.run_id for row in rows if row.frontier],
        }))  # fmt: skip
    elif as_markdown:
        typer.echo(pareto_markdown(rows, ci_level), nl=False)
    else:
        console = Console()
        console.print(pareto_table(rows, ci_level))
        for line in run_lines(rows):
            console.print(line, markup=False, highlight=False, soft_wrap=True)
        versions = sorted({row.suite for row in rows})
        if len(versions) > 1:
            console.print(f"note: suite versions differ: {', '.join(versions)}", markup=False)
        none = sum(row.efficiency.cost_per_success is None for row in rows)
        for line in (FRONTIER_RULE, NOTE) if not none else (FRONTIER_RULE, NOTE, _no(none)):
            console.print(line, markup=False, highlight=False)
    raise typer.Exit(EXIT_OK)


def _no(count: int) -> str:
    return f"{count} run(s) with {NO_SUCCESS}: cost per success is undefined, not 0"


def register(app: typer.Typer) -> None:
    app.command()(pareto)


__all__ = ["pareto_markdown", "pareto_table", "register", "run_lines"]
