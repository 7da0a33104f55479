"""A command's modules imported with the cyclic collector paused (the ``wopeval`` process only).

Importing what ``wopeval run`` needs (SQLAlchemy, pydantic's models, the engine) allocates
several hundred thousand objects that live as long as the process. While they are imported the
collector runs again and again, and each full collection walks every one of them alive so far:
about a seventh of a one-task run's start-up here. So :func:`preload` imports the command's
module with the collector off, then freezes what is alive (:func:`gc.freeze`: out of the
collector's reach) and turns it back on.

A run allocates many short-lived containers per trial (payload models, events, views) that
reference counting frees; the cyclic collector would still walk them every 700 net allocations.
:func:`tune_collector` raises that first threshold to :data:`YOUNG_THRESHOLD` for the process.

Both are process-wide, so only :func:`wopeval.cli.app.main` calls them: the ``wopeval`` process
is wopeval's own, while a library user's or a test's process is left as its owner set it
(``evaluate()`` and the run service never touch the collector).
"""

from __future__ import annotations

import gc
import importlib
from collections.abc import Mapping, Sequence

from wopeval.cli.lazy import LazyCommand

__all__ = ["YOUNG_THRESHOLD", "preload", "tune_collector"]

# Net container allocations between young collections while the process runs: finished trials
# leave no cycles (tests/engine/test_gc_policy.py), so this bounds garbage, not memory.
YOUNG_THRESHOLD = 50_000


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
