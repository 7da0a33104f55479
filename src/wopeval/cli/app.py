"""The ``wopeval`` command line. Each command lives in its own module with a ``register`` hook.

Exit codes, for every command: 0 success (a suite that passes), 1 a result that fails the gate
(a failing suite, a ``regressed`` verdict, a conformance failure), 2 bad input.
"""

from __future__ import annotations

import importlib

import typer

from wopeval.cli.common import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK

COMMAND_MODULES: tuple[str, ...] = (
    "wopeval.cli.suite_cmds",
    "wopeval.cli.run_cmds",
    "wopeval.cli.export_cmds",
    "wopeval.cli.compare_cmd",
    "wopeval.cli.conformance_cmd",
    "wopeval.cli.import_cmd",
    "wopeval.cli.serve_cmd",
)

app = typer.Typer(
    name="wopeval",
    help="Evaluate AI agents the OpenWOP RFC 0244 way: trajectories, repeated trials, "
    "fail-closed fixtures, regression verdicts.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        from wopeval import __version__

        typer.echo(f"wopeval {__version__}")
        raise typer.Exit(EXIT_OK)


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Evaluate AI agents the OpenWOP RFC 0244 way."""


def _register_all() -> None:
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(app)


_register_all()


__all__ = ["EXIT_BAD_INPUT", "EXIT_FAILED", "EXIT_OK", "app", "main"]


def main() -> None:
    app()
