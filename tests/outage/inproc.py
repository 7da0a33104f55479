"""``wopeval ARGS`` in the test's own process, for the outage tests whose point is not the
process boundary (each exit code still has its real-process test in test_outage_exits.py).

:func:`wopeval_here` maps the error tree to exit codes and one stderr line as
:func:`wopeval.cli.app.main` does, without the ``wopeval`` process's own tuning (the collector:
this process is the test's). What is logged at WARNING or above lands in the captured stderr,
formatted as the interpreter's last-resort handler would in a ``wopeval`` process (which
configures no logging), so a test's "one line, no traceback" still sees it.
"""

from __future__ import annotations

import io
import logging
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass

from wopeval.cli.app import app
from wopeval.cli.common import report_error
from wopeval.errors import WopevalError, exit_code, unwrap


@dataclass(frozen=True)
class Ran:
    """What :func:`subprocess.run` would have returned (the same three fields)."""

    returncode: int
    stdout: str
    stderr: str


def _code(exc: SystemExit) -> int:
    return exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)


def wopeval_here(*args: str) -> Ran:
    """Run the ``wopeval`` command line with ``args`` here; its exit code and output."""
    out, err = io.StringIO(), io.StringIO()
    last_resort = logging.StreamHandler(err)
    last_resort.setLevel(logging.WARNING)
    root = logging.getLogger()
    root.addHandler(last_resort)
    try:
        with redirect_stdout(out), redirect_stderr(err):
            try:
                app(list(args), prog_name="wopeval")
                code = 0
            except SystemExit as exc:
                code = _code(exc)
            except WopevalError as exc:
                report_error(exc)
                code = exit_code(exc)
            except BaseExceptionGroup as group:
                only = unwrap(group)
                if not isinstance(only, WopevalError):
                    raise
                report_error(only)
                code = exit_code(only)
    finally:
        root.removeHandler(last_resort)
    return Ran(code, out.getvalue(), err.getvalue())
