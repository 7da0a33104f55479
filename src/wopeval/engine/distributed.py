"""Distributed trials on Ray (the optional ``wopeval[ray]`` extra; see ``docs/distributed.md``).

Trials go to Ray in **batches**: the runner the engine awaits once per trial (:class:`_Batcher`)
queues the calls made in one tick and submits up to ``WOPEVAL_RAY_BATCH`` of them as one Ray
task (Ray manages only some hundreds of tiny tasks a second). In the worker each trial runs the
same :func:`wopeval.engine.trial.run_trial`, with a :class:`BufferingSink` in place of the event
store: every event gets its real, final ``eventId`` and the worker's timestamp there, and a
provisional sequence. The worker returns each trial's events, the costs it metered and its
grade; the driver appends the batch's events to the store in order, keeping each ``eventId``,
``timestamp`` and ``causationId`` (so trial attribution and latency read exactly as for a local
trial), and adds the costs to the run's cost meter. The store still assigns the sequences, so
the run's log stays contiguous from 0.

Cost ceilings keep the local rule — no trial starts once the run's recorded spend exceeds the
ceiling — through a :class:`RunBudget` actor that every remote trial reports its costs to as
they are incurred and asks before it starts; under a ceiling a batch's trials run one after
another.

Durability differs from a local trial: a remote trial's events reach the log when its batch
returns, all of them; a driver crash loses the batches in flight, never anything appended. A
batch is never retried on a worker failure (``max_retries=0``): a retry would repeat live-tool
side effects; the run fails instead, as it would if the local process died.

What crosses to the worker (by cloudpickle): the agent callable, the registry (its agents, for
``ctx.delegate``, and its live tools), the judge and the task. Module-level functions and
classes of importable modules travel by reference; closures over unpicklable state (sockets,
locks, an MCP session) are refused before the first trial starts; a picklable stateful tool is a
*copy* in each worker, so state it keeps is not seen by the driver.

``ray`` is imported only when a Ray run starts: ``import wopeval`` never loads it.
"""

from __future__ import annotations

import asyncio
import functools
import importlib
import itertools
import json
import logging
import os
import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import anyio
import anyio.lowlevel
from pydantic import BaseModel

from wopeval.engine.agent import AgentFn
from wopeval.engine.budget import CostMeter
from wopeval.engine.judge import Judge
from wopeval.engine.registry import Registry
from wopeval.engine.trial import TrialEnv, record_skipped, run_trial, settle
from wopeval.errors import RunError, UserError, describe
from wopeval.events.emit import EmitsTyped
from wopeval.events.ids import new_event_id, utc_now
from wopeval.events.store import EventStore
from wopeval.events.tables import dumps_json
from wopeval.grading.trial import TrialGrade
from wopeval.suite.models import Task
from wopeval.wire.events import SCHEMA_VERSION, RunEvent
from wopeval.wire.request import TrialLimits

TrialRunner = Callable[[Task, int], Awaitable[TrialGrade | None]]
DEFAULT_BATCH = 50  # trials per Ray task (WOPEVAL_RAY_BATCH); see docs/distributed.md
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_EXCEPTION_LINE = re.compile(r"[A-Za-z_][\w.]*(Error|Exception|Interrupt|Exit)\b")


class RayUnavailable(UserError):
    """The Ray executor was asked for but ``ray`` is not installed."""


class NotDistributable(UserError):
    """The agent, a live tool or the judge cannot be sent to, or loaded by, Ray workers."""


class RemoteTrialFailed(RunError):
    """A Ray worker failed to run a trial (it died, or raised outside the trial's own guards)."""


def _ray() -> Any:
    """The ``ray`` module, imported on first use."""
    try:
        return importlib.import_module("ray")
    except ImportError as exc:
        raise RayUnavailable(
            "the Ray executor needs the optional extra: pip install 'wopeval[ray]'"
        ) from exc


def init_ray(address: str | None = None) -> bool:
    """Connect to the cluster at ``address``, or start a local one; once per process.

    A local cluster gets one CPU per core (``os.cpu_count()``); no dashboard; Ray logs at
    WARNING. A no-op when Ray is already initialized (a caller's own ``ray.init`` wins).
    Returns True when this call initialized Ray (its caller then owns :func:`shutdown_ray`).
    """
    ray = _ray()
    if ray.is_initialized():
        return False
    options: dict[str, Any] = {"include_dashboard": False, "logging_level": logging.WARNING}
    if address is None:
        options["num_cpus"] = os.cpu_count() or 1
    ray.init(address=address, **options)
    return True


def shutdown_ray() -> None:
    """Disconnect from Ray (stopping a local cluster this process started), if connected."""
    ray = _ray()
    if ray.is_initialized():
        ray.shutdown()


# ---- the worker side ------------------------------------------------------------------------


class BufferingSink(EmitsTyped):
    """An :class:`~wopeval.engine.trial.EventSink` that keeps a trial's events in memory.

    Each event gets its final ``eventId`` and the worker's ``timestamp`` now, and a provisional
    ``sequence`` (its position in the buffer); the driver's store assigns the real one. A payload
    that is not JSON is refused here, as the store would refuse it.
    """

    def __init__(self) -> None:
        self.events: list[RunEvent] = []

    async def append(
        self,
        run_id: str,
        type: str,
        payload: Any,
        *,
        causation_id: str | None = None,
        node_id: str | None = None,
    ) -> RunEvent:
        if isinstance(payload, BaseModel):
            payload = payload.model_dump(mode="json", exclude_none=True, by_alias=True)
        event = RunEvent.model_construct(
            eventId=new_event_id(),
            runId=run_id,
            type=type,
            payload=json.loads(dumps_json(payload)),
            timestamp=utc_now(),
            sequence=len(self.events),
            schemaVersion=SCHEMA_VERSION,
            nodeId=node_id,
            engineVersion=None,
            causationId=causation_id,
        )
        self.events.append(event)
        return event


class _TrialMeter(CostMeter):
    """The worker's meter of one trial: keeps each cost for the driver's run-wide meter and,
    under a ceiling, reports it to the run's :class:`RunBudget` actor as it is incurred."""

    def __init__(self, budget: Any = None) -> None:
        super().__init__(())
        self.budget = budget
        self._seen_exceeded = False

    def add(self, cost_usd: float) -> None:
        super().add(cost_usd)
        if self.budget is not None:  # ordered before this worker's next check (same caller)
            self.budget.add.remote(cost_usd)

    async def check(self) -> bool:
        """Whether the run's recorded spend has reached its ceiling, asked of the actor now."""
        if self.budget is not None:
            self._seen_exceeded = bool(await _awaited(self.budget.exceeded.remote()))
        return self._seen_exceeded

    @property
    def exceeded(self) -> bool:
        return self._seen_exceeded


class RunBudget:
    """A Ray actor holding a run's spend against its tightest ceiling (one per run that has a
    ceiling; no CPU). Every remote trial reports each cost here as it is incurred and asks it
    before it starts: the local executor's rule (``CostMeter``, read exactly), cluster-wide."""

    def __init__(self, ceiling: float, spent: Sequence[float]) -> None:
        self.meter = CostMeter([ceiling])
        for cost in spent:
            self.meter.add(cost)

    def add(self, cost_usd: float) -> None:
        self.meter.add(cost_usd)

    def exceeded(self) -> bool:
        return self.meter.exceeded


@dataclass(frozen=True)
class Shipped:
    """What every remote trial of one run needs; put in Ray's object store once per run."""

    run_id: str
    agent_id: str
    agent: AgentFn
    registry: Registry
    pass_score: float
    timeout_s: float
    ignore_fixtures: bool
    include_trial_index: bool
    judge: Judge | None
    limits: TrialLimits


@dataclass(frozen=True)
class RemoteTrial:
    """A finished remote trial: its events (wire dicts, in order), metered costs, grade
    (``None`` for a trial the worker recorded as skipped by the cost ceiling)."""

    events: list[dict[str, Any]]
    costs: list[float]
    grade: TrialGrade | None


async def run_buffered(
    shipped: Shipped, task: Task, trial_index: int, budget: Any = None
) -> RemoteTrial:
    """Run one trial exactly as locally, into a :class:`BufferingSink` (the worker's half);
    first, as the local pool does, record it skipped if the run's spend reached its ceiling."""
    sink = BufferingSink()
    meter = _TrialMeter(budget)
    env = TrialEnv(
        sink=sink,
        run_id=shipped.run_id,
        registry=shipped.registry,
        agent_id=shipped.agent_id,
        agent=shipped.agent,
        meter=meter,
        pass_score=shipped.pass_score,
        timeout_s=shipped.timeout_s,
        ignore_fixtures=shipped.ignore_fixtures,
        include_trial_index=shipped.include_trial_index,
        judge=shipped.judge,
        limits=shipped.limits,
    )
    grade: TrialGrade | None
    if await meter.check():
        await record_skipped(env, task, trial_index)
        grade = None
    else:
        grade = await run_trial(env, task, trial_index)
        await settle(env)
    return RemoteTrial([event.to_wire() for event in sink.events], list(meter.costs), grade)


async def run_batch(
    shipped: Shipped, calls: Sequence[tuple[Task, int]], budget: Any = None
) -> list[RemoteTrial]:
    """A batch's trials in one worker: all at once, or, under a ceiling, one after another so
    each starts only on spend that includes its batch-mates' (the budget actor has it all)."""
    results: list[RemoteTrial | None] = [None] * len(calls)

    async def one(i: int) -> None:
        results[i] = await run_buffered(shipped, calls[i][0], calls[i][1], budget)

    if budget is not None:
        for i in range(len(calls)):
            await one(i)
    else:
        async with anyio.create_task_group() as group:
            for i in range(len(calls)):
                group.start_soon(one, i)
    return [r for r in results if r is not None]


def _batch_in_worker(
    shipped: Shipped, calls: list[tuple[Task, int]], budget: Any
) -> list[RemoteTrial]:
    """The Ray task: one batch of trials on the worker's own event loop."""
    return anyio.run(run_batch, shipped, calls, budget)


def _probe_in_worker(shipped: Shipped) -> str:
    """A Ray task that only loads what was shipped: proves a worker can import it."""
    return shipped.agent_id


@functools.cache
def _remote(fn: Callable[..., Any]) -> Any:
    """``fn`` as a Ray remote function, made once per process. Never retried (see module doc)."""
    return _ray().remote(max_retries=0)(fn)


# ---- the driver side ------------------------------------------------------------------------


APPEND_WINDOW = 128  # appends in flight at once: the store group-commits them (one INSERT)


async def record_remote_trial(
    store: EventStore, run_id: str, events: Sequence[Mapping[str, Any]]
) -> None:
    """Append events (wire dicts) in order, keeping ids, timestamps and causation: up to
    :data:`APPEND_WINDOW` queued at once, so the store writes them as one INSERT each window
    (appends queue, and are sequenced, in the order they are called; checked)."""
    for start in range(0, len(events), APPEND_WINDOW):
        window = events[start : start + APPEND_WINDOW]
        # gather wraps each append in a task in this order, so they queue in this order
        written = await asyncio.gather(*(_append_wire(store, run_id, e) for e in window))
        sequences = [event.sequence for event in written]
        if any(b <= a for a, b in itertools.pairwise(sequences)):
            raise RunError(f"run {run_id}: events were not appended in order")


async def _append_wire(store: EventStore, run_id: str, event: Mapping[str, Any]) -> RunEvent:
    return await store.append(
        run_id,
        event["type"],
        event["payload"],
        causation_id=event.get("causationId"),
        node_id=event.get("nodeId"),
        event_id=event["eventId"],
        timestamp=event["timestamp"],
    )


def _ship(env: TrialEnv) -> Any:
    """Put the run's shared parts in Ray's object store (blocking: pickles them)."""
    shipped = Shipped(
        run_id=env.run_id,
        agent_id=env.agent_id,
        agent=env.agent,
        registry=env.registry,
        pass_score=env.pass_score,
        timeout_s=env.timeout_s,
        ignore_fixtures=env.ignore_fixtures,
        include_trial_index=env.include_trial_index,
        judge=env.judge,
        limits=env.limits,
    )
    try:
        return _ray().put(shipped)
    except Exception as exc:  # cloudpickle's errors vary by what could not be pickled
        raise NotDistributable(
            "the agent, its registry (agents and live tools) or the judge cannot be sent to Ray "
            f"workers: {describe(exc)}"[:500]
        ) from exc


async def _awaited(ref: Any) -> Any:
    """An ObjectRef's value, awaited on this event loop (the worker's)."""
    return await asyncio.wrap_future(ref.future())


async def _in_ray(ref: Any) -> Any:
    """Await a Ray task without blocking the event loop; cancelling the caller cancels it."""
    try:
        return await asyncio.wrap_future(ref.future())
    except anyio.get_cancelled_exc_class():
        _ray().cancel(ref)
        raise


def _plain(exc: BaseException) -> str:
    """A Ray error in one line: its type and the innermost exception line of its remote
    traceback (or its first line), without terminal colours, short enough for ``run.failed``."""
    lines = [line.strip() for line in _ANSI.sub("", str(exc)).splitlines() if line.strip()]
    causes = [line for line in lines if _EXCEPTION_LINE.match(line)]
    core = causes[-1] if causes else (lines[0] if lines else "")
    return f"{type(exc).__name__}: {core}"[:400]


def batch_size_default() -> int:
    """Trials per Ray task: ``WOPEVAL_RAY_BATCH`` (default :data:`DEFAULT_BATCH`)."""
    raw = os.environ.get("WOPEVAL_RAY_BATCH", "")
    try:
        return max(1, int(raw)) if raw else DEFAULT_BATCH
    except ValueError as exc:
        raise UserError(f"WOPEVAL_RAY_BATCH: {raw!r} is not a whole number") from exc


@dataclass(eq=False)
class _Call:
    """One trial the engine asked for, waiting for its batch."""

    task: Task
    trial_index: int
    done: anyio.Event = field(default_factory=anyio.Event)
    grade: TrialGrade | None = None
    error: Exception | None = None
    cancelled: bool = False


class _Batcher:
    """The :data:`TrialRunner` of a Ray run: collects the engine's calls into batches.

    A call joins the queue and yields once, so the calls the engine's workers make in the same
    tick (at the start, and when a batch returns and frees its workers) are queued together;
    the first caller still queued then takes up to ``size`` calls and submits them as one Ray
    task, records the returned trials in order, and wakes the others. Nothing changes for the
    engine: it still awaits one trial per call, under its own ``concurrency`` bound.
    """

    def __init__(self, store: EventStore, env: TrialEnv, shipped: Any, budget: Any, size: int):
        self.store, self.env, self.shipped, self.budget, self.size = (
            store,
            env,
            shipped,
            budget,
            size,
        )
        self.queue: list[_Call] = []
        self.remote_batch = _remote(_batch_in_worker)

    async def __call__(self, task: Task, trial_index: int) -> TrialGrade | None:
        call = _Call(task, trial_index)
        self.queue.append(call)
        await anyio.lowlevel.checkpoint()  # let this tick's other calls join the queue
        if call in self.queue:
            batch, self.queue = self.queue[: self.size], self.queue[self.size :]
            if call not in batch:  # wake-ups are FIFO, so earlier calls are taken first; still:
                batch.append(call)
                self.queue.remove(call)
            await self._submit(batch)
        await call.done.wait()
        if call.cancelled:  # its batch's submitter was cancelled: so is this whole run
            await anyio.lowlevel.checkpoint()
            raise RemoteTrialFailed(f"trial {trial_index} of task {task.taskId!r}: cancelled")
        if call.error is not None:
            raise call.error
        return call.grade

    async def _submit(self, batch: list[_Call]) -> None:
        ray = _ray()
        try:
            calls = [(c.task, c.trial_index) for c in batch]
            ref = self.remote_batch.remote(self.shipped, calls, self.budget)
            try:
                results: list[RemoteTrial] = await _in_ray(ref)
            except ray.exceptions.RayError as exc:
                first = batch[0]
                raise RemoteTrialFailed(
                    f"trial {first.trial_index} of task {first.task.taskId!r} failed in a Ray "
                    f"worker (a batch of {len(batch)}): {_plain(exc)}"
                ) from exc
            for result in results:
                for cost in result.costs:
                    self.env.meter.add(cost)
            with anyio.CancelScope(shield=True):  # returned: recorded in full, in order
                await record_remote_trial(
                    self.store, self.env.run_id, [e for r in results for e in r.events]
                )
            for c, result in zip(batch, results, strict=True):
                c.grade = result.grade
        except Exception as exc:
            for c in batch:
                c.error = exc
            raise
        except BaseException:
            for c in batch:
                c.cancelled = True
            raise
        finally:
            for c in batch:
                c.done.set()


async def ray_trial_runner(
    store: EventStore, env: TrialEnv, *, batch_size: int | None = None
) -> TrialRunner:
    """A runner that executes trials in Ray workers, ``batch_size`` per Ray task (default
    :func:`batch_size_default`), and records each batch when it returns.

    Before the first trial, the run's shared parts are shipped once and loaded by a worker, so
    an agent, tool or judge the workers cannot import fails the run before any trial starts
    (:class:`NotDistributable`). Under a cost ceiling a :class:`RunBudget` actor holds the
    run's spend: each remote trial asks it before starting and reports its costs to it as they
    are incurred (the local rule, cluster-wide); returned costs are also added to
    ``env.meter``. Cancelling the caller cancels the Ray task and records nothing of its batch;
    once a batch has returned, all its events are appended even if the run is being cancelled.
    """
    # Ray installs its signal handlers only from the main thread: start it here, before the
    # first trial, if nobody has (a one-off pause of a few seconds; the CLI starts it earlier).
    init_ray()
    shipped_ref = await anyio.to_thread.run_sync(_ship, env)
    ray = _ray()
    try:
        await _in_ray(_remote(_probe_in_worker).remote(shipped_ref))
    except ray.exceptions.RayError as exc:
        raise NotDistributable(
            "a Ray worker cannot load the agent, its registry or the judge (is every module "
            f"they come from importable on the workers?): {_plain(exc)}"
        ) from exc
    budget = None
    if env.meter.ceiling is not None:
        actor = ray.remote(num_cpus=0, max_restarts=0)(RunBudget)
        budget = actor.remote(env.meter.ceiling, list(env.meter.costs))
    return _Batcher(store, env, shipped_ref, budget, batch_size or batch_size_default())
