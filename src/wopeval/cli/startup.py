"""The ``wopeval`` process's own tuning: commands imported with the cyclic collector paused,
the young collection threshold, and a serving process's switch interval.

Importing what ``wopeval run`` needs (SQLAlchemy, pydantic's models, the engine) allocates
several hundred thousand objects that live as long as the process. While they are imported the
collector runs again and again, and each full collection walks every one of them alive so far:
about a seventh of a one-task run's start-up here. So :func:`preload` imports the command's
module with the collector off, then freezes what is alive (:func:`gc.freeze`: out of the
collector's reach) and turns it back on.

A run allocates many short-lived containers per trial (payload models, events, views) that
reference counting frees; the cyclic collector would still walk them every 700 net allocations.
:func:`tune_collector` raises that first threshold to :data:`YOUNG_THRESHOLD` for the process.

A serving process also shortens the interpreter's switch interval (:func:`favour_the_loop`,
called by ``wopeval serve`` only).

All are process-wide, so only the ``wopeval`` process calls them (:func:`wopeval.cli.app.main`,
``wopeval serve``): the ``wopeval`` process is wopeval's own, while a library user's or a
test's process is left as its owner set it (``evaluate()``, the run service and the host's app
never touch the collector or the switch interval).
"""

from __future__ import annotations

import gc
import importlib
import sys
from collections.abc import Mapping, Sequence

from wopeval.cli.lazy import LazyCommand

__all__ = [
    "AGENT_SWITCH_INTERVAL_S",
    "YOUNG_THRESHOLD",
    "favour_the_loop",
    "preload",
    "tune_collector",
]

# Net container allocations between young collections while the process runs: finished trials
# leave no cycles (tests/engine/test_gc_policy.py), so this bounds garbage, not memory.
YOUNG_THRESHOLD = 50_000

# The interpreter's switch interval in a serving process. A tenant's agent spinning in its
# worker thread keeps the GIL until the loop's thread has waited this long, each time that
# thread wants it back: after every system call it makes, dozens per request (5 ms by default).
AGENT_SWITCH_INTERVAL_S = 0.0002


def preload(argv: Sequence[str], commands: Mapping[str, LazyCommand]) -> None:
    """Import the module of the command ``argv`` starts with (if it names one), the collector
    paused; what the import leaves alive is frozen. An import that fails raises as it would
    have when the command was resolved, the collector back on."""
    spec = commands.get(argv[0]) if argv else None
    if spec is None:
        return
    enabled = gc.isenabled()
    gc.disable()
    try:
        importlib.import_module(spec.module)
        gc.freeze()
    finally:
        if enabled:
            gc.enable()


def tune_collector() -> None:
    """Collect the youngest generation every :data:`YOUNG_THRESHOLD` net allocations (a higher
    threshold already set is kept)."""
    young, *older = gc.get_threshold()
    gc.set_threshold(max(young, YOUNG_THRESHOLD), *older)


def favour_the_loop() -> None:
    """Tune a process whose event loop serves requests beside tenants' agent threads (``wopeval
    serve``, once its app is built): shorten the switch interval
    (:data:`AGENT_SWITCH_INTERVAL_S`), and freeze the objects start-up made, so that a full
    collection, which stops every thread, scans only what the runs since then hold."""
    sys.setswitchinterval(min(sys.getswitchinterval(), AGENT_SWITCH_INTERVAL_S))
    gc.freeze()
