"""The durable, append-only event log and run registry (SQLite or PostgreSQL, one code path).

:class:`EventStore` is the one public class. It owns the connections (a writer, a pool for
readers, PostgreSQL's listening connection) and their life: opening applies the migrations,
closing writes what is queued first. Its behaviour is composed of one mixin per concern:

- :class:`~wopeval.events.log.EventLog`: appending (group-committed batches), typed payloads,
  taps and a run's end (the batches themselves: :class:`~wopeval.events.writes.BatchWrites`);
- :class:`~wopeval.events.reads.LogReads`: reading a run's events and the long-poll that wakes
  on appends (through the run's :class:`~wopeval.events.notify.LogNotifier`);
- :class:`~wopeval.events.run_registry.RunRegistry`: run records, statuses and the owner/lease
  claims.

Every statement on a connection runs to its end even when its caller is cancelled (anyio
cancel scopes, a disconnected SSE client); the cancellation is delivered right after.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import sqlite3
from collections.abc import Callable, Coroutine
from contextlib import suppress
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

from wopeval.errors import StoreError
from wopeval.events.appends import Pending, QueuedEvent, is_busy, open_appender
from wopeval.events.connections import (
    create_store_engine,
    drain_sqlite_workers,
    ensure_sqlite_wal,
    sqlite_workers,
)
from wopeval.events.log import END_STATUS, EventLog
from wopeval.events.notify import PG_FALLBACK_SECONDS, SQLITE_POLL_SECONDS, LogNotifier
from wopeval.events.reads import LogReads
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
)
from wopeval.events.run_registry import RunRegistry
from wopeval.events.tables import apply_migrations, runs
from wopeval.events.urls import normalize_store_url, sqlite_path
from wopeval.events.writes import MAX_BATCH, run_to_completion
from wopeval.wire.events import RunEvent
from wopeval.wire.vocab import INTERRUPTED_ERROR_CODE

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

_T = TypeVar("_T")
log = logging.getLogger("wopeval.events")


class EventStore(EventLog, LogReads, RunRegistry):
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
        self._held: set[str] = set()  # the claims: events.run_registry
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

    # ---- internals --------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise StoreClosedError("the event store is closed")

    async def _locked_write(
        self, operation: Callable[[AsyncConnection], Coroutine[Any, Any, _T]]
    ) -> _T:
        self._check_open()
        async with self._write_lock:
            self._check_open()
            await self._mend_writer()
            return await run_to_completion(operation(self._writer))

    async def _insert_run_row(self, row: dict[str, Any]) -> None:
        """One ``runs`` row, committed, in one statement. SQLite: on the appender in this
        thread, as an event batch is (``_insert``): no thread hop under the write lock, whose
        round trips were what a create waited for while the loop served other requests. When
        another process holds SQLite's write lock, the writer (which waits off the loop) takes
        it instead."""
        if self._sqlite:
            if self._appender is not None:
                self._check_open()
                async with self._write_lock:
                    self._check_open()
                    try:
                        self._appender.execute(_insert_sql(tuple(row)), row)
                        return
                    except sqlite3.OperationalError as exc:
                        if not is_busy(exc):
                            raise
                        self.appender_fallbacks += 1  # nothing was written: the writer waits
            await self._locked_write(lambda w: w.execute(runs.insert(), row))
            return
        # PostgreSQL: a pooled connection, not the writer. One AUTOCOMMIT INSERT is atomic
        # and durable on its own, and concurrent creates need no lock under MVCC; on the
        # writer each would wait behind the executing runs' event batches.
        self._check_open()
        await run_to_completion(self._insert_pooled(row))

    async def _insert_pooled(self, row: dict[str, Any]) -> None:
        async with self._engine.connect() as conn:
            await conn.execute(runs.insert(), row)


@functools.lru_cache(maxsize=8)
def _insert_sql(columns: tuple[str, ...]) -> str:
    """``INSERT INTO runs`` of ``columns`` with named parameters (sqlite3's ``:name``)."""
    names = ", ".join(columns)
    return f"INSERT INTO runs ({names}) VALUES ({', '.join(':' + c for c in columns)})"
