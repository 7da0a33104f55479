"""The write half of the store: a batch of queued appends staged (sequences assigned, events
built), committed as one multi-row ``INSERT``, and its appenders and the run's tap told.

A mixin of :class:`~wopeval.events.store.EventStore`, which provides the connections, the queue
and the per-run sequence cache (see its module for the group commit these serve).
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable, Coroutine
from contextlib import suppress
from itertools import chain
from typing import TYPE_CHECKING, Any, Final, NamedTuple, TypeVar

from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError

from wopeval.errors import StoreError
from wopeval.events.appends import Pending, is_busy, wake
from wopeval.events.ids import utc_now
from wopeval.events.notify import LogNotifier
from wopeval.events.records import (
    TERMINAL_STATUSES,
    ClaimLostError,
    RunEndedError,
    RunTerminalError,
    StoreClosedError,
    UnknownRunError,
    claim_lost_message,
)
from wopeval.events.schema import ENDED_MESSAGE, events, insert_events_sql, runs, transaction
from wopeval.wire.events import SCHEMA_VERSION, RunEvent
from wopeval.wire.vocab import TERMINAL_TYPES

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

__all__ = ["APPEND_ATTEMPTS", "LINGER_S", "MAX_BATCH", "BatchWrites", "run_to_completion"]

APPEND_ATTEMPTS: Final = 3
# Events per INSERT statement (schema.insert_events_sql compiles one statement per size).
MAX_BATCH: Final = 128
# Queued events no appender waits for linger this long for others to share their commit (a
# batch costs about as much as a dozen rows besides its rows); one waited for goes at once.
LINGER_S: Final = 0.002
_T = TypeVar("_T")


class Staged(NamedTuple):
    """A staged batch: its rows in :func:`~wopeval.events.schema.insert_events_sql`'s order
    (the ``events`` columns but ``node_id`` and ``engine_version``), and the node ids of the
    rows that carry one, by row index."""

    rows: list[tuple[Any, ...]]
    nodes: dict[int, str]
    run_ids: tuple[str, ...] = ()  # the runs the rows belong to (each once)

    def params(self) -> tuple[Any, ...]:
        """The INSERT's parameters: the rows flattened, with the ``node_id`` column (after
        ``schema_version``) bound in every row when any row carries one (workflow nodes')."""
        rows = self.rows
        if self.nodes:
            nodes = self.nodes
            rows = [(*row[:7], nodes.get(i), *row[7:]) for i, row in enumerate(rows)]
        return tuple(chain.from_iterable(rows))


class BatchWrites:
    """Staging and committing batches; :class:`~wopeval.events.store.EventStore` queues them."""

    _engine: AsyncEngine
    _writer: AsyncConnection
    _sqlite: bool
    _sqlite_driver: Any
    _appender: sqlite3.Connection | None
    _closed: bool
    _next_sequence: dict[str, int]
    _taps: dict[str, Callable[[RunEvent], None]]
    notifier: LogNotifier
    owner: str | None
    _held: set[str]  # the claims (events.registry)
    _lost: dict[str, str | None]
    _mark_lost: Callable[[str, str | None], None]
    batches_written: int
    insert_round_trips: int
    appender_fallbacks: int

    _lingering: asyncio.Future[None] | None
    _hurried: bool
    _pending: list[Pending]
    _drainer: asyncio.Task[None] | None
    _write_lock: asyncio.Lock

    def _queue(self, item: Pending) -> None:
        pending = self._pending
        pending.append(item)
        if self._drainer is None:
            self._drainer = asyncio.get_running_loop().create_task(self._drain())
        elif len(pending) == MAX_BATCH:  # a full batch: the writer takes it now
            lingering = self._lingering
            if lingering is not None and not lingering.done():
                lingering.set_result(None)

    async def _drain(self) -> None:
        """The writer task: write queued events a batch at a time until none is left.

        Not inside any caller's cancel scope, so a cancelled appender never abandons a write
        half-way; every appender of a batch is woken once it is settled."""
        try:
            while self._pending:
                if not self._hurried and len(self._pending) < MAX_BATCH:
                    await self._linger()
                async with self._write_lock:
                    batch = self._pending[:MAX_BATCH]
                    del self._pending[:MAX_BATCH]
                    if batch:
                        await self._write_batch(batch)
                wake(batch)
        finally:
            self._drainer = None
            self._hurried = False

    async def _mend_writer(self) -> None:
        """After the database dropped the writer's connection (a restart, a failover),
        SQLAlchemy has invalidated it and refuses every statement until its dead transaction
        is rolled back; rolled back, the next statement connects afresh."""
        if self._writer.invalidated:
            with suppress(Exception):  # the database may still be away: the statement says so
                await self._writer.rollback()

    def _hurry(self) -> None:
        """An appender waits for a queued event: the writer writes now, lingering no more."""
        self._hurried = True
        lingering = self._lingering
        if lingering is not None and not lingering.done():
            lingering.set_result(None)

    async def _linger(self) -> None:
        """Let more events join the next batch: until :data:`LINGER_S` has passed, the batch
        is full, or an appender waits (:meth:`_hurry`)."""
        loop = asyncio.get_running_loop()
        lingering = self._lingering = loop.create_future()
        timer = loop.call_later(LINGER_S, _settle_future, lingering)
        try:
            await lingering
        finally:
            timer.cancel()
            self._lingering = None

    async def _write_batch(self, batch: list[Pending]) -> None:
        """Write ``batch`` as one atomic INSERT and settle every item. Never raises."""
        failure: BaseException = StoreClosedError("the event store is closed")
        for _ in range(APPEND_ATTEMPTS if not self._closed else 0):
            try:
                await self._mend_writer()
                staged = await self._stage(batch)
                ends = _ends(batch)
                if ends:  # a terminal event appended like any other (an imported log's end)
                    async with transaction(self._writer):
                        await self._insert(staged, in_transaction=True)
                        await self._mark_ends(ends)
                    for run_id, _ in ends:  # ended: its next append reloads and is refused
                        self._next_sequence.pop(run_id, None)
                else:
                    await self._insert(staged)
            except (IntegrityError, sqlite3.IntegrityError) as exc:  # another process took a
                # sequence of one of these runs: reload the sequences and retry
                failure = exc
                self._forget(batch)
            except Exception as exc:
                failure = exc
                self._forget(batch)
                break
            else:
                self.batches_written += 1
                self._notify(batch)
                return
        for item in batch:
            error = StoreError(f"could not append to run {item.run_id!r}: {failure}")
            error.__cause__ = failure
            item.fail(error)

    async def _write_end(self, item: Pending, values: dict[str, Any]) -> None:
        """The terminal event and the status update, one transaction (retried on a clash)."""
        guard = update(runs).where(
            runs.c.run_id == item.run_id, runs.c.status.not_in(TERMINAL_STATUSES)
        )
        claimed = self.owner is not None and item.run_id in self._held
        if claimed:  # ended only by its owner: a process whose claim lapsed leaves it be
            guard = guard.where(runs.c.owner == self.owner)
        for attempt in range(APPEND_ATTEMPTS):
            try:
                await self._mend_writer()
                async with transaction(self._writer):
                    staged = await self._stage([item])
                    if item.error is not None:
                        raise item.error
                    await self._insert(staged, in_transaction=True)
                    assert item.event is not None  # staged: its terminal event's sequence
                    ended = {**values, "ended_sequence": item.event.sequence}
                    result = await self._writer.execute(guard.values(ended))
                    if result.rowcount == 0:
                        raise await self._not_ended(item.run_id, claimed)
            except (IntegrityError, sqlite3.IntegrityError) as exc:
                self._forget([item])
                if attempt == APPEND_ATTEMPTS - 1:
                    raise StoreError(f"could not end run {item.run_id!r}: {exc}") from exc
            except BaseException:
                self._forget([item])
                raise
            else:
                self._forget([item])  # ended: no more sequences for it
                self._notify([item])
                return

    async def _stage(self, batch: list[Pending]) -> Staged:
        """Assign sequences and build rows and events; unknown and ended runs fail
        individually."""
        next_sequence = self._next_sequence
        unknown: set[str] = set()
        ended: set[str] = set()
        if any(item.run_id not in next_sequence for item in batch):
            unknown, ended = await self._load_sequences({item.run_id for item in batch})
        timestamp = utc_now()
        rows: list[tuple[Any, ...]] = []
        nodes: dict[int, str] = {}
        for item in batch:
            item.event = item.error = None
            run_id = item.run_id
            if run_id in unknown:
                item.fail(UnknownRunError(f"no run {run_id!r}"))
                continue
            if run_id in ended:  # ended before, or by a terminal event earlier in this batch
                item.fail(RunEndedError(f"run {run_id!r}: {ENDED_MESSAGE}"))
                continue
            if run_id in self._lost:  # another process took it over: it writes, not this one
                item.fail(ClaimLostError(claim_lost_message(run_id, self._lost[run_id])))
                continue
            if item.chain is not None and item.chain.broken is not None:
                item.fail(StoreError(f"not appended to run {run_id!r}: an event queued before "
                                     f"it in its chain was not ({item.chain.broken})"))  # fmt: skip
                continue
            sequence = next_sequence[run_id]
            next_sequence[run_id] = sequence + 1
            if item.type in TERMINAL_TYPES:
                ended.add(run_id)
            stamp = item.timestamp or timestamp
            item.event = item.build(sequence, stamp)
            if item.node_id is not None:
                nodes[len(rows)] = item.node_id
            rows.append(
                (
                    run_id,
                    sequence,
                    item.event_id,
                    item.type,
                    item.payload_json,
                    stamp,
                    SCHEMA_VERSION,
                    item.causation_id,
                )
            )  # fmt: skip (the events table's column order but node_id and engine_version)
        return Staged(rows, nodes, tuple(dict.fromkeys(row[0] for row in rows)))

    async def _load_sequences(self, run_ids: set[str]) -> tuple[set[str], set[str]]:
        """Fill the next-sequence cache for ``run_ids``; return the ids of unknown runs and of
        ended ones (which are not cached: an append to them is refused)."""
        missing = [run_id for run_id in run_ids if run_id not in self._next_sequence]
        if not missing:
            return set(), set()
        last = (
            select(func.max(events.c.sequence))
            .where(events.c.run_id == runs.c.run_id)
            .scalar_subquery()
        )
        stmt = select(runs.c.run_id, last, runs.c.ended_sequence).where(runs.c.run_id.in_(missing))
        found = (await self._writer.execute(stmt)).all()
        ended = set()
        for run_id, last_sequence, ended_sequence in found:
            if ended_sequence is not None:
                ended.add(run_id)
                continue
            self._next_sequence[run_id] = 0 if last_sequence is None else int(last_sequence) + 1
        return set(missing) - {row[0] for row in found}, ended

    async def _insert(self, staged: Staged, *, in_transaction: bool = False) -> None:
        """One AUTOCOMMIT ``INSERT … VALUES (…), (…)``: atomic, durable, one round trip.

        SQLite, outside a transaction: committed on :attr:`_appender` in this thread, which
        costs less than the write itself does in the aiosqlite worker thread (a thread hop,
        GIL hand-offs). The appender never waits for SQLite's write lock (``busy_timeout`` 0,
        so the event loop is never blocked on another process): when another process holds
        it, the same statement goes to the writer connection, which waits off the loop.
        """
        if not staged.rows:
            return
        size = len(staged.rows)
        # SQLite: the statement writes nothing when one of its runs has ended (another
        # process ended it since this one cached its sequence): the same refusal as a
        # sequence taken meanwhile, so the batch is staged again and those runs' events fail.
        guarded = len(staged.run_ids) if self._sqlite else 0
        sql = insert_events_sql(self._engine.dialect, size, bool(staged.nodes), guarded)
        params = staged.params() + staged.run_ids if guarded else staged.params()
        self.insert_round_trips += 1
        if self._appender is not None and not in_transaction:
            try:
                written = self._appender.execute(sql, params).rowcount
                _check_written(written, size)
                return
            except sqlite3.OperationalError as exc:
                if not is_busy(exc):
                    raise
                self.appender_fallbacks += 1  # nothing was written: the writer waits for it
        if self._sqlite:
            # SQLAlchemy's aiosqlite adapter makes three thread round trips per statement
            # (cursor, execute, close); aiosqlite's execute_fetchall makes one, which doubles a
            # lone appender's rate. Same SQL, same AUTOCOMMIT connection, under the write lock
            # (so the change count is this statement's).
            if self._sqlite_driver is None:
                raw = await self._writer.get_raw_connection()
                self._sqlite_driver = raw.driver_connection
            before = self._sqlite_driver.total_changes
            await self._sqlite_driver.execute_fetchall(sql, params)
            _check_written(self._sqlite_driver.total_changes - before, size)
        else:
            await self._writer.exec_driver_sql(sql, params)

    async def _not_ended(self, run_id: str, claimed: bool) -> StoreError:
        """Why the guarded status update of ``run_id``'s end matched no row: it has ended
        already, or (``claimed``) another process took it over (then it is fenced)."""
        if claimed:
            stmt = select(runs.c.owner, runs.c.status).where(runs.c.run_id == run_id)
            found = (await self._writer.execute(stmt)).first()
            if found is not None and found[1] not in TERMINAL_STATUSES:
                self._mark_lost(run_id, found[0])
                return ClaimLostError(claim_lost_message(run_id, found[0]))
        return RunTerminalError(f"run {run_id!r} has already ended")

    async def _mark_ends(self, ends: list[tuple[str, int]]) -> None:
        """Set ``ended_sequence`` of runs whose terminal event is being written, in the same
        transaction (the appends after it are refused: :meth:`_load_sequences`, and the
        database's BEFORE INSERT trigger for any other writer)."""
        for run_id, sequence in ends:
            await self._writer.execute(
                update(runs)
                .where(runs.c.run_id == run_id, runs.c.ended_sequence.is_(None))
                .values(ended_sequence=sequence)
            )

    def _forget(self, batch: list[Pending]) -> None:
        for item in batch:
            self._next_sequence.pop(item.run_id, None)

    def _notify(self, batch: list[Pending]) -> None:
        taps = self._taps
        if taps:
            for item in batch:
                tap = taps.get(item.run_id)
                if tap is not None and item.event is not None:
                    tap(item.event)
        for run_id in {item.run_id for item in batch if item.event is not None}:
            self.notifier.notify(run_id)


def _check_written(written: int, size: int) -> None:
    """An INSERT of ``size`` rows wrote ``written``: none means the guard refused it (a run
    of the batch has ended), raised as the integrity error the writer retries on."""
    if written != size:
        raise sqlite3.IntegrityError(f"{ENDED_MESSAGE} ({written} of {size} rows written)")


def _ends(batch: list[Pending]) -> list[tuple[str, int]]:
    """(run id, sequence) of the staged terminal events of ``batch``."""
    return [
        (item.run_id, item.event.sequence)
        for item in batch
        if item.type in TERMINAL_TYPES and item.event is not None
    ]


async def run_to_completion(operation: Coroutine[Any, Any, _T]) -> _T:
    """Await ``operation`` to its end even if the caller is cancelled, then re-raise that.

    The writer connection is shared: a statement abandoned half-way would poison every later
    write, so a cancelled caller waits for its write to settle (the log stays consistent).
    """
    task = asyncio.ensure_future(operation)
    caught: asyncio.CancelledError | None = None
    while not task.done():
        try:
            await asyncio.wait((task,))
        except asyncio.CancelledError as exc:
            caught = caught or exc  # keep the original: anyio's cancel scopes recognise it
    if caught is not None:
        if not task.cancelled():
            task.exception()  # retrieved: the caller's cancellation wins
        raise caught
    return task.result()


def _settle_future(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)
