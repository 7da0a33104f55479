"""``wopeval record``: write a stored run's tool boundary back into its suite as fixtures."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import anyio
import typer
import yaml

from wopeval.cli.common import fail_input, opened_store, store_option, write_text
from wopeval.exports.record import RecordedTask, RecordError, record_suite
from wopeval.service.runs import fold_log
from wopeval.suite import SuiteError, parse_suite

_TERMINAL = ("completed", "failed", "cancelled")


async def _record(
    url: str | None, run_id: str, trial: int | None, tasks: list[str] | None
) -> tuple[dict[str, Any], list[RecordedTask]]:
    """The run's suite with the fixtures recorded from its log, read in pages (twice), never
    whole; one store opened for the run and its log."""
    async with opened_store(url, must_exist=True) as store:
        found = await store.get_run(run_id)
        if found is None:
            fail_input(f"run {run_id!r} is not in the store")
        if found.kind != "eval" or found.status not in _TERMINAL:
            fail_input(f"run {run_id!r} is not a finished eval run (status {found.status})")
        document = found.suite_document
        return await fold_log(
            store,
            run_id,
            lambda log: record_suite(document, log, trial=trial, task_ids=tasks),
        )


def _dump(document: dict[str, object], output: Path) -> str:
    if output.suffix.lower() in (".yaml", ".yml"):
        return yaml.safe_dump(document, sort_keys=False, allow_unicode=True)
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


def _said(task: RecordedTask) -> dict[str, object]:
    return {
        "taskId": task.task_id,
        "trialIndex": task.trial_index,
        "toolResponses": len(task.calls),
        "toolErrors": task.error_count,
    }


def record(
    run_id: Annotated[str, typer.Argument(metavar="RUN", help="The stored run to record from.")],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="The suite file to write (.json/.yaml).")
    ],
    trial: Annotated[
        int | None,
        typer.Option("--trial", min=0, help="Record this trial (default: each task's first)."),
    ] = None,
    tasks: Annotated[
        list[str] | None,
        typer.Option("--task", help="Record only this task (repeatable; default: all)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Say what was recorded as JSON.")] = False,
    store: Annotated[str | None, store_option()] = None,
) -> None:
    """Record a run's tool calls as its suite's fixtures (onMiss: fail) for strict replay."""
    try:
        document, recorded = anyio.run(_record, store, run_id, trial, tasks)
        parse_suite(document, source=f"recorded from {run_id}")
    except RecordError as exc:
        fail_input(str(exc), title="cannot record")
    except SuiteError as exc:
        fail_input("\n".join(str(e) for e in exc.errors), title="recorded suite is invalid")
    write_text(output, _dump(document, output))
    said = [_said(task) for task in recorded]
    if as_json:
        typer.echo(json.dumps({"runId": run_id, "output": str(output), "tasks": said}))
        return
    for item in said:
        typer.echo(
            f"{item['taskId']}: trial {item['trialIndex']}, {item['toolResponses']} "
            f"tool responses ({item['toolErrors']} errors)"
        )
    typer.echo(f"wrote {output}")


def register(app: typer.Typer) -> None:
    app.command()(record)


__all__ = ["register"]
