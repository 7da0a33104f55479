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
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio

from wopeval.events.owners import owner_id
from wopeval.events.records import LEASE_SECONDS
from wopeval.events.store import EventStore

__all__ = ["holding_runs"]

log = logging.getLogger("wopeval.service")


@asynccontextmanager
async def holding_runs(
    store: EventStore, lease_seconds: float = LEASE_SECONDS
) -> AsyncIterator[None]:
    """Claim the runs ``store`` creates or takes over while inside for this process, renew
    the claim, and release it on the way out (a store that claims already is left as is).

    The renewal is a task of its own beside the caller's (as the store's writer is), not a
    task group around the caller's block: what that block raises reaches the caller as is."""
    if store.owner is not None:
        yield
        return
    store.claim_runs(owner_id(), lease_seconds)
    renewing = asyncio.get_running_loop().create_task(_renew(store, lease_seconds))
    try:
        yield
    finally:
        renewing.cancel()
        with anyio.CancelScope(shield=True):
            await asyncio.wait((renewing,))
            try:
                await store.drained()  # its last events (scores) are written before it lets go
                await store.release_leases()
            except Exception:  # the claim then lapses with its lease; the outcome stands
                log.warning("could not release this process's claim on its run", exc_info=True)
            store.owner = None


async def _renew(store: EventStore, lease_seconds: float) -> None:
    while True:
        await asyncio.sleep(lease_seconds / 3)
        try:
            await store.renew_leases()
        except Exception:  # a busy or restarting database: try again at the next turn
            log.warning("could not renew this process's claim on its run", exc_info=True)
