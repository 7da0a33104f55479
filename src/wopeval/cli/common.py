"""Shared CLI pieces: exit codes, the store option, and bad-input reporting."""

from __future__ import annotations

from typing import Any, NoReturn

import typer
from rich.console import Console

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2


def store_option() -> Any:
    return typer.Option(
        "--store",
        envvar="WOPEVAL_STORE",
        help="Event store: a SQLite path or URL (default ./.wopeval/wopeval.db), "
        "or postgresql://user@host/db.",
    )


def fail_input(message: str, *, title: str = "bad input") -> NoReturn:
    """Report the caller's mistake on stderr and exit 2."""
    console = Console(stderr=True)
    console.print(f"[bold red]{title}[/]", highlight=False)
    console.print(message, highlight=False, markup=False)
    raise typer.Exit(EXIT_BAD_INPUT)
