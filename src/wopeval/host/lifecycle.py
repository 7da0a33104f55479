"""The host's claim on its runs while it lives: an owner id and a renewed lease.

Several ``wopeval serve`` processes may share one store (PostgreSQL, or one SQLite file). Each
claims the runs it creates under an owner id unique to the process (:func:`owner_id`) with a
lease of ``leaseSeconds``; :func:`keep_leases` renews it every third of that while the host
runs, and takes over the runs whose owner stopped renewing (a host that crashed or was
killed): they are failed ``wopeval.interrupted``, terminal event and status in one commit. A
host never touches a run another live host owns; the store refuses any event after a run's
terminal event whoever sends it (migration 3's triggers). The same loop notices the store
answering again after an outage and resumes the runs the outage stopped.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio

from wopeval.events.owners import owner_id
from wopeval.events.reach import outage_reason, store_unreachable
from wopeval.events.store import EventStore
from wopeval.host.manager import (
    HOST_REQUEST_KEY,
    RunManager,
    interrupt_leftovers,
    resume_leftovers,
)
from wopeval.host.state import HostState

log = logging.getLogger("wopeval.host")
# How much longer than the grace period leaving waits for the drain (its interruptions).
DRAIN_MARGIN_S = 10.0
# How often the store is tried while runs wait for it to answer again (stranded runs).
STRANDED_CHECK_S = 1.0


async def reap(
    store: EventStore, manager: RunManager | None = None, resume: bool = False
) -> list[str]:
    """The host runs no live host owns: adopted and resumed (``resume``), or failed
    ``wopeval.interrupted``; logged either way."""
    if resume and manager is not None:
        adopted = await store.adopt_runs(await store.abandoned_runs(HOST_REQUEST_KEY))
        if adopted:
            log.warning("resuming %d unfinished run(s): %s", len(adopted), ", ".join(adopted))
            resume_leftovers(manager, adopted)
        return adopted
    interrupted = await interrupt_leftovers(store)
    if interrupted:
        log.warning(
            "marked %d unfinished run(s) failed (wopeval.interrupted): %s",
            len(interrupted),
            ", ".join(interrupted),
        )
    return interrupted


@asynccontextmanager
async def keep_leases(
    store: EventStore,
    lease_seconds: float,
    manager: RunManager | None = None,
    resume: bool = False,
) -> AsyncIterator[None]:
    """Claim this store's new runs for this process and keep the claim while inside; runs
    whose owner stopped renewing are resumed by ``manager`` (``resume``) or failed."""
    store.claim_runs(owner_id(), lease_seconds)
    await reap(store, manager, resume)

    async def renew() -> None:
        while True:
            stranded = manager is not None and manager.stranded
            await anyio.sleep(min(lease_seconds / 3, STRANDED_CHECK_S) if stranded else
                              lease_seconds / 3)  # fmt: skip
            try:
                await store.renew_leases()
                if manager is not None and manager.stranded:  # the store answers again
                    resumed = manager.resume_stranded()
                    if resumed:
                        log.warning("the event store answers again; resuming %d run(s): %s",
                                    len(resumed), ", ".join(resumed))  # fmt: skip
                lost = await store.check_claims()
                if lost:
                    log.error("another process took over run(s) %s", ", ".join(sorted(lost)))
                    if manager is not None:
                        manager.stop_lost(sorted(lost))
                if manager is None or not manager.draining:  # no run adopted while draining
                    await reap(store, manager, resume)
            except Exception as exc:  # a busy or restarting database: try again at the next turn
                if store_unreachable(exc):
                    log.warning("the event store is unreachable (%s); retrying", outage_reason(exc))
                else:
                    log.exception("could not renew the host's run leases")

    async with anyio.create_task_group() as group:
        group.start_soon(renew)
        try:
            yield
        finally:
            group.cancel_scope.cancel()


@asynccontextmanager
async def draining(state: HostState) -> AsyncIterator[None]:
    """Once ``state.closing`` is set (SIGTERM, see :func:`begin_shutdown`): drain the run
    manager within ``shutdownGraceSeconds``. Leaving sets ``closing`` and waits for the drain
    (at most the grace period, then the interruptions): the server leaves its lifespan as soon
    as no connection is open, which used to cancel the drain and fail every running run at once.
    """
    drained = anyio.Event()

    async def drain_when_closing() -> None:
        try:  # set however this task ends (cancelled before closing too): leaving waits on it
            await state.closing.wait()
            interrupted = await state.manager.drain(state.config.shutdownGraceSeconds)
        finally:
            drained.set()
        if interrupted:
            log.warning("shutdown: interrupted %d run(s) after the grace period", len(interrupted))

    async with anyio.create_task_group() as group:
        group.start_soon(drain_when_closing)
        try:
            yield
        finally:
            state.closing.set()
            # Bounded as the drain is (the grace period, then interrupting what is left), even
            # should the drain task never have started.
            bound = state.config.shutdownGraceSeconds + DRAIN_MARGIN_S
            with anyio.CancelScope(shield=True), anyio.move_on_after(bound):
                await drained.wait()
            group.cancel_scope.cancel()


def begin_shutdown(app: Any) -> None:
    """Start a graceful shutdown of a started host app (thread- and signal-handler-safe)."""
    state = getattr(getattr(app, "state", None), "wopeval", None)
    loop = getattr(state, "loop", None)
    if isinstance(state, HostState) and loop is not None:
        loop.call_soon_threadsafe(state.closing.set)
