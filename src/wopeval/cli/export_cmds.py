"""``wopeval export`` (OpenTelemetry spans, summary, events) and ``wopeval report`` (HTML)."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import Annotated, TextIO

import anyio
import typer

from wopeval.cli.common import fail_input, opened_store, store_option, write_text
from wopeval.cli.gate_opts import StoredGateOpt, chosen_gate
from wopeval.events.store import EventStore, RunRecord
from wopeval.exports.ci import junit_xml, markdown
from wopeval.exports.eee import TrialUsage, eee_export, write_eee
from wopeval.exports.html import render_report
from wopeval.exports.otel import write_otlp_json_lines
from wopeval.grading.adaptive_report import stored_adaptive
from wopeval.grading.detail import RunDetail, run_detail
from wopeval.grading.fold import TrialHook
from wopeval.grading.gate import Bounds, decide, suite_bounds
from wopeval.grading.views import TrialView
from wopeval.service.runs import LOG_PAGE, Fold, fold_log, grading_options
from wopeval.suite import parse_suite
from wopeval.suite.models import Task
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


async def _record(store: EventStore, run_id: str) -> RunRecord:
    record = await store.get_run(run_id)
    if record is None:
        fail_input(f"run {run_id!r} is not in the store")
    return record


def _detail_of(record: RunRecord, on_trial: TrialHook | None = None) -> Fold[RunDetail]:
    """The tenant's own view of the run: every trial's result and reason (one paged pass)."""
    suite = parse_suite(record.suite_document, source=f"run {record.run_id}")
    options = grading_options(record.run_request)
    return lambda log: run_detail(suite, log, options, on_trial=on_trial)


def _summary_of(record: RunRecord) -> EvalSummary:
    if record.summary is None:
        fail_input(f"run {record.run_id!r} has no summary (status {record.status})")
    return EvalSummary.model_validate(record.summary)


def _write(text: str, output: Path | None) -> None:
    if output is None:
        typer.echo(text)
    else:
        write_text(output, text + ("" if text.endswith("\n") else "\n"))


@contextmanager
def open_output(output: Path | None) -> Iterator[TextIO]:
    """Standard output, or the ``--output`` file (a clear error, never a traceback)."""
    if output is None:
        yield sys.stdout
        return
    try:
        with output.open("w", encoding="utf-8") as sink:
            yield sink
    except OSError as exc:
        fail_input(f"--output: cannot write {output}: {exc.strerror or exc}")


async def _write_events(store: EventStore, run_id: str, output: Path | None) -> None:
    """The log as JSON lines, page by page (never the whole log in memory)."""
    with open_output(output) as sink:
        after, first = -1, True
        while page := await store.events(run_id, after, LOG_PAGE):
            for event in page:
                sink.write(("" if first else "\n") + json.dumps(event.to_wire()))
                first = False
            after = page[-1].sequence
        sink.write("\n")


def export(
    run_id: Annotated[str, typer.Argument(metavar="RUN_ID")],
    fmt: Annotated[
        ExportFormat,
        typer.Option(
            "--format",
            "-f",
            help="otel: OTLP/JSON lines, traces then logs "
            "(gen_ai.evaluation.result events); summary: the EvalSummary; "
            "events: the event log as JSON lines; junit: JUnit XML, a testcase per task and "
            "one for the run's gate; markdown: a table for CI job summaries, headed by the "
            "gate's verdict; eee: Every Eval Ever "
            "aggregate + samples files into the -o directory.",
        ),
    ] = ExportFormat.otel,
    output: OutputOpt = None,
    gate: StoredGateOpt = None,
    store: StoreOpt = None,
) -> None:
    """Export a stored run for other tools."""
    if fmt is ExportFormat.eee and output is None:
        fail_input("--format eee writes two files: name their directory with -o")
    if gate is not None and fmt not in (ExportFormat.junit, ExportFormat.markdown):
        fail_input(f"--gate: --format {fmt.value} carries no verdict (junit and markdown do)")

    async def go() -> None:
        async with opened_store(store, must_exist=True) as opened:
            record = await _record(opened, run_id)
            if fmt is ExportFormat.eee:
                assert output is not None
                for path in await _eee(opened, record, output):
                    typer.echo(str(path))
            elif fmt is ExportFormat.summary:
                _summary_of(record)
                _write(json.dumps(record.summary, indent=2), output)
            elif fmt in (ExportFormat.junit, ExportFormat.markdown):
                summary = _summary_of(record)
                chosen = chosen_gate(gate, record.run_request.gate)
                verdict = decide(summary, chosen, _bounds_of(record))
                detail = await fold_log(opened, run_id, _detail_of(record))
                level = record.run_request.ci_level
                if fmt is ExportFormat.junit:
                    _write(junit_xml(summary, run_id, detail, verdict, level=level), output)
                else:
                    adaptive = stored_adaptive(record.suite_document, summary)
                    text = markdown(summary, run_id, detail, verdict, level, adaptive)
                    _write(text, output)
            elif fmt is ExportFormat.events:
                await _write_events(opened, run_id, output)
            else:  # streamed: the log in pages, each trial's spans written once it is scored
                with open_output(output) as sink:
                    await fold_log(
                        opened,
                        run_id,
                        lambda log: write_otlp_json_lines(record.suite_id, run_id, log, sink),
                    )

    anyio.run(go)


async def _eee(store: EventStore, record: RunRecord, output: Path) -> list[Path]:
    summary = _summary_of(record)
    usage: dict[tuple[str, int], TrialUsage] = {}

    def keep(task: Task, view: TrialView) -> None:
        usage[(task.taskId, view.trial_index)] = TrialUsage.of(view)

    detail = await fold_log(store, record.run_id, _detail_of(record, keep))
    export = eee_export(
        summary,
        detail,
        usage,
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
    gate: StoredGateOpt = None,
    store: StoreOpt = None,
) -> None:
    """Write a self-contained HTML report of a completed run."""

    async def go() -> tuple[RunRecord, EvalSummary, RunDetail]:
        async with opened_store(store, must_exist=True) as opened:
            record = await _record(opened, run_id)
            summary = _summary_of(record)
            return record, summary, await fold_log(opened, run_id, _detail_of(record))

    record, summary, detail = anyio.run(go)
    chosen = chosen_gate(gate, record.run_request.gate)
    verdict = decide(summary, chosen, _bounds_of(record))
    page = render_report(
        summary,
        run_id=run_id,
        status=record.status,
        created_at=record.created_at,
        detail=detail,
        verdict=verdict,
    )
    write_text(output, page)
    typer.echo(str(output))


def register(app: typer.Typer) -> None:
    app.command()(export)
    app.command()(report)


__all__ = ["register"]


def _bounds_of(record: RunRecord) -> Bounds:
    """What the run's bound gate compares: its suite's passScore at the run's own level."""
    return suite_bounds(record.suite_document, record.run_request.ci_level)
