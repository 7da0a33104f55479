"""A process's claim on the runs it executes, held while it executes them (``wopeval run``).

A host claims its runs for as long as it lives (:mod:`wopeval.host.lifecycle`). A ``wopeval
run`` process claims the one run it creates or resumes the same way, under an owner id of its
own: the lease is renewed every third of :data:`LEASE_SECONDS` while the run executes and
released when the process stops executing it, however it stops (completed, cancelled, an
error). So ``wopeval run --resume`` of a run that another process is executing is refused
(:meth:`RunService.prepare_resume`), while a run whose process ended, or was killed on this
machine, can be resumed at once; one whose process vanished elsewhere once its lease ran out.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from typing import Any

import anyio

from wopeval.engine.run import RunHandle
from wopeval.events.owners import owner_id
from wopeval.events.reach import store_unreachable
from wopeval.events.records import LEASE_SECONDS, ClaimLostError, claim_lost_message
from wopeval.events.store import EventStore

__all__ = ["ClaimWatch", "Lost", "holding_runs"]

_Watched = Callable[[RunHandle], Coroutine[Any, Any, None]]

log = logging.getLogger("wopeval.service")


Lost = Callable[[dict[str, str | None]], None]


class ClaimWatch:
    """``holding_runs``'s ``on_lost`` for a process executing runs by their handles: a run
    another process took over is stopped at once (interrupted: no terminal event, which is the
    other process's to write), and :meth:`check` then raises
    :class:`~wopeval.events.records.ClaimLostError` for it, naming the new owner."""

    def __init__(self) -> None:
        self.lost: dict[str, str | None] = {}
        self._handles: dict[str, RunHandle] = {}

    def __call__(self, lost: dict[str, str | None]) -> None:
        self.lost.update(lost)
        for run_id in lost:
            handle = self._handles.get(run_id)
            if handle is not None:
                _stop(handle)

    def watch(self, handle: RunHandle) -> None:
        """Stop ``handle`` should its run be (or have been) taken over."""
        self._handles[handle.run_id] = handle
        if handle.run_id in self.lost:
            _stop(handle)

    def watching(self, on_signal: _Watched) -> _Watched:
        """``on_signal`` (started beside each run a command executes), watching the run too."""

        async def watched(handle: RunHandle) -> None:
            self.watch(handle)
            await on_signal(handle)

        return watched

    def check(self, run_id: str) -> None:
        """Raise :class:`ClaimLostError` if ``run_id`` was taken over while executed here."""
        if run_id in self.lost:
            raise ClaimLostError(claim_lost_message(run_id, self.lost[run_id]))


def _stop(handle: RunHandle) -> None:
    handle.interrupt()
    handle.cancel()


@asynccontextmanager
async def holding_runs(
    store: EventStore, lease_seconds: float = LEASE_SECONDS, *, on_lost: Lost | None = None
) -> AsyncIterator[None]:
    """Claim the runs ``store`` creates or takes over while inside for this process, renew
    the claim, and release it on the way out (a store that claims already is left as is).
    Each renewal also checks the claim still holds: when another process has taken a run over
    (this one's lease lapsed: its event loop blocked past it, on another machine), the store
    writes nothing more to it and ``on_lost`` is told (run id → its new owner), to stop.

    The renewal is a task of its own beside the caller's (as the store's writer is), not a
    task group around the caller's block: what that block raises reaches the caller as is."""
    if store.owner is not None:
        yield
        return
    store.claim_runs(owner_id(), lease_seconds)
    renewing = asyncio.get_running_loop().create_task(_renew(store, lease_seconds, on_lost))
    try:
        yield
    finally:
        renewing.cancel()
        with anyio.CancelScope(shield=True):
            await asyncio.wait((renewing,))
            try:
                await store.drained()  # its last events (scores) are written before it lets go
                await store.release_leases()
            except Exception as exc:  # the claim then lapses with its lease; the outcome stands
                away = store_unreachable(exc)  # expected then: the run's own error says so
                level = logging.DEBUG if away else logging.WARNING
                log.log(level, "could not release this process's claim on its run",
                        exc_info=not away)  # fmt: skip
            store.owner = None


async def _renew(store: EventStore, lease_seconds: float, on_lost: Lost | None) -> None:
    while True:
        await asyncio.sleep(lease_seconds / 3)
        try:
            await store.renew_leases()
            lost = await store.check_claims()
        except Exception:  # a busy or restarting database: try again at the next turn
            log.warning("could not renew this process's claim on its run", exc_info=True)
            continue
        if lost:
            log.error("another process took over run(s) %s: stopping", ", ".join(sorted(lost)))
            if on_lost is not None:
                on_lost(lost)
