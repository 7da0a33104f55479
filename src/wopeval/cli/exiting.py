"""The ``wopeval`` process ends when its command has, not after the interpreter's teardown.

Tearing down an interpreter that imported SQLAlchemy, pydantic's models and the engine (every
module's dict cleared, every object freed one by one) took 0.1 to 0.2 s here after a run had
written its last row and printed its summary: a tenth of a 1,000-trial run, and more than a
one-task run's own work. Nothing in it is the command's: the store is closed and the output
written by then. So :func:`command`, the console script's and ``python -m wopeval``'s entry,
does what the interpreter would do that anyone can see (the ``atexit`` callbacks, which close
logging and run ``weakref.finalize`` hooks, a user agent's too; flushing stdout and stderr) and
then leaves with ``os._exit``. While a non-daemon thread other than the main one is alive (a
user's agent started one), it exits the ordinary way, so the interpreter waits for that thread
as it always has. :func:`wopeval.cli.app.main` itself still raises ``SystemExit``, so a caller
in the same process (a test, an embedding program) keeps its interpreter.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from collections.abc import Callable

__all__ = ["command", "exit_now"]


def _others_running() -> bool:
    main = threading.main_thread()
    return any(t is not main and t.is_alive() and not t.daemon for t in threading.enumerate())


def exit_now(code: int) -> None:
    """Run the ``atexit`` callbacks, flush the standard streams and ``os._exit(code)``;
    returns (does nothing) while a non-daemon thread other than the main one is alive."""
    if _others_running():
        return
    atexit._run_exitfuncs()  # what the interpreter would run (it prints, not raises, errors)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (``| head``) or a closed stream
            code = code or 120  # the interpreter's own status for this
    os._exit(code)


def command(main: Callable[[], None]) -> None:
    """Call ``main`` (which ends with ``SystemExit``) and exit with its code at once; an
    exit that is not a plain code, or any other exception, propagates as it would."""
    try:
        main()
    except SystemExit as exc:
        code = exc.code
        if code is None or type(code) is int:
            exit_now(code or 0)
        raise
