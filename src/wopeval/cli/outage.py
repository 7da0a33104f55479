"""A run's exit code when trials failed because a component failed, not the agent.

A trial labelled ``infrastructure`` (its model server unreachable or failing, an MCP server or
agent process that died: :mod:`wopeval.engine.outage`) says nothing about the agent. A run that
did not pass with any such trial could not be judged: it exits ``3`` with one line naming the
component, never ``1``, so a pipeline can tell an outage (retry) from a regression (block). A
run that passed in spite of them passes, and says how many there were. A run whose trials
were retried after such failures (``--retry-infrastructure``) says how many, and why, in one line.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import typer

from wopeval.cli.common import EXIT_FAILED, EXIT_OK, EXIT_RUN_ERROR
from wopeval.engine.outage import cause_of
from wopeval.errors import StoreError

if TYPE_CHECKING:
    from wopeval.grading.detail import RunDetail

__all__ = ["infrastructure_json", "run_exit_code", "store_outage_exits", "trials_json"]

INFRASTRUCTURE = "infrastructure"


def _one_line(text: str, limit: int = 300) -> str:
    """``text`` as one printable line: whitespace runs and control characters (a terminal's
    escape sequences in an exception's text) become single spaces."""
    printable = "".join(c if c.isprintable() else " " for c in text)
    return " ".join(printable.split())[:limit]


def _messages(detail: RunDetail) -> list[str]:
    return [
        cell.reason.message
        for task in detail.tasks
        for cell in task.cells
        if cell.reason is not None and cell.reason.kind == INFRASTRUCTURE
    ]


def infrastructure_json(detail: RunDetail | None) -> int:
    """``--json``'s ``infrastructureFailures``: how many trials failed for infrastructure."""
    return detail.infrastructure_failures() if detail is not None else 0


def trials_json(detail: RunDetail) -> dict[str, object]:
    """What ``run --json`` and ``merge --json`` both say of the run's trials: why each failing
    one failed (``failures``), how many failed for infrastructure (``infrastructureFailures``),
    and how many were retried after such a failure, and why (``retries``)."""
    from wopeval.cli.output import failures_json

    return {
        "failures": failures_json(detail),
        "infrastructureFailures": infrastructure_json(detail),
        "retries": detail.retried(),
    }


def run_exit_code(run_id: str, passed: bool, detail: RunDetail | None) -> int:
    """The exit code of a run the gate judged ``passed`` or not: ``0`` passed; ``3`` it did not
    and a trial failed for infrastructure; else ``1``. Says so on stderr in one line when any
    trial failed for infrastructure (how many, and the commonest reason, naming the component)."""
    messages = _messages(detail) if detail is not None else []
    if messages:
        assert detail is not None
        total = sum(len(task.cells) for task in detail.tasks)
        reason = _one_line(Counter(messages).most_common(1)[0][0])
        reason = reason.removeprefix(f"{INFRASTRUCTURE}: ")
        verdict = "the run passed" if passed else "the run could not be judged (exit 3)"
        typer.echo(
            f"outage: {len(messages)} of {total} trial(s) of run {run_id} failed for "
            f"infrastructure, not the agent; {verdict}: {reason}",
            err=True,
        )
    retried = detail.retried() if detail is not None else {}
    if retried:
        causes = ", ".join(f"{cause} {retried[cause]}" for cause in sorted(retried)
                           if cause not in ("trials", "attempts"))  # fmt: skip
        typer.echo(
            f"retries: {retried['trials']} trial(s) of run {run_id} were run again after an "
            f"infrastructure failure ({retried['attempts']} attempt(s) superseded: {causes}); "
            "each is scored by its last attempt",
            err=True,
        )
    if passed:
        return EXIT_OK
    return EXIT_RUN_ERROR if messages else EXIT_FAILED


# The loggers whose records of a lost store (a traceback each) the command replaces by its line.
_STORE_LOGGERS = ("wopeval.engine", "wopeval.service", "wopeval.events")
_DATABASE_MODULES = ("sqlalchemy", "asyncpg", "aiosqlite", "sqlite3")


def _store_failure(error: BaseException) -> bool:
    """A :class:`StoreError`, or a database driver's own error, is behind ``error``."""
    if cause_of(error, StoreError) is not None:
        return True
    return type(error).__module__.partition(".")[0] in _DATABASE_MODULES


class _StoreLossFilter(logging.Filter):
    """Holds back wopeval's records of a store failure (their tracebacks) while a command's run
    executes, in the process the command owns: if the store is lost the command says it in one
    line instead; if not, they are logged as they would have been."""

    def __init__(self) -> None:
        super().__init__()
        self.held: list[logging.LogRecord] = []

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        said = getattr(record, "storeFailure", False)  # a store failure logged without its trace
        if not said and (error is None or not _store_failure(error)):
            return True
        self.held.append(record)
        return False


@contextmanager
def store_outage_exits(store_url: str | None) -> Iterator[None]:
    """Around a command's run: a :class:`StoreError` behind what it raised (however the run's
    task groups wrapped it) ends the command with exit 3 and one line naming the store."""
    from wopeval.events.urls import shown_url

    quiet = _StoreLossFilter()
    for name in _STORE_LOGGERS:
        logging.getLogger(name).addFilter(quiet)
    completed = False
    try:
        yield
        completed = True
    except typer.Exit:  # the command already said how it ended (an inner handler's one line)
        raise
    except Exception as exc:
        lost = cause_of(exc, StoreError)
        if lost is None:
            raise
        where = shown_url(store_url) or "(default)"
        why = _one_line(str(lost).split("[SQL:")[0])  # not SQLAlchemy's statement
        typer.echo(
            f"outage: the event store {where} failed mid-run; what it committed is kept: {why}",
            err=True,
        )
        raise typer.Exit(EXIT_RUN_ERROR) from None
    finally:
        for name in _STORE_LOGGERS:
            logging.getLogger(name).removeFilter(quiet)
        if completed:  # the command did not end on the store: what was held is logged
            for record in quiet.held:
                logging.getLogger(record.name).handle(record)
