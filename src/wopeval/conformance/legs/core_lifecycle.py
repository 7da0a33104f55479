"""The run-lifecycle legs: a run's life from create to its one terminal event.

* ``core.run-lifecycle`` (noop, identity, delay): runs.md §Create, events.md §Payloads and the
  fixture contract. A create answers ``201`` with a tenant-bound ``runId`` and on-base links; the
  snapshot is readable by that id at once; the log starts with ``run.started`` (sequence 0,
  naming the workflow), is contiguous, names its run on every event, and ends with exactly one
  ``run.completed`` carrying ``outputs`` as an object. Identity: ``outputs.payload`` and the
  snapshot's ``variables.payload`` equal the input ``payload``. Delay: the snapshot reads
  ``running`` while the delay is in flight, the poll is not terminal, and ``run.completed``
  comes at least ``delayMs`` after ``run.started``.
* ``core.failure-path`` (failure): the run ends ``failed``; the log has ``run.started``,
  ``node.failed`` and ``run.failed`` in that order, each failure carrying an ``{code, message}``
  error; the snapshot's ``error`` is ``{code, message}`` and matches ``run.failed``.
* ``core.terminal-event-once`` (noop, failure, cancellable): RFC 0194 §A. Each run observed to a
  terminal status (completed, failed, and a cancelled one) has exactly one terminal run event,
  the last in its log once the log has settled, and it matches the status.
"""

from __future__ import annotations

import secrets
from typing import Any

import anyio

from wopeval.conformance.core_wire import TERMINAL_EVENTS, TERMINAL_STATUSES, CoreWire, types_of
from wopeval.conformance.legs.common import Checker
from wopeval.conformance.legs.core_common import (
    CANCELLABLE,
    DELAY,
    FAILURE,
    IDENTITY,
    NOOP,
    create_run,
    finished_run,
    payload,
    run_to_end,
    timestamp,
)

DELAY_MS = 1500
START_WITHIN_S = 10.0
TERMINAL_OF = {"completed": "run.completed", "failed": "run.failed", "cancelled": "run.cancelled"}


def check_log(ck: Checker, run_id: str, workflow_id: str, events: list[dict[str, Any]]) -> None:
    """The log of a completed run, from ``run.started`` to its one ``run.completed``."""
    types = types_of(events)
    where = f"run {run_id} ({workflow_id})"
    sequences = [event.get("sequence") for event in events]
    ck.check(sequences == list(range(len(events))), f"{where}: sequences {sequences}, want 0..n")
    ck.check(
        all(event.get("runId") == run_id for event in events),
        f"{where}: an event names another run than {run_id}",
    )
    if not ck.check(bool(types) and types[0] == "run.started", f"{where}: log {types}"):
        return
    started = payload(events[0]).get("workflowId")
    ck.check(started == workflow_id, f"{where}: run.started.workflowId is {started!r}")
    ck.check(types[-1] == "run.completed", f"{where}: the log ends {types[-1]!r}")
    ck.check(types.count("run.completed") == 1, f"{where}: {types.count('run.completed')} ends")
    outputs = payload(events[-1]).get("outputs")
    ck.check(
        isinstance(outputs, dict), f"{where}: run.completed.outputs is {outputs!r}, want object"
    )


async def _noop(wire: CoreWire, ck: Checker) -> None:
    run_id = await create_run(wire, ck, {"workflowId": NOOP}, links=True)
    if run_id is None:
        return
    read = await wire.snapshot(run_id)
    snap = read.body if isinstance(read.body, dict) else {}
    ck.check(read.status == 200, f"GET /runs/{{runId}} right after create answered {read.status}")
    ck.check(
        (snap.get("runId"), snap.get("workflowId")) == (run_id, NOOP),
        f"snapshot names {snap.get('runId')!r}/{snap.get('workflowId')!r}",
    )
    if await run_to_end(wire, ck, run_id, "completed"):
        events = await wire.settled_log(run_id)
        if ck.check(events is not None, f"poll of {run_id} did not answer 200"):
            assert events is not None
            check_log(ck, run_id, NOOP, events)


async def _identity(wire: CoreWire, ck: Checker) -> None:
    sent = {"nonce": secrets.token_hex(8), "nested": {"list": [1, "two", None], "flag": True}}
    run_id = await finished_run(wire, ck, {"workflowId": IDENTITY, "inputs": {"payload": sent}})
    if run_id is None:
        return
    events = await wire.settled_log(run_id) or []
    check_log(ck, run_id, IDENTITY, events)
    echoed = payload(events[-1]).get("outputs", {}) if events else {}
    got = echoed.get("payload") if isinstance(echoed, dict) else None
    ck.check(got == sent, f"identity: run.completed.outputs.payload is {got!r}, sent {sent!r}")
    snap = (await wire.snapshot(run_id)).body
    variables = snap.get("variables") if isinstance(snap, dict) else None
    kept = variables.get("payload") if isinstance(variables, dict) else None
    ck.check(kept == sent, f"identity: snapshot variables.payload is {kept!r}, sent {sent!r}")


async def _delay(wire: CoreWire, ck: Checker) -> None:
    body = {"workflowId": DELAY, "inputs": {"delayMs": DELAY_MS}}
    run_id = await create_run(wire, ck, body)
    if run_id is None:
        return
    # a loaded host may queue the run a while: wait for it to leave "pending", then it must be
    # "running" (the delay outlasts a 50 ms read interval many times over)
    status = await wire.wait_status(run_id, lambda s: s != "pending", START_WITHIN_S)
    polled = await wire.poll(run_id)
    terminal = polled.body.get("isTerminal") if isinstance(polled.body, dict) else None
    ck.check(status == "running", f"delay: snapshot read {status!r} while in flight, want running")
    ck.check(terminal is False, f"delay: poll isTerminal {terminal!r} while the delay runs")
    if not await run_to_end(wire, ck, run_id, "completed", DELAY_MS / 1000 + 10):
        return
    events = await wire.settled_log(run_id) or []
    check_log(ck, run_id, DELAY, events)
    if events:
        begun, ended = timestamp(events[0]), timestamp(events[-1])
        if ck.check(begun is not None and ended is not None, "delay: unreadable timestamps"):
            assert begun is not None
            assert ended is not None
            took = (ended - begun).total_seconds() * 1000
            # timestamps have millisecond precision: 2 ms of rounding is allowed
            ck.check(took >= DELAY_MS - 2, f"delay: completed {took:.0f} ms after it started")


async def check_run_lifecycle(wire: CoreWire) -> Checker:
    ck = Checker()
    async with anyio.create_task_group() as group:
        for part in (_noop, _identity, _delay):
            group.start_soon(part, wire, ck)
    return ck


async def check_failure_path(wire: CoreWire) -> Checker:
    ck = Checker()
    run_id = await finished_run(wire, ck, {"workflowId": FAILURE}, want="failed")
    if run_id is None:
        return ck
    events = await wire.settled_log(run_id) or []
    types = types_of(events)
    wanted = ["run.started", "node.failed", "run.failed"]
    order = [t for t in types if t in wanted]
    ck.check(order == wanted, f"failure: log {types}, want {' … '.join(wanted)} in order")
    for event in events:
        if event.get("type") in ("node.failed", "run.failed"):
            error = payload(event).get("error")
            ck.check(_error_object(error), f"failure: {event.get('type')}.error is {error!r}")
    snap = (await wire.snapshot(run_id)).body
    error = snap.get("error") if isinstance(snap, dict) else None
    ck.check(_error_object(error), f"failure: snapshot error is {error!r}, want {{code, message}}")
    ended = payload(events[-1]).get("error") if events else None
    if isinstance(error, dict) and isinstance(ended, dict):
        ck.check(
            error.get("code") == ended.get("code"),
            f"failure: snapshot error {error.get('code')!r} ≠ run.failed {ended.get('code')!r}",
        )
    return ck


def _error_object(value: object) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("code"), str)
        and isinstance(value.get("message"), str)
        and bool(value["code"])
        and bool(value["message"])
    )


async def _terminal_case(wire: CoreWire, ck: Checker, workflow_id: str, cancel: bool) -> None:
    run_id = await create_run(wire, ck, {"workflowId": workflow_id})
    if run_id is None:
        return
    if cancel:
        await wire.cancel(run_id)
    status = await wire.wait_status(run_id, lambda s: s in TERMINAL_STATUSES, 30.0)
    if not ck.check(status in TERMINAL_STATUSES, f"{workflow_id} run {run_id} ended {status!r}"):
        return
    events = await wire.settled_log(run_id)
    if not ck.check(events is not None, f"poll of {run_id} did not answer 200"):
        return
    assert events is not None
    assert status is not None
    types = types_of(events)
    ends = [t for t in types if t in TERMINAL_EVENTS]
    where = f"{workflow_id} run {run_id}"
    ck.check(len(ends) == 1, f"{where}: {len(ends)} terminal events in {types}")
    ck.check(bool(types) and types[-1] in TERMINAL_EVENTS, f"{where}: events after the end {types}")
    ck.check(
        bool(ends) and ends[0] == TERMINAL_OF[status],
        f"{where}: status {status!r} but terminal event {ends}",
    )


async def check_terminal_once(wire: CoreWire) -> Checker:
    ck = Checker()
    async with anyio.create_task_group() as group:
        for workflow_id, cancel in ((NOOP, False), (FAILURE, False), (CANCELLABLE, True)):
            group.start_soon(_terminal_case, wire, ck, workflow_id, cancel)
    return ck
