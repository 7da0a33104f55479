"""Shared CLI pieces: exit codes, the store option, and bad-input reporting."""

from __future__ import annotations

import math
import socket
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import typer

from wopeval import errors
from wopeval.errors import UserError, WopevalError

if TYPE_CHECKING:  # the store imports SQLAlchemy; ``wopeval --help`` must not (cli/lazy.py)
    from rich.console import Console

    from wopeval.events.store import EventStore

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = errors.EXIT_BAD_INPUT
EXIT_RUN_ERROR = errors.EXIT_RUN_ERROR


def store_option() -> Any:
    return typer.Option(
        "--store",
        envvar="WOPEVAL_STORE",
        help="Event store: a SQLite path or URL (default ./.wopeval/wopeval.db), "
        "or postgresql://user@host/db.",
    )


def check_finite(option: str, value: float | None) -> None:
    """Typer's ranges admit ``inf``; a ceiling or timeout must be a real number."""
    if value is not None and not math.isfinite(value):
        fail_input(f"{option}: {value} is not a finite number")


def check_store_path(url: str | None, *, must_exist: bool) -> None:
    """Refuse a SQLite store that is a directory, or (``must_exist``, for commands that only
    read) a file that is not there: reading never creates an empty database and its folders."""
    from wopeval.events.urls import normalize_store_url, sqlite_path  # wopeval.events: SQLAlchemy

    try:
        path = sqlite_path(normalize_store_url(url))
    except ValueError:
        return  # opening reports it
    if path is None:
        return
    if path.is_dir():
        fail_input(f"--store: {path} is a directory, not an event store")
    if must_exist and not path.is_file():
        fail_input(
            f"--store: there is no event store at {path} "
            "(`wopeval run` creates one; pass --store or set WOPEVAL_STORE to read another)"
        )


@asynccontextmanager
async def opened_store(url: str | None, *, must_exist: bool = False) -> AsyncIterator[EventStore]:
    """Open the event store, turning every way it can fail into a one-line ``--store`` error.

    ``must_exist`` is for commands that only read: a SQLite file that is not there is an error.
    """
    from wopeval.events.store import EventStore
    from wopeval.events.urls import shown_url

    check_store_path(url, must_exist=must_exist)
    try:
        store = await EventStore.open(url)
    except Exception as exc:  # any failure to open is the caller's --store, at this boundary
        reason = str(getattr(exc, "orig", None) or exc).strip().splitlines()[0][:300]
        where = shown_url(url) or "(default)"
        if isinstance(exc, ConnectionError | TimeoutError | socket.gaierror):
            _fail(
                f"--store: cannot reach the event store {where}: {reason}",
                "store error",
                EXIT_RUN_ERROR,
            )  # fmt: skip (the server is down or away: not the input)
        fail_input(f"--store: cannot open the event store {where}: {reason}")
    try:
        yield store
    finally:
        await store.close()


def write_text(path: Path, text: str, *, option: str = "--output") -> None:
    """Write an output file, or fail with a clear message (never a traceback)."""
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        fail_input(f"{option}: cannot write {path}: {exc.strerror or exc}")


def report_error(error: WopevalError) -> None:
    """One error of the tree on stderr: a title by its kind, then its message (no traceback)."""
    title = "bad input" if isinstance(error, UserError) else f"error ({type(error).__name__})"
    from rich.console import Console

    _say(Console(stderr=True), title, str(error))


def fail_input(message: str, *, title: str = "bad input") -> NoReturn:
    """Report the caller's mistake on stderr and exit 2."""
    _fail(message, title, EXIT_BAD_INPUT)


def _fail(message: str, title: str, code: int) -> NoReturn:
    from rich.console import Console

    _say(Console(stderr=True), title, message)
    raise typer.Exit(code)


def _say(console: Console, title: str, message: str) -> None:
    """A one-line message as one line (``title: message``, what a CI log shows); several
    (every error of a file at once) under their title, one a line."""
    from rich.markup import escape

    if "\n" not in message:
        console.print(f"[bold red]{escape(title)}:[/] ", end="", highlight=False, soft_wrap=True)
        console.print(message, highlight=False, markup=False, soft_wrap=True)
        return
    console.print(f"[bold red]{escape(title)}[/]", highlight=False, soft_wrap=True)
    console.print(message, highlight=False, markup=False, soft_wrap=True)
