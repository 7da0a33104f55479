"""How the store's connections are set up: the engine, SQLite's pragmas and WAL, transactions.

Connections run in AUTOCOMMIT mode and transactions are explicit (:func:`transaction`). A
batch of events is then one atomic, durable ``INSERT`` with one driver round trip
(:func:`~wopeval.events.tables.insert_events_sql`), which is what makes a committed-on-return
``append`` fast; multi-statement writes (the migrations) say ``BEGIN``.

SQLite: the file is switched to WAL once at open (readers never block the writer; the mode
persists in the file). Pragmas set on every connection: ``busy_timeout`` (a second writer
waits instead of failing), foreign keys on, and ``synchronous=NORMAL``. In WAL mode, NORMAL
loses nothing when the *process* dies (a killed engine or host): a commit is in the WAL
before ``append`` returns. Only an operating-system crash or power cut can roll back the last
few commits, never corrupt the file. FULL would add an fsync to every commit: a lone appender
measured ~2,800 events/s with FULL against ~4,500 with NORMAL on the 2-core dev box
(concurrent appenders share commits, so there the gap closes).
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import Any

from sqlalchemy import event, make_url
from sqlalchemy.exc import OperationalError
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine

__all__ = [
    "DRAIN_SECONDS",
    "PG_POOL_OVERFLOW",
    "PG_POOL_SIZE",
    "SQLITE_PRAGMAS",
    "create_store_engine",
    "drain_sqlite_workers",
    "ensure_sqlite_wal",
    "sqlite_workers",
    "transaction",
]

SQLITE_PRAGMAS = (
    "PRAGMA busy_timeout = 10000",
    "PRAGMA synchronous = NORMAL",
    "PRAGMA foreign_keys = ON",
)
_WAL_ATTEMPTS = 100
# PostgreSQL's pooled connections (readers, run creates), kept open between uses: a checkout
# beyond the kept ones opens a new server connection (a backend process) and closes it after.
PG_POOL_SIZE = 12
PG_POOL_OVERFLOW = 8


def _set_sqlite_pragmas(dbapi_connection: Any, _connection_record: Any) -> None:
    cursor = dbapi_connection.cursor()
    try:
        for pragma in SQLITE_PRAGMAS:
            cursor.execute(pragma)
    finally:
        cursor.close()


async def ensure_sqlite_wal(conn: AsyncConnection) -> None:
    """Put the SQLite file in WAL mode (a persistent property of the file) if it is not yet.

    Switching needs the file to itself, and SQLite answers ``database is locked`` at once
    instead of waiting on ``busy_timeout`` while other connections open the same new file,
    so the switch is retried.
    """
    if (await conn.exec_driver_sql("PRAGMA journal_mode")).scalar() == "wal":
        return
    for attempt in range(_WAL_ATTEMPTS):
        try:
            mode = (await conn.exec_driver_sql("PRAGMA journal_mode = WAL")).scalar()
        except OperationalError as exc:
            if "locked" not in str(exc) or attempt == _WAL_ATTEMPTS - 1:
                raise
            await asyncio.sleep(0.02)
        else:
            if mode != "wal":
                raise RuntimeError(f"SQLite refused WAL mode (journal_mode is {mode!r})")
            return


def create_store_engine(url: str) -> AsyncEngine:
    """An AUTOCOMMIT engine for a normalized store URL, with the SQLite pragmas installed."""
    if make_url(url).get_backend_name() == "sqlite":
        engine = create_async_engine(url, isolation_level="AUTOCOMMIT")
        event.listen(engine.sync_engine, "connect", _set_sqlite_pragmas)
        return engine
    return create_async_engine(
        url, isolation_level="AUTOCOMMIT", pool_size=PG_POOL_SIZE, max_overflow=PG_POOL_OVERFLOW
    )


DRAIN_SECONDS = 2.0


def sqlite_workers() -> set[threading.Thread]:
    """The aiosqlite connection worker threads alive now (see :func:`drain_sqlite_workers`)."""
    return {t for t in threading.enumerate() if t.name.endswith("(_connection_worker_thread)")}


async def drain_sqlite_workers(before: set[threading.Thread]) -> None:
    """Wait (at most :data:`DRAIN_SECONDS`) for the aiosqlite workers started since ``before``
    to end.

    A failed aiosqlite connect queues its worker's stop without awaiting it; when the event loop
    closes first (the CLI exits at once on a bad ``--store``), the worker dies on "Event loop is
    closed" (omnilib/aiosqlite#241). Keeping the loop running until the worker is gone avoids it.
    """
    deadline = time.monotonic() + DRAIN_SECONDS
    while time.monotonic() < deadline and any(t.is_alive() for t in sqlite_workers() - before):  # noqa: ASYNC110
        await asyncio.sleep(0.005)


@asynccontextmanager
async def transaction(conn: AsyncConnection) -> AsyncIterator[AsyncConnection]:
    """An explicit write transaction on an AUTOCOMMIT connection.

    SQLite takes the write lock up front (``BEGIN IMMEDIATE``), so the transaction can never
    fail half-way on a lock upgrade; ``busy_timeout`` makes a second writer wait for it.
    """
    begin = "BEGIN IMMEDIATE" if conn.dialect.name == "sqlite" else "BEGIN"
    await conn.exec_driver_sql(begin)
    try:
        yield conn
    except BaseException:
        with suppress(Exception):
            await conn.exec_driver_sql("ROLLBACK")
        raise
    try:
        await conn.exec_driver_sql("COMMIT")
    except BaseException:
        with suppress(Exception):
            await conn.exec_driver_sql("ROLLBACK")
        raise
