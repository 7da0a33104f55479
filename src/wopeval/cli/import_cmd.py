"""``wopeval grade-log``: grade an event log recorded elsewhere (an imported trace)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError
from rich.console import Console

from wopeval.cli.common import EXIT_FAILED, EXIT_OK, fail_input
from wopeval.cli.render import print_summary
from wopeval.errors import UserError
from wopeval.grading.summary import GradingOptions, build_summary
from wopeval.grading.views import collect_trials
from wopeval.suite import SuiteError, load_suite
from wopeval.suite.models import AgentEvalSuite
from wopeval.wire.events import RunEvent


class EventLogError(UserError):
    """An event log that cannot be read; the message says where and why."""


def read_events(path: Path) -> list[RunEvent]:
    """Events from a JSON array, a ``{"events": [...]}`` poll page, or JSON lines."""
    text = path.read_text(encoding="utf-8")
    try:
        doc: Any = json.loads(text)
        rows = doc.get("events") if isinstance(doc, dict) else doc
    except ValueError:  # not JSON, or an integer Python will not convert (over 4,300 digits)
        rows = []
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except ValueError as exc:
                    huge = "an integer of more than 4,300 digits"
                    why = exc.msg if isinstance(exc, json.JSONDecodeError) else huge
                    raise EventLogError(f"line {number}: not JSON ({why})") from exc
    if not isinstance(rows, list):
        raise EventLogError(
            'expected a JSON array of events, a poll page {"events": [...]}, or JSON lines'
        )
    events = []
    for index, row in enumerate(rows):
        try:
            events.append(RunEvent.model_validate(row))
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "event"
            raise EventLogError(f"event {index}: {where}: {first['msg']}") from exc
    return sorted(events, key=lambda e: e.sequence)


def grade_log(
    events_path: Annotated[Path, typer.Argument(metavar="EVENTS", help="Event log file.")],
    suite_path: Annotated[Path, typer.Option("--suite", help="The suite the run executed.")],
    agent: Annotated[
        str | None, typer.Option(help="The run's target agentId (default: the suite's).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary JSON.")] = False,
) -> None:
    """Grade an OpenWOP v2 event log from any host with the same pure grader as stored runs."""
    try:
        suite = load_suite(suite_path)
    except SuiteError as exc:
        fail_input("\n".join(str(e) for e in exc.errors), title=f"invalid suite {suite_path}")
    agent = agent or suite.targetAgentId
    if agent is None:
        fail_input(f"--agent is required: {suite_path} names no targetAgentId")
    try:
        events = read_events(events_path)
    except OSError as exc:
        fail_input(f"{events_path}: {exc.strerror or exc}", title="unreadable event log")
    except (EventLogError, UnicodeDecodeError) as exc:
        fail_input(f"{events_path}: {exc}", title="unreadable event log")
    grade_events(suite, events, agent, as_json)


def grade_events(
    suite: AgentEvalSuite,
    events: Iterable[RunEvent],
    agent: str,
    as_json: bool,
    *,
    has_trials: bool | None = None,
) -> None:
    """Grade an event log against its suite, print, exit 0/1 (grade-log and import-otlp).

    ``has_trials``: whether the log holds a trial of a task of the suite, when the caller
    knows (else the log is read for it); ``events`` may be read more than once."""
    if has_trials is None:
        task_ids = {task.taskId for task in suite.tasks}
        has_trials = any(task_id in task_ids for task_id, _ in collect_trials(events))
    if not has_trials:
        Console(stderr=True).print(
            f"[yellow]warning[/]: no trial of a task of {suite.suiteId} is in this log; "
            "every task is graded as not run",
            highlight=False,
        )
    summary = build_summary(suite, events, GradingOptions(target_agent_id=agent))
    if as_json:
        typer.echo(summary.to_json())
    else:
        print_summary(Console(), summary, suite=suite)
    raise typer.Exit(EXIT_OK if summary.passed else EXIT_FAILED)


def register(app: typer.Typer) -> None:
    app.command(name="grade-log")(grade_log)
