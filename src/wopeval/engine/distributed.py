"""Distributed trials on Ray (the optional ``wopeval[ray]`` extra; see ``docs/distributed.md``).

A remote trial runs the same :func:`wopeval.engine.trial.run_trial` in a Ray worker, with a
:class:`BufferingSink` in place of the event store: every event gets its real, final ``eventId``
and the worker's timestamp there, and a provisional sequence. The worker returns the trial's
events, the costs it metered and its grade; the driver then appends the events to the store in
order, keeping each ``eventId``, ``timestamp`` and ``causationId`` (so trial attribution and
latency read exactly as for a local trial), and adds the costs to the run's cost meter. The store
still assigns the sequences, so the run's log stays contiguous from 0.

Durability differs from a local trial: a remote trial's events reach the log when the trial
returns, all of them; a driver crash loses the trials in flight, never anything appended. A
trial is never retried on a worker failure (``max_retries=0``): a retry would repeat live-tool
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
import json
import logging
import os
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import anyio
from pydantic import BaseModel

from wopeval.engine.agent import AgentFn
from wopeval.engine.budget import CostMeter
from wopeval.engine.judge import Judge
from wopeval.engine.registry import Registry
from wopeval.engine.trial import TrialEnv, run_trial
from wopeval.errors import RunError, UserError
from wopeval.events.emit import EmitsTyped
from wopeval.events.ids import new_event_id, utc_now
from wopeval.events.schema import dumps_json
from wopeval.events.store import EventStore
from wopeval.grading.trial import TrialGrade
from wopeval.suite.models import Task
from wopeval.wire.events import SCHEMA_VERSION, RunEvent

TrialRunner = Callable[[Task, int], Awaitable[TrialGrade]]
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
    """The worker's meter: keeps each cost, for the driver's run-wide meter."""

    def __init__(self) -> None:
        super().__init__(())
        self.costs: list[float] = []

    def add(self, cost_usd: float) -> None:
        super().add(cost_usd)
        self.costs.append(cost_usd)


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


@dataclass(frozen=True)
class RemoteTrial:
    """A finished remote trial: its events (wire dicts, in order), metered costs, grade."""

    events: list[dict[str, Any]]
    costs: list[float]
    grade: TrialGrade


async def run_buffered(shipped: Shipped, task: Task, trial_index: int) -> RemoteTrial:
    """Run one trial exactly as locally, into a :class:`BufferingSink` (the worker's half)."""
    sink = BufferingSink()
    meter = _TrialMeter()
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
    )
    grade = await run_trial(env, task, trial_index)
    return RemoteTrial([event.to_wire() for event in sink.events], meter.costs, grade)


def _trial_in_worker(shipped: Shipped, task: Task, trial_index: int) -> RemoteTrial:
    """The Ray task: one trial on the worker's own event loop."""
    return anyio.run(run_buffered, shipped, task, trial_index)


def _probe_in_worker(shipped: Shipped) -> str:
    """A Ray task that only loads what was shipped: proves a worker can import it."""
    return shipped.agent_id


@functools.cache
def _remote(fn: Callable[..., Any]) -> Any:
    """``fn`` as a Ray remote function, made once per process. Never retried (see module doc)."""
    return _ray().remote(max_retries=0)(fn)


# ---- the driver side ------------------------------------------------------------------------


async def record_remote_trial(store: EventStore, run_id: str, events: list[dict[str, Any]]) -> None:
    """Append a returned trial's events in order, keeping ids, timestamps and causation."""
    for event in events:
        await store.append(
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
    )
    try:
        return _ray().put(shipped)
    except Exception as exc:  # cloudpickle's errors vary by what could not be pickled
        raise NotDistributable(
            "the agent, its registry (agents and live tools) or the judge cannot be sent to Ray "
            f"workers: {type(exc).__name__}: {exc}"[:500]
        ) from exc


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


async def ray_trial_runner(store: EventStore, env: TrialEnv) -> TrialRunner:
    """A runner that executes each trial in a Ray worker and records it when it returns.

    Before the first trial, the run's shared parts are shipped once and loaded by a worker, so
    an agent, tool or judge the workers cannot import fails the run before any trial starts
    (:class:`NotDistributable`). Budget checks stay with the caller, at trial start; a returned
    trial's costs are added to ``env.meter``. Cancelling the caller cancels the Ray task and
    records nothing of that trial; once a trial has returned, all its events are appended even
    if the run is being cancelled.
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
    remote_trial = _remote(_trial_in_worker)

    async def run_remote(task: Task, trial_index: int) -> TrialGrade:
        ref = remote_trial.remote(shipped_ref, task, trial_index)
        try:
            result: RemoteTrial = await _in_ray(ref)
        except ray.exceptions.RayError as exc:
            raise RemoteTrialFailed(
                f"trial {trial_index} of task {task.taskId!r} failed in a Ray worker: {_plain(exc)}"
            ) from exc
        for cost in result.costs:
            env.meter.add(cost)
        with anyio.CancelScope(shield=True):
            await record_remote_trial(store, env.run_id, result.events)
        return result.grade

    return run_remote
