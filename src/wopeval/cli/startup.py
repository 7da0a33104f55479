"""A command's modules imported with the cyclic collector paused (the ``wopeval`` process only).

Importing what ``wopeval run`` needs (SQLAlchemy, pydantic's models, the engine) allocates
several hundred thousand objects that live as long as the process. While they are imported the
collector runs again and again, and each full collection walks every one of them alive so far:
about a seventh of a one-task run's start-up here. So :func:`preload` imports the command's
module with the collector off, then freezes what is alive (:func:`gc.freeze`: out of the
collector's reach, as :mod:`wopeval.engine.gcpolicy` does at a run's start) and turns it back on.
Only :func:`wopeval.cli.app.main` calls it: a library user's or a test's process is untouched.
"""

from __future__ import annotations

import gc
import importlib
from collections.abc import Mapping, Sequence

from wopeval.cli.lazy import LazyCommand

__all__ = ["preload"]


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
