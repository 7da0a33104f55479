"""The log's write side: appending events, typed or not, awaited or queued, and ending a run.

Appends are *group-committed*: callers queue their event and wait for it; one writer task
(started by the first append to find no writer running, gone once the queue is empty) takes the
queued events (up to :data:`MAX_BATCH`) and writes them as one atomic multi-row ``INSERT`` — one
driver round trip, one thread hop on SQLite — then wakes every appender of that batch at once
(:mod:`wopeval.events.writes`). ``append`` returns only after its event is committed, so a crash
loses nothing acknowledged, while concurrent trials share one commit instead of queueing for one
each. While no appender waits (``emit_later``'s events, until ``committed()`` is awaited), the
writer lingers up to ``writes.LINGER_S`` for more events to join the batch; any wait, or
``close``, ends it at once. The single writer lock serializes all writes, which makes per-run
sequences contiguous from 0 in call order; ``PRIMARY KEY (run_id, sequence)`` is the backstop
when a second process appends to the same run (the batch reloads that run's sequence and
retries).

A cancelled ``append`` whose event already joined a batch may still be written: every statement
runs to its end even when its caller is cancelled, and the cancellation is delivered right after.

A run's end is one transaction (:meth:`EventLog.end_run`: terminal event, status, summary), and
nothing is appended after it (``RunEndedError``; migration 3's triggers refuse it too).

A mixin of :class:`~wopeval.events.store.EventStore`, which provides the connections.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Final

from wopeval.events.appends import (
    Chain,
    Pending,
    QueuedEvent,
    check_given,
    dump_payload,
    queued_item,
    queued_payload,
    wake,
)
from wopeval.events.emit import EmitsTyped
from wopeval.events.ids import new_event_id, utc_now
from wopeval.events.tables import dumps_json
from wopeval.events.writes import MAX_BATCH, BatchWrites, run_to_completion
from wopeval.wire.events import Payload, RunEvent
from wopeval.wire.vocab import RUN_CANCELLED, RUN_COMPLETED, RUN_FAILED

__all__ = ["END_STATUS", "EventLog"]

# The terminal event types and the status each one ends its run with (see end_run).
END_STATUS: Final = {RUN_COMPLETED: "completed", RUN_FAILED: "failed", RUN_CANCELLED: "cancelled"}


class EventLog(EmitsTyped, BatchWrites):
    """Appends, typed payloads, taps and the run's end; :class:`~wopeval.events.store.EventStore`
    provides the connections and the open/closed state."""

    _check_open: Callable[[], None]

    async def end_run(
        self,
        run_id: str,
        type: str,
        payload: Any,
        *,
        summary: dict[str, Any] | None = None,
        error: dict[str, Any] | None = None,
    ) -> RunEvent:
        """Append the run's terminal event and set its terminal status in one transaction.

        ``type`` is ``run.completed``, ``run.failed`` or ``run.cancelled`` (the status follows);
        ``summary``/``error`` are stored with it. A reader that sees the event therefore sees
        the status and summary too. Raises :class:`RunTerminalError` when the run already has
        a terminal status, :class:`RunEndedError` when it has its terminal event (nothing is
        written then), :class:`UnknownRunError` for no such run.
        """
        if type not in END_STATUS:
            raise ValueError(f"{type!r} is not a terminal event type")
        self._check_open()
        values: dict[str, Any] = {"status": END_STATUS[type], "updated_at": utc_now()}
        if summary is not None:
            values["summary"] = dumps_json(summary)
        if error is not None:
            values["error"] = dumps_json(error)
        item = Pending(run_id, type, dump_payload(payload), new_event_id(), None, None)
        async with self._write_lock:
            self._check_open()
            while self._pending:  # the events queued before the end are written first
                batch = self._pending[:MAX_BATCH]
                del self._pending[:MAX_BATCH]
                await run_to_completion(self._write_batch(batch))
                wake(batch)
            await run_to_completion(self._write_end(item, values))
        assert item.event is not None
        return item.event

    async def emit_end(
        self,
        run_id: str,
        payload: Payload,
        *,
        summary: dict[str, Any] | None = None,
        error: dict[str, Any] | None = None,
    ) -> RunEvent:
        """:meth:`end_run` with a typed terminal payload."""
        return await self.end_run(
            run_id, payload.event_type, payload.to_wire(), summary=summary, error=error
        )

    async def append(
        self,
        run_id: str,
        type: str,
        payload: Any,
        *,
        causation_id: str | None = None,
        node_id: str | None = None,
        event_id: str | None = None,
        timestamp: str | None = None,
    ) -> RunEvent:
        """Append one event and return it once committed (``sequence`` contiguous from 0).

        ``payload`` is any JSON value or a pydantic model (stored as its wire JSON). ``event_id``
        and ``timestamp`` default to a fresh id and the time of this call (so a trial's queued
        events keep the times they happened at, and timestamps follow the sequence); an event
        recorded elsewhere first (a remote trial, :mod:`wopeval.engine.distributed`) passes its
        own, which must match
        :data:`~wopeval.events.ids.EVENT_ID_PATTERN` and the fixed-width :func:`utc_now` form.
        The sequence is always assigned here. Raises ``TypeError``/``ValueError`` for a payload
        that is not JSON or a malformed id or timestamp (nothing is written),
        :class:`UnknownRunError`, or :class:`StoreError` when the database fails.
        """
        self._check_open()
        check_given(event_id, timestamp)
        stamp = timestamp if timestamp is not None else utc_now()
        item = queued_item(run_id, type, payload, causation_id, node_id, event_id, stamp)
        return await self._enqueue(item)

    def tap(self, run_id: str, receive: Callable[[RunEvent], None]) -> Callable[[], None]:
        """Hand ``receive`` each event this store commits to ``run_id`` from now on, in
        sequence order, right after its commit (it must not raise); returns the call that
        stops it. One tap a run (the run's live summary fold, :mod:`wopeval.grading.live`).
        Another process's appends to the run are not seen: the receiver checks the sequence.
        """
        if run_id in self._taps:
            raise ValueError(f"run {run_id!r} is tapped already")
        self._taps[run_id] = receive

        def untap() -> None:
            if self._taps.get(run_id) is receive:
                del self._taps[run_id]

        return untap

    def emit_later(
        self,
        run_id: str,
        payload: Payload,
        *,
        causation_id: str | None = None,
        node_id: str | None = None,
        chain: Chain | None = None,
        event_id: str | None = None,
        timestamp: str | None = None,
    ) -> QueuedEvent:
        """Queue a typed payload for the writer and return at once, its event id known.

        The event is committed with the next batch, in call order with every other append;
        ``await queued.committed()`` returns it once it is (``emit`` is this, awaited). A
        caller that must know its event durable before going on (before a side effect a
        resume must see) awaits ``committed()`` first; one that only needs the order (a
        trial's events before its score) awaits them all at the end: one wake-up, not one per
        event, and the trial's events share commits. Events queued with the same ``chain``
        stand or fall in order: once one is not written, none after it is. ``event_id`` and
        ``timestamp``: as :meth:`append` takes them (an event recorded elsewhere first)."""
        if self._closed:
            self._check_open()
        if event_id is not None or timestamp is not None:
            check_given(event_id, timestamp)
        stamp = timestamp if timestamp is not None else utc_now()
        item = queued_payload(run_id, payload.event_type, payload, causation_id, node_id,
                              event_id, stamp, chain, self._hurry)  # fmt: skip
        self._queue(item)
        return item

    async def emit(
        self,
        run_id: str,
        payload: Payload,
        *,
        causation_id: str | None = None,
        node_id: str | None = None,
    ) -> RunEvent:
        """Append a typed payload (its type is its model's); see ``append``, which is given the
        model itself: its wire dict is dumped to JSON once and kept as the event's payload, and
        the model becomes the event's ``typed`` (no parse back, no re-validation)."""
        return await self.append(
            run_id, payload.event_type, payload, causation_id=causation_id, node_id=node_id
        )

    async def _enqueue(self, item: Pending) -> RunEvent:
        """Queue ``item`` for the writer task and wait until its batch is settled."""
        item.waiter = asyncio.get_running_loop().create_future()
        self._queue(item)
        self._hurry()
        assert item.waiter is not None
        try:
            await item.waiter
        except asyncio.CancelledError:
            if item in self._pending:  # not taken by any batch: it will never be written
                self._pending.remove(item)
            raise
        if item.error is not None:
            raise item.error
        assert item.event is not None
        return item.event
