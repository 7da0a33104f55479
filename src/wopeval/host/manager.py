"""Eval runs executing inside the host process.

The manager owns one task group, opened in the app's lifespan; every run is a task in it, held
to ``concurrency`` runs at once by a capacity limiter (runs beyond it wait, ``pending``). A run is
executed by the engine exactly as ``wopeval run`` executes it (:func:`execute_run`), so the log
and the summary are the CLI's. Cancellation goes through the run's :class:`RunHandle`, which
leaves the log consistent (``run.cancelled`` last).

A run whose execution fails while the store is unreachable (a database restart) is not failed,
which could not be recorded anyway: it is kept as *stranded* and resumed from its log once the
store answers again (:meth:`RunManager.resume_stranded`, called by the host's lease keeper).

Shutdown cancels the task group. A run it interrupts is recorded as failed with
``wopeval.interrupted`` (``run.failed`` appended, every earlier event kept), the same mark a
restart gives runs a crashed host left behind (:func:`interrupt_leftovers`). Only runs a host
created are a host's to fail: they carry the host's request data under
:data:`HOST_REQUEST_KEY` in their stored request; a ``wopeval run`` of the CLI does not.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import anyio
from anyio.abc import TaskGroup
from sqlalchemy.exc import SQLAlchemyError

from wopeval.engine.judge import Judge
from wopeval.engine.registry import Registry
from wopeval.engine.run import RunHandle
from wopeval.errors import RunNotFound, UserError, describe
from wopeval.events.reach import outage_reason, store_unreachable
from wopeval.events.records import ClaimLostError
from wopeval.events.store import (
    INTERRUPTED_ERROR_CODE,
    EventStore,
    RunTerminalError,
    StoreError,
)
from wopeval.host.errors import HostError
from wopeval.host.health import store_answers
from wopeval.service.runs import RunHeld, RunPlan, RunService
from wopeval.wire.events import ErrorObject, RunCancelled, RunFailed

log = logging.getLogger("wopeval.host")

# Executes one created run to its end through its handle (an eval run, or a workflow fixture's).
Execute = Callable[[RunHandle], Awaitable[None]]

# The member of a stored run request holding the host's request data (body digest, scopeId,
# configurable): present exactly on the runs a host created.
HOST_REQUEST_KEY = "host"
RETRY = {"Retry-After": "5"}
INTERRUPTED_ERROR = {
    "code": INTERRUPTED_ERROR_CODE,
    "message": "the host stopped before this run finished",
}


@dataclass
class _Job:
    handle: RunHandle
    done: anyio.Event
    # Covers the wait for a free slot, so that cancelling a queued run ends the wait.
    queued: anyio.CancelScope = field(default_factory=anyio.CancelScope)


class RunManager:
    def __init__(
        self, store: EventStore, registry: Registry, judge: Judge | None, concurrency: int
    ) -> None:
        self.store = store
        # Tenants' agents run off the host's event loop: one that blocks it (time.sleep, a CPU
        # loop) would stall every other tenant's requests (docs/host.md).
        registry.off_loop = True
        self.registry = registry
        self.judge = judge
        self._limiter = anyio.CapacityLimiter(concurrency)
        self._jobs: dict[str, _Job] = {}
        # Jobs per tenant (the part of a run id before its "/"), kept with ``_jobs``: the
        # per-tenant limit is checked on every create, whatever the queue's length.
        self._per_tenant: Counter[str] = Counter()
        self._interrupted: list[str] = []
        # Runs stopped because the store became unreachable: resumed once it answers again.
        self.stranded: list[str] = []
        self._closing = False
        self.draining = False
        self._group: TaskGroup | None = None

    @asynccontextmanager
    async def running(self) -> AsyncIterator[RunManager]:
        async with anyio.create_task_group() as group:
            self._group = group
            try:
                yield self
            finally:
                self._group = None
                self._closing = True
                for job in self._jobs.values():
                    job.handle.interrupt()  # recorded below as wopeval.interrupted
                group.cancel_scope.cancel()
        with anyio.CancelScope(shield=True):
            for run_id in self._interrupted:
                await _record_interrupted(self.store, run_id)

    def start(self, run_id: str, plan: RunPlan) -> None:
        """Schedule a created (``pending``) eval run; it starts when a slot is free."""
        service = RunService(self.store, self.registry, self.judge)

        async def execute(handle: RunHandle) -> None:
            await service.execute(plan, handle)

        self.start_execution(run_id, execute)

    def start_execution(
        self, run_id: str, execute: Execute, limiter: anyio.CapacityLimiter | None = None
    ) -> None:
        """Schedule a created (``pending``) run executed by ``execute(handle)`` once a slot of
        ``limiter`` (default: the eval runs' ``concurrency``) is free. ``execute`` records the
        run's end itself, as the run service does; cancel and shutdown go through ``handle``.
        """
        if self._group is None:
            raise RuntimeError("the run manager is not running")
        if self.draining:
            raise HostError("service_unavailable", "the host is shutting down", headers=RETRY)
        job = _Job(RunHandle(run_id), anyio.Event())
        if run_id not in self._jobs:
            self._per_tenant[_tenant(run_id)] += 1
        self._jobs[run_id] = job
        chosen = self._limiter if limiter is None else limiter
        self._group.start_soon(self._run, job, execute, chosen, name=run_id)

    def owns(self, run_id: str) -> bool:
        return run_id in self._jobs

    def cancel(self, run_id: str) -> bool:
        job = self._jobs.get(run_id)
        if job is None:
            return False
        job.queued.cancel()
        job.handle.cancel()
        return True

    def stop_lost(self, run_ids: list[str]) -> None:
        """Stop the runs another process took over (this host's claim lapsed): interrupted,
        so nothing records their end here (the store refuses this host's writes to them)."""
        for run_id in run_ids:
            job = self._jobs.get(run_id)
            if job is not None:
                job.handle.interrupt()
                job.queued.cancel()
                job.handle.cancel()

    async def wait(self, run_id: str, timeout: float) -> None:  # noqa: ASYNC109
        """Wait (at most ``timeout`` seconds) until the run's task has finished."""
        job = self._jobs.get(run_id)
        if job is not None:
            with anyio.move_on_after(timeout):
                await job.done.wait()

    async def drain(self, grace: float) -> list[str]:
        """Shut down gracefully: take no new run, give the running ones ``grace`` seconds to
        end, then interrupt the rest (``run.failed`` ``wopeval.interrupted``, so that their
        streams end with a terminal event). Returns the interrupted run ids."""
        self.draining = True
        with anyio.move_on_after(grace):
            for job in list(self._jobs.values()):
                await job.done.wait()
        self._closing = True
        left = list(self._jobs.items())
        for _, job in left:
            job.handle.interrupt()
            job.queued.cancel()
            job.handle.cancel()
        with anyio.CancelScope(shield=True):
            for run_id, job in left:
                await job.done.wait()
                await _record_interrupted(self.store, run_id)
        return [run_id for run_id, _ in left]

    def resume_stranded(self) -> list[str]:
        """The store answers again: resume the runs its outage stopped (each from its log,
        scored trials kept, :meth:`RunService.resume`). Returns their ids."""
        if self.draining or self._group is None:
            return []
        run_ids = [run_id for run_id in dict.fromkeys(self.stranded) if not self.owns(run_id)]
        self.stranded.clear()
        resume_leftovers(self, run_ids)
        return run_ids

    def active_of(self, tenant: str) -> int:
        """The tenant's runs in this process (executing or waiting for a slot)."""
        return self._per_tenant[tenant]

    @property
    def active(self) -> int:
        return len(self._jobs)

    async def _run(self, job: _Job, execute: Execute, limiter: anyio.CapacityLimiter) -> None:
        run_id = job.handle.run_id
        try:
            acquired = False
            with job.queued:
                await limiter.acquire()
                acquired = True
            if not acquired:
                if not self._closing:  # else drain() records the interruption
                    await _record_cancelled_before_start(self.store, run_id)
                return
            try:
                await execute(job.handle)
            finally:
                limiter.release()
        except anyio.get_cancelled_exc_class():
            if self._closing:
                if not job.handle.scope.cancel_called:
                    self._interrupted.append(run_id)
                raise
            # Not the manager's cancellation: one that leaked past the run's own scope. It
            # must not end this task with a cancellation, which would cancel the task group
            # and with it every other run and the host's lifespan.
            log.warning("run %s: a cancellation escaped the run's scope", run_id)
            if not job.handle.scope.cancel_called:
                with anyio.CancelScope(shield=True):
                    await _ensure_failed(self.store, run_id, RuntimeError("cancelled"))
        except Exception as exc:
            with anyio.CancelScope(shield=True):
                if store_unreachable(exc) or not await store_answers(self.store):
                    # Nothing can be recorded now; what was recorded is kept and resumed.
                    log.warning("run %s stopped: the event store is unreachable (%s); it "
                                "resumes when the store answers again", run_id,
                                outage_reason(exc))  # fmt: skip
                    self.stranded.append(run_id)
                else:
                    log.exception("run %s failed", run_id)
                    await _ensure_failed(self.store, run_id, exc)
        finally:
            del self._jobs[run_id]
            tenant = _tenant(run_id)
            self._per_tenant[tenant] -= 1
            if not self._per_tenant[tenant]:
                del self._per_tenant[tenant]
            job.done.set()


def _tenant(run_id: str) -> str:
    return run_id.partition("/")[0]


async def _record_cancelled_before_start(store: EventStore, run_id: str) -> None:
    await store.emit_end(run_id, RunCancelled())


async def _ensure_failed(store: EventStore, run_id: str, exc: Exception) -> None:
    """A run whose execution raised before the engine recorded an end: fail it now."""
    error = {"code": "internal_error", "message": describe(exc)}
    await _fail_unless_terminal(store, run_id, error)


async def _record_interrupted(store: EventStore, run_id: str) -> None:
    """Fail a run the host stopped executing; keeps every recorded event."""
    await _fail_unless_terminal(store, run_id, INTERRUPTED_ERROR)


async def _fail_unless_terminal(store: EventStore, run_id: str, error: dict[str, str]) -> None:
    """Append ``run.failed`` and set the status, unless the run already ended."""
    try:
        record = await store.get_run(run_id)
        if record is None or record.terminal:
            return
        await store.emit_end(
            run_id, RunFailed(error=ErrorObject.model_validate(error)), error=error
        )
    except RunTerminalError:
        return  # it ended meanwhile (its own end, or another host's mark)
    except ClaimLostError:
        log.warning("run %s was taken over by another process: its end is theirs", run_id)
    except (StoreError, RunNotFound, SQLAlchemyError, OSError):
        log.exception("could not record the failure (%s) of run %s", error["code"], run_id)


def resume_leftovers(manager: RunManager, run_ids: list[str]) -> None:
    """At start-up: resume the runs a crashed host left unfinished (:meth:`RunService.resume`);
    a run that cannot be resumed is failed as interrupted."""
    service = RunService(manager.store, manager.registry, manager.judge)
    for run_id in run_ids:

        async def execute(handle: RunHandle, run_id: str = run_id) -> None:
            try:
                prepared = await service.prepare_resume(run_id)
            except RunHeld as exc:  # another process resumed it first: it is theirs
                log.warning("run %s is not resumed here: %s", run_id, exc)
                return
            except UserError as exc:
                log.warning("run %s cannot be resumed (%s); failing it", run_id, exc)
                await _record_interrupted(manager.store, run_id)
                return
            await service.resume(run_id, handle=handle, prepared=prepared)

        manager.start_execution(run_id, execute)


async def interrupt_leftovers(store: EventStore) -> list[str]:
    """Fail the runs a host process left unfinished (``run.failed`` and status, one commit).

    Only host-created runs (:data:`HOST_REQUEST_KEY`): runs of the CLI may be executing in
    another process; and only runs no live host owns: a run's owner renews its lease
    (:meth:`EventStore.renew_leases`) while it executes it, so a second host on the same store
    leaves the first one's runs alone and takes over only those whose owner stopped renewing.
    """
    interrupted = []
    for run_id in await store.abandoned_runs(HOST_REQUEST_KEY):
        error = ErrorObject.model_validate(INTERRUPTED_ERROR)
        try:
            await store.emit_end(run_id, RunFailed(error=error), error=INTERRUPTED_ERROR)
        except RunTerminalError:
            continue  # it ended meanwhile
        except StoreError:
            log.exception("could not fail interrupted run %s", run_id)
            continue
        interrupted.append(run_id)
    return interrupted
