"""``wopeval export`` (OpenTelemetry spans, summary, events) and ``wopeval report`` (HTML)."""

from __future__ import annotations

import json
import time
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import anyio
import typer

from wopeval.cli.common import fail_input, opened_store, store_option, write_text
from wopeval.events.store import RunRecord
from wopeval.exports.ci import junit_xml, markdown
from wopeval.exports.eee import eee_export, write_eee
from wopeval.exports.html import render_report
from wopeval.exports.otel import otlp_json_lines
from wopeval.grading.detail import RunDetail, run_detail
from wopeval.grading.views import collect_trials
from wopeval.service.runs import grading_options
from wopeval.suite import parse_suite
from wopeval.wire.events import RunEvent
from wopeval.wire.summary import EvalSummary

StoreOpt = Annotated[str | None, store_option()]
OutputOpt = Annotated[
    Path | None, typer.Option("--output", "-o", help="Write to this file (default: stdout).")
]


class ExportFormat(StrEnum):
    otel = "otel"
    summary = "summary"
    events = "events"
    junit = "junit"
    markdown = "markdown"
    eee = "eee"


async def _load(url: str | None, run_id: str) -> tuple[RunRecord | None, list[RunEvent]]:
    async with opened_store(url, must_exist=True) as store:
        record = await store.get_run(run_id)
        return record, (await store.events(run_id) if record is not None else [])


def _loaded(store: str | None, run_id: str) -> tuple[RunRecord, list[RunEvent]]:
    record, events = anyio.run(_load, store, run_id)
    if record is None:
        fail_input(f"run {run_id!r} is not in the store")
    return record, events


def _detail(record: RunRecord, events: list[RunEvent]) -> RunDetail:
    """The tenant's own view of the run: every trial's result and reason."""
    suite = parse_suite(record.suite_document, source=f"run {record.run_id}")
    return run_detail(suite, events, grading_options(record.run_request))


def _write(text: str, output: Path | None) -> None:
    if output is None:
        typer.echo(text)
    else:
        write_text(output, text + ("" if text.endswith("\n") else "\n"))


def export(
    run_id: Annotated[str, typer.Argument(metavar="RUN_ID")],
    fmt: Annotated[
        ExportFormat,
        typer.Option(
            "--format",
            "-f",
            help="otel: OTLP/JSON lines, traces then logs "
            "(gen_ai.evaluation.result events); summary: the EvalSummary; "
            "events: the event log as JSON lines; junit: JUnit XML, a testcase per task; "
            "markdown: a table for CI job summaries; eee: Every Eval Ever "
            "aggregate + samples files into the -o directory.",
        ),
    ] = ExportFormat.otel,
    output: OutputOpt = None,
    store: StoreOpt = None,
) -> None:
    """Export a stored run for other tools."""
    record, events = _loaded(store, run_id)
    if fmt is ExportFormat.eee:
        for path in _eee(record, events, output):
            typer.echo(str(path))
    elif fmt in (ExportFormat.summary, ExportFormat.junit, ExportFormat.markdown):
        if record.summary is None:
            fail_input(f"run {run_id!r} has no summary (status {record.status})")
        summary = EvalSummary.model_validate(record.summary)
        if fmt is ExportFormat.junit:
            _write(junit_xml(summary, run_id, _detail(record, events)), output)
        elif fmt is ExportFormat.markdown:
            _write(markdown(summary, run_id, _detail(record, events)), output)
        else:
            _write(json.dumps(record.summary, indent=2), output)
    elif fmt is ExportFormat.events:
        _write("\n".join(json.dumps(e.to_wire()) for e in events), output)
    else:
        _write(otlp_json_lines(record.suite_id, run_id, events), output)


def _eee(record: RunRecord, events: list[RunEvent], output: Path | None) -> list[Path]:
    if output is None:
        fail_input("--format eee writes two files: name their directory with -o")
    if record.summary is None:
        fail_input(f"run {record.run_id!r} has no summary (status {record.status})")
    summary = EvalSummary.model_validate(record.summary)
    export = eee_export(
        summary,
        _detail(record, events),
        collect_trials(events),
        run_id=record.run_id,
        agent_id=record.agent_id,
        retrieved_timestamp=str(int(time.time())),
    )
    return write_eee(export, output)


def report(
    run_id: Annotated[str, typer.Argument(metavar="RUN_ID")],
    output: Annotated[Path, typer.Option("--output", "-o", help="The HTML file to write.")] = Path(
        "wopeval-report.html"
    ),
    store: StoreOpt = None,
) -> None:
    """Write a self-contained HTML report of a completed run."""
    record, events = _loaded(store, run_id)
    if record.summary is None:
        fail_input(f"run {run_id!r} has no summary (status {record.status})")
    summary = EvalSummary.model_validate(record.summary)
    page = render_report(
        summary,
        run_id=run_id,
        status=record.status,
        created_at=record.created_at,
        detail=_detail(record, events),
    )
    write_text(output, page)
    typer.echo(str(output))


def register(app: typer.Typer) -> None:
    app.command()(export)
    app.command()(report)


__all__ = ["register"]
