"""``wopeval`` in this process, for tests about what a command prints and returns rather than
about the process. :func:`wopeval` (typer's runner) runs from a working directory with its
environment; :func:`wopeval_here` maps the error tree to exit codes and one stderr line as the
``wopeval`` process does (:func:`wopeval.cli.app.errors_as_exits`), without that process's own
tuning (the collector: this process is the test's), and puts what is logged at WARNING or above
in the captured stderr, as the interpreter's last-resort handler would in a ``wopeval`` process
(which configures no logging), so a test's "one line, no traceback" still sees it."""

from __future__ import annotations

import contextlib
import io
import logging
from dataclasses import dataclass
from pathlib import Path

from typer.testing import CliRunner

from wopeval.cli.app import app, errors_as_exits, exit_status


@dataclass(frozen=True)
class Done:
    """What the command left, named as :class:`subprocess.CompletedProcess` names it."""

    returncode: int
    stdout: str
    stderr: str


def wopeval(cwd: Path, env: dict[str, str], *args: str) -> Done:
    """``wopeval ARGS`` run from ``cwd`` with ``env`` added to the environment; an exception
    other than the command's exit is raised, so a crash never passes for an exit code."""
    with contextlib.chdir(cwd):
        result = CliRunner().invoke(app, list(args), env=env)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Done(result.exit_code, result.stdout, result.stderr)


def wopeval_here(*args: str) -> Done:
    """``wopeval ARGS`` here, its errors mapped as the ``wopeval`` process maps them."""
    out, err = io.StringIO(), io.StringIO()
    last_resort = logging.StreamHandler(err)
    last_resort.setLevel(logging.WARNING)
    root = logging.getLogger()
    root.addHandler(last_resort)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                with errors_as_exits():
                    app(list(args), prog_name="wopeval")
                code = 0
            except SystemExit as exc:
                code = exit_status(exc)
    finally:
        root.removeHandler(last_resort)
    return Done(code, out.getvalue(), err.getvalue())
