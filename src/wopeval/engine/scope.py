"""What a run owns for as long as it runs: resources its trials share, such as one model client
per endpoint, made on first use and closed when the run ends, however it ends (completed,
failed, cancelled, interrupted).

:func:`run_scope` is entered by :func:`wopeval.engine.run.execute_run` around the run; the
trials' tasks inherit it (a ``ContextVar``: concurrent runs in one host each see their own).
An agent or judge asks :func:`current_scope` and, outside a run (a trial executed in a Ray
worker, an agent called directly, code on an off-loop agent's own event loop), gets ``None``:
it then makes and closes its own resource per call.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable
from contextlib import asynccontextmanager
from contextvars import ContextVar
from typing import Any, TypeVar, cast

import anyio

__all__ = ["RunScope", "current_scope", "run_scope"]

log = logging.getLogger("wopeval.engine")
T = TypeVar("T")
_CURRENT: ContextVar[RunScope | None] = ContextVar("wopeval_run_scope", default=None)


class RunScope:
    """One run's shared resources, by key; ``concurrency`` is the run's trial concurrency (how
    many trials may use a resource at once: a connection pool is sized to it)."""

    def __init__(self, concurrency: int) -> None:
        self.concurrency = max(1, concurrency)
        self._held: dict[Hashable, tuple[Any, Callable[[Any], Awaitable[None]]]] = {}
        self.closed = False
        # Its resources are bound to the run's event loop: code on another loop (an agent run
        # off the loop, in its own thread) does not share them.
        self.thread = threading.get_ident()

    def shared(
        self, key: Hashable, make: Callable[[], T], close: Callable[[T], Awaitable[None]]
    ) -> T:
        """The resource under ``key``, made by ``make()`` the first time (synchronously: no two
        trials can make the same one) and closed by ``close`` at the run's end."""
        if self.closed:
            raise RuntimeError("the run's scope is closed: its run has ended")
        held = self._held.get(key)
        if held is None:
            held = (make(), cast(Callable[[Any], Awaitable[None]], close))
            self._held[key] = held
        return cast(T, held[0])

    def __len__(self) -> int:
        return len(self._held)

    async def aclose(self) -> None:
        """Close every resource, the last made first. A resource that fails to close is logged:
        the run's own outcome is what the caller reports."""
        self.closed = True
        held, self._held = list(self._held.values()), {}
        for resource, close in reversed(held):
            try:
                await close(resource)
            except Exception as exc:
                log.warning("a run resource did not close: %s: %s", type(exc).__name__, exc)


def current_scope() -> RunScope | None:
    """The scope of the run this code executes in, or ``None`` outside a run (or on another
    thread's event loop than the run's)."""
    scope = _CURRENT.get()
    return scope if scope is not None and scope.thread == threading.get_ident() else None


@asynccontextmanager
async def run_scope(concurrency: int) -> AsyncIterator[RunScope]:
    """A scope for one run: current inside the block, closed (shielded from cancellation) when
    the block exits, by any exit."""
    scope = RunScope(concurrency)
    token = _CURRENT.set(scope)
    try:
        yield scope
    finally:
        _CURRENT.reset(token)
        with anyio.CancelScope(shield=True):
            await scope.aclose()
