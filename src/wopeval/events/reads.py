"""The log's read side: a run's events in pages, its last sequence, and the long-poll that waits
for more.

Readers use pooled connections and never wait for the writer (SQLite WAL; PostgreSQL MVCC).
:meth:`LogReads.wait_for_events` wakes on an in-process append at once, and on another
process's through the run's one notifier (:mod:`wopeval.events.notify`: PostgreSQL
``LISTEN/NOTIFY``, a shared re-check on SQLite). A query runs to its end even when its caller is
cancelled (a disconnected SSE client); the cancellation is delivered right after.

A mixin of :class:`~wopeval.events.store.EventStore`, which provides the connections.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from itertools import starmap
from typing import TYPE_CHECKING, Any

from sqlalchemy import Row, func, select

from wopeval.events.logged import LOGGED_COLUMNS, LoggedEvent
from wopeval.events.notify import LogNotifier
from wopeval.events.tables import events, row_event
from wopeval.events.writes import run_to_completion
from wopeval.wire.events import RunEvent

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine

__all__ = ["LogReads"]


class LogReads:
    """Reading a run's log; :class:`~wopeval.events.store.EventStore` provides the pool."""

    _engine: AsyncEngine
    _closed: bool
    notifier: LogNotifier
    _check_open: Callable[[], None]

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

    async def logged_events(
        self, run_id: str, after_sequence: int = -1, limit: int | None = None
    ) -> list[LoggedEvent]:
        """:meth:`events` as grading reads them: only the columns the fold needs, each payload
        left as its stored text until read (:mod:`wopeval.events.logged`)."""
        stmt = (
            select(*LOGGED_COLUMNS)
            .where(events.c.run_id == run_id, events.c.sequence > after_sequence)
            .order_by(events.c.sequence)
        )
        if limit is not None:
            stmt = stmt.limit(limit)
        return list(starmap(LoggedEvent, await self._read(stmt)))

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
