"""``wopeval grade``, ``runs`` and ``show``: read stored runs (the log in pages).

Reading commands start fast: the run service (and with it the engine) is imported where a log
is folded, paged or re-graded, not by ``runs`` or ``show --json``, and what only one command's
output needs (the table renderer, the judge's spend) by that command;
``tests/cli/test_read_imports.py`` keeps the heavy modules out of all three.
"""

from __future__ import annotations

import json
import shutil
import sys
from typing import TYPE_CHECKING, Annotated, Any

import anyio
import typer

from wopeval.cli.common import EXIT_FAILED, EXIT_OK, fail_input, opened_store, store_option
from wopeval.cli.gate_opts import (
    StoredCiLevelOpt,
    StoredGateOpt,
    bounds,
    chosen_gate,
    chosen_level,
    run_passed,
)
from wopeval.errors import RunNotFound
from wopeval.grading.gate import DEFAULT_GATE, decide, suite_bounds
from wopeval.suite import parse_suite
from wopeval.wire.summary import EvalSummary

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from wopeval.events.store import EventStore, RunRecord
    from wopeval.wire.events import RunEvent

StoreOpt = Annotated[str | None, store_option()]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON only.")]
EfficiencyOpt = Annotated[
    bool,
    typer.Option(
        "--efficiency",
        help="Also show cost and tokens per success and latency p50/p95, per task and for the "
        "suite, with intervals (read from the log; informational, never gated).",
    ),
]


def grade(
    run_id: Annotated[str, typer.Argument(metavar="RUN_ID")],
    gate: StoredGateOpt = None,
    ci_level: StoredCiLevelOpt = None,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Re-grade a stored run from its suite and log; exit 1 if it differs from what is stored.
    The verdict printed is the run's gate's (or --gate's)."""

    async def go() -> Any:
        async with opened_store(store, must_exist=True) as opened:
            record = await opened.get_run(run_id)
            if record is None:
                raise RunNotFound(run_id)
            if record.summary is None:
                fail_input(f"run {run_id!r} has no summary to reproduce (status {record.status})")
            return await regrade(opened, run_id)

    from rich.console import Console

    from wopeval.cli.render import print_summary
    from wopeval.service.runs import regrade

    try:
        result = anyio.run(go)
    except RunNotFound:
        fail_input(f"run {run_id!r} is not in the store")
    if as_json:
        typer.echo(result.summary.to_json())  # the exit code says whether it reproduces
    else:
        suite = parse_suite(result.record.suite_document)
        chosen = chosen_gate(gate, result.record.run_request.gate)
        level = chosen_level(ci_level, result.record.run_request.ci_level)
        verdict = decide(result.summary, chosen, bounds(suite, level))
        print_summary(Console(), result.summary, run_id, suite, verdict=verdict, level=level)
        same = result.reproduces_stored
        typer.echo("reproduces the stored summary exactly" if same else "DIFFERS from stored")
    raise typer.Exit(EXIT_OK if result.reproduces_stored else EXIT_FAILED)


def runs(
    limit: Annotated[int, typer.Option(min=1, help="How many, newest first.")] = 20,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """List stored runs, newest first."""

    async def go() -> Any:
        async with opened_store(store, must_exist=True) as opened:
            return await opened.list_runs(limit=limit)

    from wopeval.cli.render_runs import runs_lines

    records = anyio.run(go)
    if as_json:
        rows = [
            {
                "runId": r.run_id,
                "suiteId": r.suite_id,
                "suiteVersion": r.suite_version,
                "agentId": r.agent_id,
                "status": r.status,
                "createdAt": r.created_at,
                "passed": run_passed(r),
                "gate": r.request.get("gate", DEFAULT_GATE),
            }
            for r in records
        ]
        typer.echo(json.dumps({"runs": rows}))
    else:
        width = shutil.get_terminal_size((80, 24)).columns
        for line in runs_lines(records, width):
            typer.echo(line)


def show(
    run_id: Annotated[str, typer.Argument(metavar="RUN_ID")],
    events: Annotated[bool, typer.Option("--events", help="Also print the event log.")] = False,
    gate: StoredGateOpt = None,
    ci_level: StoredCiLevelOpt = None,
    efficiency: EfficiencyOpt = False,
    store: StoreOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Print one stored run: status, summary and (with --events) its event log.

    \f
    The log is read in pages: the detail is folded in one pass (``run_detail``), the events
    are printed page by page; no more than a page of events is held at once.
    """

    async def go() -> None:
        async with opened_store(store, must_exist=True) as opened:
            record = await opened.get_run(run_id)
            if record is None:
                fail_input(f"run {run_id!r} is not in the store")
            chosen = chosen_gate(gate, record.run_request.gate)
            level = chosen_level(ci_level, record.run_request.ci_level)
            if as_json:
                await _show_json(opened, record, events, chosen, level, efficiency)
            else:
                await _show_text(opened, record, events, chosen, level, efficiency)

    anyio.run(go)


async def _pages(store: EventStore, run_id: str) -> AsyncIterator[list[RunEvent]]:
    from wopeval.service.runs import LOG_PAGE

    after = -1
    while page := await store.events(run_id, after, LOG_PAGE):
        yield page
        after = page[-1].sequence


async def _show_json(
    store: EventStore, record: RunRecord, events: bool, gate: str, level: float, efficiency: bool
) -> None:
    doc: dict[str, Any] = {
        "runId": record.run_id,
        "status": record.status,
        "summary": record.summary,
        "error": record.error,
    }
    if (link := record.run_request.forked_from) is not None:  # wopeval fork's new run
        doc["forkedFrom"] = link.model_dump(exclude_none=True)
    from wopeval.cli.judge_out import judge_json
    from wopeval.engine.judge import stored_judge_spend

    spend = await stored_judge_spend(store, record.run_id)
    if spend.calls:  # the judge's usage, apart from the agent's efficiency (RFC 0244 §C)
        doc["judge"] = judge_json(spend)
    if record.summary is not None:
        from wopeval.grading.adaptive_report import stored_adaptive
        from wopeval.grading.summary_intervals import summary_intervals

        summary = EvalSummary.model_validate(record.summary)
        doc["gate"] = decide(summary, gate, suite_bounds(record.suite_document, level)).to_json()
        doc["intervals"] = summary_intervals(summary, level).to_json()
        adaptive = stored_adaptive(record.suite_document, summary)
        if adaptive is not None:  # what adaptive trials did (x-wopeval-adaptive)
            doc["adaptive"] = adaptive.to_json()
        if efficiency:  # folds the log: only when asked, so show --json stays light
            from wopeval.service.efficiency import stored_efficiency

            doc["efficiency"] = (await stored_efficiency(store, record, level)).to_json()
    if not events:
        typer.echo(json.dumps(doc))
        return
    head = json.dumps({**doc, "events": []})
    out = sys.stdout  # the same document as json.dumps of it whole, written a page at a time
    out.write(head[: -len("[]}")] + "[")
    first = True
    async for page in _pages(store, record.run_id):
        for event in page:
            out.write(("" if first else ", ") + json.dumps(event.to_wire()))
            first = False
    out.write("]}\n")
    out.flush()


async def _show_text(
    store: EventStore, record: RunRecord, events: bool, gate: str, level: float, efficiency: bool
) -> None:
    from rich.console import Console
    from rich.markup import escape

    from wopeval.cli.judge_out import judge_lines
    from wopeval.cli.render import print_summary
    from wopeval.engine.judge import stored_judge_spend
    from wopeval.events.ids import utc_now
    from wopeval.events.owners import held
    from wopeval.grading.detail import run_detail
    from wopeval.service.runs import fold_log, grading_options

    console = Console()
    count = await store.last_sequence(record.run_id) + 1
    console.print(f"run {record.run_id}  status [bold]{record.status}[/]  events {count}")
    console.print(f"agent {escape(record.agent_id)}", highlight=False)
    if (link := record.run_request.forked_from) is not None:
        console.print(
            f"forked from {link.runId}: task {escape(link.taskId)}, trial {link.trialIndex}, "
            f"at call {link.at}",
            highlight=False,
        )
    if not record.terminal:  # is a process executing it, or was it left so?
        owner, lease = await store.claim_of(record.run_id)
        if held(owner, lease, utc_now()):
            console.print(f"being executed by {owner}", highlight=False)
        else:
            console.print(
                f"no process is executing it: finish it with wopeval run --resume {record.run_id}",
                highlight=False,
                soft_wrap=True,
            )
    if record.summary is not None:
        suite = parse_suite(record.suite_document)
        options = grading_options(record.run_request)
        detail = await fold_log(store, record.run_id, lambda log: run_detail(suite, log, options))
        summary = EvalSummary.model_validate(record.summary)
        verdict = decide(summary, gate, bounds(suite, level))
        print_summary(
            console, summary, record.run_id, suite, detail=detail, verdict=verdict, level=level
        )
        if efficiency:
            from wopeval.cli.render_efficiency import efficiency_table
            from wopeval.grading.efficiency import run_efficiency

            console.print(efficiency_table(run_efficiency(detail, level)))
        spend = await stored_judge_spend(store, record.run_id)
        for line in judge_lines(spend, console.width) if spend.calls else ():
            console.print(line, highlight=False, markup=False)
    if record.error is not None:
        console.print(f"error: {record.error.get('code')}: {record.error.get('message')}")
    if events:
        async for page in _pages(store, record.run_id):
            for event in page:
                console.print(f"{event.sequence:>6} {event.type}", highlight=False)


def register(app: typer.Typer) -> None:
    app.command()(grade)
    app.command()(runs)
    app.command()(show)


__all__ = ["register"]
