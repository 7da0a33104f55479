"""The durable, append-only event log and run registry (SQLite or PostgreSQL, one code path).

Appends are *group-committed*: callers queue their event and wait for it; one writer task
(started by the first append to find no writer running, gone once the queue is empty) takes the
queued events (up to :data:`MAX_BATCH`) and writes them as one atomic multi-row ``INSERT`` — one
driver round trip, one thread hop on SQLite — then wakes every appender of that batch at once.
``append`` returns only after its event is committed, so a crash loses nothing acknowledged,
while concurrent trials share one commit instead of queueing for one each. While no appender
waits (``emit_later``'s events, until ``committed()`` is awaited), the writer lingers up to
``writes.LINGER_S`` for more events to join the batch; any wait, or ``close``, ends it at once.
The single writer lock serializes all writes, which makes per-run sequences contiguous from 0
in call order; ``PRIMARY KEY (run_id, sequence)`` is the backstop when a second process appends
to the same run (the batch reloads that run's sequence and retries).

Every statement on a connection runs to its end even when its caller is cancelled (anyio
cancel scopes, a disconnected SSE client); the cancellation is delivered right after. A
cancelled ``append`` whose event already joined a batch may therefore still be written.

Readers (``events``, ``wait_for_events``, ``get_run``…) use pooled connections and never wait
for the writer (SQLite WAL; PostgreSQL MVCC). ``wait_for_events`` wakes on an in-process append
at once, and on another process's through the run's one notifier (:mod:`wopeval.events.notify`:
PostgreSQL ``LISTEN/NOTIFY``, a shared re-check on SQLite).

A run's end is one transaction (:meth:`EventStore.end_run`: terminal event, status, summary),
and nothing is appended after it (``RunEndedError``; migration 3's triggers refuse it too).
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import Callable, Coroutine, Sequence
from contextlib import suppress
from types import TracebackType
from typing import TYPE_CHECKING, Any, Final, TypeVar

from sqlalchemy import Row, func, or_, select, update

from wopeval.errors import StoreError
from wopeval.events.appends import (
    Chain,
    Pending,
    QueuedEvent,
    check_given,
    dump_payload,
    open_appender,
    queued_item,
    queued_payload,
    wake,
)
from wopeval.events.emit import EmitsTyped
from wopeval.events.ids import new_event_id, utc_now
from wopeval.events.notify import PG_FALLBACK_SECONDS, SQLITE_POLL_SECONDS, LogNotifier
from wopeval.events.records import (
    LEASE_SECONDS,
    RUN_STATUSES,
    TERMINAL_STATUSES,
    DuplicateRunError,
    RunEndedError,
    RunRecord,
    RunTerminalError,
    StoreClosedError,
    UnknownRunError,
    _check_status,
)
from wopeval.events.registry import RunRegistry
from wopeval.events.schema import (
    apply_migrations,
    create_store_engine,
    drain_sqlite_workers,
    dumps_json,
    ensure_sqlite_wal,
    events,
    row_event,
    runs,
    sqlite_workers,
)
from wopeval.events.urls import normalize_store_url, sqlite_path
from wopeval.events.writes import MAX_BATCH, BatchWrites, run_to_completion
from wopeval.wire.events import Payload, RunEvent
from wopeval.wire.vocab import (
    INTERRUPTED_ERROR_CODE,
    RUN_CANCELLED,
    RUN_COMPLETED,
    RUN_FAILED,
)

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

__all__ = [
    "END_STATUS",
    "INTERRUPTED_ERROR_CODE",
    "LEASE_SECONDS",
    "MAX_BATCH",
    "RUN_STATUSES",
    "TERMINAL_STATUSES",
    "DuplicateRunError",
    "EventStore",
    "QueuedEvent",
    "RunEndedError",
    "RunRecord",
    "RunTerminalError",
    "StoreClosedError",
    "StoreError",
    "UnknownRunError",
]

# The terminal event types and the status each one ends its run with (see end_run).
END_STATUS: Final = {RUN_COMPLETED: "completed", RUN_FAILED: "failed", RUN_CANCELLED: "cancelled"}
_T = TypeVar("_T")
log = logging.getLogger("wopeval.events")


class EventStore(EmitsTyped, RunRegistry, BatchWrites):
    """Append-only event log plus run registry. Open with :meth:`open`, then :meth:`close`."""

    def __init__(self, engine: AsyncEngine, writer: AsyncConnection) -> None:
        self._engine = engine
        self._writer = writer
        self._sqlite = engine.dialect.name == "sqlite"
        self._write_lock = asyncio.Lock()
        self._pending: list[Pending] = []
        self._drainer: asyncio.Task[None] | None = None
        self._lingering: asyncio.Future[None] | None = None  # the writer lingers on it
        self._hurried = False  # an appender waits: the writer does not linger
        self._next_sequence: dict[str, int] = {}
        self._held: set[str] = set()  # the claims: events.registry
        self._lost: dict[str, str | None] = {}
        # Counters (tests check structure through them, not time): batches written, and driver
        # round trips made for them.
        self.batches_written = 0
        self.insert_round_trips = 0
        self._sqlite_driver: Any = None  # the writer's aiosqlite connection (cached)
        # SQLite: the connection event batches are committed on, from this thread (see _insert)
        self._appender: sqlite3.Connection | None = None
        self.appender_fallbacks = 0
        interval = SQLITE_POLL_SECONDS if self._sqlite else PG_FALLBACK_SECONDS
        self.notifier = LogNotifier(self.last_sequence, interval)
        self._listener: AsyncConnection | None = None
        self._closed = False
        self.owner: str | None = None
        self.lease_seconds = LEASE_SECONDS
        self._taps: dict[str, Callable[[RunEvent], None]] = {}

    @classmethod
    async def open(cls, url: str | None = None) -> EventStore:
        """Connect (see :func:`normalize_store_url`) and apply pending migrations."""
        normalized = normalize_store_url(url)
        path = sqlite_path(normalized)
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
        engine = create_store_engine(normalized)
        workers = sqlite_workers()
        try:
            writer = await engine.connect()
            try:
                if path is not None:
                    await ensure_sqlite_wal(writer)
                await apply_migrations(writer)
            except BaseException:
                await writer.close()
                raise
        except BaseException as exc:
            await engine.dispose()
            if path is not None and isinstance(exc, Exception):
                await drain_sqlite_workers(workers)
            raise
        store = cls(engine, writer)
        if path is None:
            await store._listen()
        else:
            store._appender = open_appender(path)
        return store

    async def _listen(self) -> None:
        """PostgreSQL: LISTEN for other processes' appends (migration 3's trigger NOTIFYs)."""
        try:
            self._listener = await self._engine.connect()
            raw = await self._listener.get_raw_connection()
            await self.notifier.listen(raw.driver_connection)
        except Exception:
            log.warning("cannot LISTEN for appends; polling instead", exc_info=True)

    async def close(self) -> None:
        """Write what is queued, then release every connection. Idempotent. A cancelled
        caller still closes the store (then gets its cancellation)."""
        if self._closed:
            return
        await run_to_completion(self._close())

    async def drained(self) -> None:
        """Wait until every event queued so far is written (or failed), lingering no more."""
        drainer = self._drainer
        if drainer is not None:
            self._hurry()
            await asyncio.wait((drainer,))

    async def _close(self) -> None:
        drainer = self._drainer
        if drainer is not None:  # what is queued is written first, lingering no more
            self._hurry()
            await asyncio.wait((drainer,))
        async with self._write_lock:
            if self._closed:  # a second close meanwhile
                return
            self._closed = True
            self.notifier.close()
            if self._listener is not None:
                with suppress(Exception):
                    await self._listener.close()
            await self._writer.close()
            if self._appender is not None:
                self._appender.close()
        await self._engine.dispose()

    async def __aenter__(self) -> EventStore:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    # ---- runs -------------------------------------------------------------------------------

    async def set_status(
        self,
        run_id: str,
        status: str,
        *,
        summary: dict[str, Any] | None = None,
        error: dict[str, Any] | None = None,
    ) -> None:
        """Move a run to ``status``; ``summary``/``error`` are stored when given.

        A terminal run keeps its status: setting the same terminal status again may update the
        summary or error, any other change raises :class:`RunTerminalError`.
        """
        _check_status(status)
        values: dict[str, Any] = {"status": status, "updated_at": utc_now()}
        if summary is not None:
            values["summary"] = dumps_json(summary)
        if error is not None:
            values["error"] = dumps_json(error)
        stmt = (
            update(runs)
            .where(
                runs.c.run_id == run_id,
                or_(runs.c.status.not_in(TERMINAL_STATUSES), runs.c.status == status),
            )
            .values(values)
        )
        result = await self._locked_write(lambda w: w.execute(stmt))
        if result.rowcount == 0:
            current = await self.get_run(run_id)
            if current is None:
                raise UnknownRunError(f"no run {run_id!r}")
            raise RunTerminalError(f"run {run_id!r} is already {current.status}")
        if status in TERMINAL_STATUSES:
            self._next_sequence.pop(run_id, None)

    # ---- owners -----------------------------------------------------------------------------

    # ---- events -----------------------------------------------------------------------------

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

    async def events(
        self, run_id: str, after_sequence: int = -1, limit: int | None = None
    ) -> list[RunEvent]:
        """The run's events with ``sequence > after_sequence``, in order (at most ``limit``)."""
        stmt = (
            select(events)
            .where(events.c.run_id == run_id, events.c.sequence > after_sequence)
            .order_by(events.c.sequence)
        )
        if limit is not None:
            stmt = stmt.limit(limit)
        return [row_event(row) for row in await self._read(stmt)]

    async def last_sequence(self, run_id: str) -> int:
        """The highest stored sequence of the run, or -1 when its log is empty."""
        stmt = select(func.max(events.c.sequence)).where(events.c.run_id == run_id)
        rows = await self._read(stmt)
        value = rows[0][0]
        return -1 if value is None else int(value)

    async def wait_for_events(
        self,
        run_id: str,
        after_sequence: int,
        timeout: float,  # noqa: ASYNC109 (the wire poll's own `timeout`, wire notes §4.3)
        *,
        limit: int | None = None,
    ) -> list[RunEvent]:
        """Long-poll: events after ``after_sequence`` as soon as any exist, ``[]`` on timeout.

        Waits on the run's notifier (:mod:`wopeval.events.notify`), not by re-querying."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + max(timeout, 0.0)
        while True:
            # Watched before the read: an append while it runs wakes the wait below at once.
            async with self.notifier.watching(run_id, after_sequence) as until_grown:
                found = await self.events(run_id, after_sequence, limit)
                remaining = deadline - loop.time()
                if found or remaining <= 0 or self._closed:
                    return found
                await until_grown(remaining)

    async def read(self, stmt: Any) -> Sequence[Row[Any]]:
        """A read-only query of the store's tables (the viewer's paged, filtered queries)."""
        return await self._read(stmt)

    # ---- internals --------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise StoreClosedError("the event store is closed")

    async def _read(self, stmt: Any) -> Sequence[Row[Any]]:
        """Run a query on a pooled connection; a cancelled caller lets it finish first.

        Abandoning a query half-way makes asyncpg drop the connection (and log about it); an
        SSE client that disconnects should cost nothing but the rest of a short query.
        """
        self._check_open()
        return await run_to_completion(self._query(stmt))

    async def _query(self, stmt: Any) -> Sequence[Row[Any]]:
        async with self._engine.connect() as conn:
            result = await conn.execute(stmt)
            return result.all()

    async def _locked_write(
        self, operation: Callable[[AsyncConnection], Coroutine[Any, Any, _T]]
    ) -> _T:
        self._check_open()
        async with self._write_lock:
            self._check_open()
            await self._mend_writer()
            return await run_to_completion(operation(self._writer))
