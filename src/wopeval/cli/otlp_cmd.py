"""``wopeval import-otlp``: grade OpenTelemetry traces a team already collects."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Iterator
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TextIO

import typer
from rich.console import Console

from wopeval.cli.common import fail_input
from wopeval.cli.import_cmd import grade_events
from wopeval.service.otlp_plan import SpanSource
from wopeval.service.otlp_read import OtlpError, OtlpFile, OtlpSpan
from wopeval.service.otlp_trials import UnusableTraces, import_spans
from wopeval.suite import SuiteError, load_suite
from wopeval.wire.events import EVAL_SCORED, RunEvent

if TYPE_CHECKING:
    from rich.progress import Progress


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


def _wrong_suite(suite_id: str, tasks: list[str]) -> str:
    named = ", ".join(repr(t) for t in tasks[:5]) + (
        f" and {len(tasks) - 5} more" * (len(tasks) > 5)
    )
    return (
        f"--suite: no trace is of a task of {suite_id}; the traces name {named}. "
        "Pass the suite they were recorded with (or --map TRACE_ID=TASK_ID)."
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
    """Grade OpenTelemetry traces (GenAI, OpenInference, pydantic-ai) with the pure grader.

    Tool calls are read from tool spans and from the calls model spans say were issued; a
    trial whose trace leaves out what its task grades is unscored, with the reason. More
    traces without a trial index than the suite's trials.count are refused. The file is read
    twice, a line at a time, so memory stays flat however many traces it holds."""
    try:
        suite = load_suite(suite_path)
    except SuiteError as exc:
        fail_input("\n".join(str(e) for e in exc.errors), title=f"invalid suite {suite_path}")
    target = agent or suite.targetAgentId or "imported.agent"
    if events_out is not None and _same_file(events_out, path):
        fail_input(f"--events-out: {events_out} is the input file (it is read twice)")
    shown = _Shown.on_terminal(not as_json)
    source = shown.reading(OtlpFile(path, protobuf=protobuf))
    with _reading(path, shown):
        imported = import_spans(
            suite, source, target_agent_id=target, mapping=_mapping(mapping or [])
        )
    if not imported.spans:
        shown.stop()
        fail_input(f"{path}: no spans in it (no resourceSpans)", title="unreadable traces")
    if imported.trials == 0 and imported.unknown_tasks:
        shown.stop()
        fail_input(_wrong_suite(suite.suiteId, imported.unknown_tasks), title="wrong suite")
    _warn(imported.unattributed, imported.unknown_tasks)
    with ExitStack() as stack:
        stack.callback(shown.stop)
        events: Iterable[RunEvent] = shown.grading(imported.events, imported.trials)
        if events_out is not None:
            try:
                out = events_out.open("w", encoding="utf-8")
                stack.callback(_close, out)
            except OSError as exc:
                shown.stop()
                fail_input(f"--events-out: cannot write {events_out}: {exc.strerror or exc}")
            events = _Tee(events, out, events_out, shown)
        with _reading(path, shown):
            grade_events(suite, events, target, as_json, has_trials=imported.trials > 0)


@contextmanager
def _reading(path: Path, shown: _Shown) -> Iterator[None]:
    """The input's faults as bad input (exit 2), each with its title, the bar cleared first."""
    try:
        yield
    except OSError as exc:
        shown.stop()
        fail_input(f"{path}: {exc.strerror or exc}", title="unreadable traces")
    except UnusableTraces as exc:
        shown.stop()
        fail_input(f"{path}: {exc}", title="unusable traces")
    except (OtlpError, UnicodeDecodeError) as exc:
        shown.stop()
        fail_input(f"{path}: {exc}", title="unreadable traces")


def _close(out: TextIO) -> None:
    """Close ``--events-out``; after a failed write (reported already) its unwritten rest is
    dropped, not raised again."""
    with suppress(OSError):
        out.close()


def _same_file(one: Path, other: Path) -> bool:
    try:
        return one.exists() and one.samefile(other)
    except OSError:
        return False


class _Shown:
    """Progress on the terminal (stderr): spans read while the trials are planned, then trials
    graded; nothing when stderr is not a terminal or with ``--json``."""

    def __init__(self, progress: Progress | None) -> None:
        self._progress = progress

    @classmethod
    def on_terminal(cls, wanted: bool) -> _Shown:
        if not (wanted and sys.stderr.isatty()):
            return cls(None)
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )

        columns = (TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn())
        console = Console(stderr=True)
        return cls(Progress(*columns, TimeElapsedColumn(), console=console, transient=True))

    def reading(self, source: OtlpFile) -> SpanSource:
        if self._progress is None:
            return source
        progress: Progress = self._progress
        progress.start()
        task = progress.add_task("spans read", total=None)

        class Counted:
            def units(self) -> Iterator[list[OtlpSpan]]:
                for unit in source.units():
                    yield unit
                    progress.update(task, advance=len(unit))

        return Counted()

    def grading(self, events: Iterable[RunEvent], trials: int) -> Iterable[RunEvent]:
        if self._progress is None:
            return events
        progress: Progress = self._progress
        task = progress.add_task("trials graded", total=trials)

        class Counted:
            def __iter__(self) -> Iterator[RunEvent]:
                for event in events:
                    yield event
                    if event.type == EVAL_SCORED:
                        progress.update(task, advance=1)
                progress.stop()  # before the summary is printed

        return Counted()

    def stop(self) -> None:
        if self._progress is not None:
            self._progress.stop()


class _Tee:
    """The converted log, written to ``out`` as its first pass is read (grading reads it
    again only for an anomalous log, which this writes once). A failed write is the
    ``--events-out`` file's fault, said so (exit 2), not the input's, once the bar is
    cleared (a write can fail mid-grading, as the buffer fills)."""

    def __init__(self, events: Iterable[RunEvent], out: TextIO, path: Path, shown: _Shown) -> None:
        self._events, self._out, self._path, self._written = events, out, path, False
        self._shown = shown

    def __iter__(self) -> Iterator[RunEvent]:
        write = None if self._written else self._out.write
        self._written = True
        try:
            for event in self._events:
                if write is not None:
                    write(json.dumps(event.to_wire()) + "\n")
                yield event
            self._out.flush()  # before the summary is printed: a full disk is reported here
        except OSError as exc:
            self._shown.stop()
            fail_input(f"--events-out: cannot write {self._path}: {exc.strerror or exc}")


def register(app: typer.Typer) -> None:
    app.command(name="import-otlp")(import_otlp)


__all__ = ["register"]
