"""The collector's settings while runs execute: what is alive when a run starts is frozen, and
the youngest generation is collected less often.

A run allocates many short-lived containers per trial (payload models, events, views) that
reference counting frees; the cyclic collector still walks them every 700 net allocations, and
each full collection walks every object alive since start-up (the imported libraries, the
suite). So for the run's duration :func:`gc.freeze` moves the objects alive at its start out of
the collector's reach and the first threshold is raised to :data:`YOUNG_THRESHOLD`; both are
undone when the last run executing in the process ends (runs may overlap, e.g. in a host).
Nothing is left uncollected: a frozen object that becomes garbage is collected after
:func:`gc.unfreeze`, and cycles made during the run are collected as usual, less often.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["YOUNG_THRESHOLD", "run_gc_policy"]

# 50,000 net container allocations between young collections (10,000 cost 1.4% more CPU a
# trial, perTrialCpu A/B): the trials in flight's objects are walked less often; finished
# trials leave no cycles (tests/engine/test_gc_policy.py), so this bounds garbage, not memory.
YOUNG_THRESHOLD = 50_000

_lock = threading.Lock()
_active = 0
_saved: tuple[int, int, int] | None = None


@contextmanager
def run_gc_policy() -> Iterator[None]:
    """Apply the run's collector settings while the block runs (re-entrant, thread-safe)."""
    global _active, _saved
    with _lock:
        if _active == 0:
            _saved = gc.get_threshold()
            gc.freeze()
            young, *older = _saved
            gc.set_threshold(max(young, YOUNG_THRESHOLD), *older)
        _active += 1
    try:
        yield
    finally:
        with _lock:
            _active -= 1
            if _active == 0 and _saved is not None:
                gc.set_threshold(*_saved)
                gc.unfreeze()
                _saved = None
