"""``wopeval import-otlp``: grade OpenTelemetry traces a team already collects."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from wopeval.cli.common import fail_input, write_text
from wopeval.cli.import_cmd import grade_events
from wopeval.service.otlp_read import OtlpError, read_otlp
from wopeval.service.otlp_trials import import_spans
from wopeval.suite import SuiteError, load_suite


def _mapping(pairs: list[str]) -> dict[str, str]:
    mapping: dict[str, str] = {}
    for pair in pairs:
        trace, sep, task = pair.partition("=")
        if not sep or not trace or not task:
            fail_input(f"--map {pair!r}: expected TRACE_ID=TASK_ID (or *=TASK_ID)")
        mapping[trace.lower() if trace != "*" else trace] = task
    return mapping


def _warn(unattributed: int, unknown_tasks: list[str]) -> None:
    err = Console(stderr=True)
    if unattributed:
        err.print(
            f"[yellow]warning[/]: {unattributed} trace(s) name no task "
            "(no openwop.eval.task_id, no --map); not graded",
            highlight=False,
        )
    for task_id in unknown_tasks:
        err.print(
            f"[yellow]warning[/]: the suite has no task {task_id!r}; its traces are not graded",
            highlight=False,
        )


def import_otlp(
    path: Annotated[Path, typer.Argument(metavar="FILE", help="OTLP/JSON lines or protobuf.")],
    suite_path: Annotated[Path, typer.Option("--suite", help="The suite to grade against.")],
    agent: Annotated[
        str | None, typer.Option(help="The target agentId (default: the suite's).")
    ] = None,
    mapping: Annotated[
        list[str] | None,
        typer.Option(
            "--map",
            help="TRACE_ID=TASK_ID for traces without openwop.eval.task_id "
            "(* for all others; repeatable).",
        ),
    ] = None,
    protobuf: Annotated[
        bool | None, typer.Option("--protobuf/--json-lines", help="Input format (default: sniff).")
    ] = None,
    events_out: Annotated[
        Path | None, typer.Option("--events-out", help="Also write the converted event log.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary JSON.")] = False,
) -> None:
    """Grade OpenTelemetry traces (GenAI, OpenInference, pydantic-ai) with the pure grader."""
    try:
        suite = load_suite(suite_path)
    except SuiteError as exc:
        fail_input("\n".join(str(e) for e in exc.errors), title=f"invalid suite {suite_path}")
    try:
        spans = read_otlp(path.read_bytes(), protobuf=protobuf)
    except OSError as exc:
        fail_input(f"{path}: {exc.strerror or exc}", title="unreadable traces")
    except (OtlpError, UnicodeDecodeError) as exc:
        fail_input(f"{path}: {exc}", title="unreadable traces")
    target = agent or suite.targetAgentId or "imported.agent"
    try:
        imported = import_spans(
            suite, spans, target_agent_id=target, mapping=_mapping(mapping or [])
        )
    except OtlpError as exc:
        fail_input(f"{path}: {exc}", title="unusable traces")
    _warn(imported.unattributed, imported.unknown_tasks)
    if events_out is not None:
        lines = "".join(json.dumps(e.to_wire()) + "\n" for e in imported.events)
        write_text(events_out, lines, option="--events-out")
    grade_events(suite, imported.events, target, as_json)


def register(app: typer.Typer) -> None:
    app.command(name="import-otlp")(import_otlp)


__all__ = ["register"]
