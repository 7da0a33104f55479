"""The ``wopeval`` command line. Each command lives in its own module with a ``register`` hook,
imported only when the command runs (:mod:`wopeval.cli.lazy`), so ``--help`` loads no engine.

Exit codes, for every command: 0 success (a suite that passes), 1 a result that fails the gate
(a failing suite, a ``regressed`` verdict, a conformance failure), 2 bad input (or a set-up
refused before any trial), 3 a run, store or infrastructure error (a run that failed with trials
that failed for infrastructure: :mod:`wopeval.cli.outage`).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

import typer

from wopeval.cli.common import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK, report_error
from wopeval.cli.exiting import command
from wopeval.cli.lazy import LazyCommand, lazy_group
from wopeval.cli.output import exit_past_blocked_agents
from wopeval.cli.startup import preload, tune_collector
from wopeval.errors import WopevalError, exit_code, unwrap

_SUITE = "wopeval.cli.suite_cmds"
_RUN = "wopeval.cli.run_cmds"
_EXPORT = "wopeval.cli.export_cmds"
_STORED = "wopeval.cli.stored_cmds"

# name → (module, the first line of its docstring); tests/cli/test_lazy.py keeps them in step.
COMMANDS: dict[str, LazyCommand] = {
    "init": LazyCommand(
        "wopeval.cli.init_cmd",
        "Write a starter suite and an agent stub that pass at once (suite.yaml, agent.py).",
    ),
    "validate": LazyCommand(
        _SUITE, "Check eval suites against the schema and the RFC 0244 suite rules."
    ),
    "schema": LazyCommand(
        _SUITE, "Print the JSON Schema (draft 2020-12) of a suite, a summary or an agent file."
    ),
    "suite": LazyCommand(
        _SUITE, "Compare suites: what changed per task between two suite files or runs."
    ),
    "run": LazyCommand(
        _RUN,
        "Run a suite against an agent: every task × every trial. "
        "Exit 0 passed, 1 failed, 3 outage.",
    ),
    "grade": LazyCommand(
        _STORED,
        "Re-grade a stored run from its suite and log; exit 1 if it differs from what is stored.",
    ),
    "runs": LazyCommand(_STORED, "List stored runs, newest first."),
    "show": LazyCommand(
        _STORED, "Print one stored run: status, summary and (with --events) its event log."
    ),
    "export": LazyCommand(_EXPORT, "Export a stored run for other tools."),
    "report": LazyCommand(_EXPORT, "Write a self-contained HTML report of a completed run."),
    "compare": LazyCommand(
        "wopeval.cli.compare_cmd",
        "Compare two stored runs task by task. Exit 1 when the verdict is 'regressed'.",
    ),
    "ci": LazyCommand(
        "wopeval.cli.ci_cmd",
        "Run a suite, compare it with a baseline, write a Markdown report; exit by the verdict.",
    ),
    "pareto": LazyCommand(
        "wopeval.cli.pareto_cmd",
        "Plot success against cost per success across runs of one suite; mark the frontier.",
    ),
    "plan": LazyCommand(
        "wopeval.cli.plan_cmd",
        "Plan trials per task and tasks: to decide the gates and detect a regression.",
    ),
    "conformance": LazyCommand(
        "wopeval.cli.conformance_cmd",
        "Check an OpenWOP host against RFC 0244 (trajectories, trials, fail-closed fixtures).",
    ),
    "grade-log": LazyCommand(
        "wopeval.cli.import_cmd",
        "Grade an OpenWOP v2 event log from any host with the same pure grader as stored runs.",
    ),
    "view": LazyCommand(
        "wopeval.cli.view_cmd",
        "Browse stored runs, trials, trajectories and comparisons in a web browser.",
    ),
    "record": LazyCommand(
        "wopeval.cli.record_cmd",
        "Record a run's tool calls as its suite's fixtures (onMiss: fail) for strict replay.",
    ),
    "fork": LazyCommand(
        "wopeval.cli.fork_cmd",
        "Re-run a stored trial from call N as a new run linked to it (exit 0 passed, 1 failed).",
    ),
    "promote": LazyCommand(
        "wopeval.cli.promote_cmd",
        "Promote a stored trial into a suite task: its tool results as fixtures, its path.",
    ),
    "merge": LazyCommand(
        "wopeval.cli.merge_cmd",
        "Grade a run group's shards as one run with one summary. "
        "Exit 0 passed, 1 failed, 3 outage.",
    ),
    "import-otlp": LazyCommand(
        "wopeval.cli.otlp_cmd",
        "Grade OpenTelemetry traces (GenAI, OpenInference, pydantic-ai) with the pure grader.",
    ),
    "serve": LazyCommand(
        "wopeval.cli.serve_cmd",
        "Serve eval runs to any OpenWOP v2 client (discovery, POST /runs, SSE, eval summaries).",
    ),
}

app = typer.Typer(
    name="wopeval",
    cls=lazy_group(COMMANDS),
    help="Evaluate AI agents the OpenWOP RFC 0244 way: trajectories, repeated trials, "
    "fail-closed fixtures, regression verdicts.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # click's plain help: it wraps at 80 columns, never truncates
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


__all__ = [
    "COMMANDS",
    "EXIT_BAD_INPUT",
    "EXIT_FAILED",
    "EXIT_OK",
    "app",
    "entry",
    "errors_as_exits",
    "exit_status",
    "main",
]


@contextmanager
def errors_as_exits() -> Iterator[None]:
    """The one mapping of the error tree to exit codes: a :class:`WopevalError` (alone, or the
    one error from inside a run's task groups) is reported in one line and becomes
    ``SystemExit`` with its code; anything else propagates."""
    try:
        yield
    except WopevalError as exc:
        report_error(exc)
        raise SystemExit(exit_code(exc)) from None
    except BaseExceptionGroup as group:
        only = unwrap(group)
        if not isinstance(only, WopevalError):
            raise
        report_error(only)
        raise SystemExit(exit_code(only)) from None


def exit_status(exc: SystemExit) -> int:
    """The process's exit status for ``exc``, as the interpreter gives it."""
    return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)


def main() -> None:
    try:
        with errors_as_exits():
            preload(sys.argv[1:], COMMANDS)
            tune_collector()
            app()
    except SystemExit as exc:
        exit_past_blocked_agents(exit_status(exc))
        raise


def entry() -> None:
    """The ``wopeval`` process: :func:`main`, then out without the interpreter's teardown
    (:mod:`wopeval.cli.exiting`)."""
    command(main)
