"""SQLite: when another process holds the write lock, the store's appender (which never waits
on the event loop) hands the same INSERT to the writer connection, which waits off the loop;
the ended-run check holds on that path too (migration 5)."""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import anyio
import pytest

from tests.events.helpers import run_record
from wopeval.events.store import DuplicateRunError, EventStore, RunEndedError
from wopeval.wire.events import Decided
from wopeval.wire.vocab import DECIDED, RUN_COMPLETED


def _hold_write_lock(path: Path, held: threading.Event, release: threading.Event) -> None:
    conn = sqlite3.connect(str(path), isolation_level=None)
    try:
        conn.execute("BEGIN IMMEDIATE")
        held.set()
        release.wait(10)
        conn.execute("COMMIT")
    finally:
        conn.close()


async def _append_while_locked(path: Path, store: EventStore, run_id: str) -> int:
    """Append to ``run_id`` while another connection holds the write lock for a moment."""
    held, release = threading.Event(), threading.Event()
    holder = threading.Thread(target=_hold_write_lock, args=(path, held, release))
    holder.start()
    held.wait(5)
    try:
        queued = store.emit_later(run_id, Decided(agentId="a", decision="late"))
        await anyio.sleep(0.2)  # the appender found the lock taken: the writer waits for it
        release.set()
        return (await queued.committed()).sequence
    finally:
        release.set()
        holder.join(10)


@pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)
async def test_a_locked_database_delays_the_append_and_still_refuses_after_the_end(
    store_url: str,
) -> None:
    async with await EventStore.open(store_url) as store:
        record = run_record()
        run_id = record.run_id
        await store.create_run(record)
        await store.append(run_id, "x-test.step", {})
        assert await _append_while_locked(Path(store_url), store, run_id) == 1
        assert store.appender_fallbacks == 1  # it went to the writer connection
        await store.end_run(run_id, RUN_COMPLETED, {})
        store._next_sequence[run_id] = 7  # a writer that thinks the log goes on past its end
        with pytest.raises(RunEndedError):
            await _append_while_locked(Path(store_url), store, run_id)
        assert store.appender_fallbacks == 2
        types = [e.type for e in await store.events(run_id)]
    assert types == ["x-test.step", DECIDED, RUN_COMPLETED]


@pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)
async def test_a_run_created_while_another_process_holds_the_lock_waits_for_it(
    store_url: str,
) -> None:
    """``create_run`` takes the appender too: busy, it hands the INSERT to the writer, which
    waits for the lock; the run is then recorded once, and a second create is refused."""
    async with await EventStore.open(store_url) as store:
        record = run_record()
        held, release = threading.Event(), threading.Event()
        holder = threading.Thread(target=_hold_write_lock, args=(Path(store_url), held, release))
        holder.start()
        held.wait(5)
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(store.create_run, record)
                await anyio.sleep(0.2)
                assert await store.get_run(record.run_id) is None  # not written while held
                release.set()
        finally:
            release.set()
            holder.join(10)
        assert store.appender_fallbacks == 1
        assert await store.get_run(record.run_id) == record
        with pytest.raises(DuplicateRunError):
            await store.create_run(record)  # the appender's integrity error, mapped
        assert store.appender_fallbacks == 1


@pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)
async def test_a_run_is_created_on_the_appender_without_the_writer(store_url: str) -> None:
    async with await EventStore.open(store_url) as store:
        writer, store._writer = store._writer, None  # type: ignore[assignment]  # no use
        record = run_record()
        try:
            await store.create_run(record)
        finally:
            store._writer = writer
        other = sqlite3.connect(store_url)
        try:
            (count,) = other.execute("SELECT count(*) FROM runs").fetchone()
        finally:
            other.close()
    assert count == 1  # committed, visible to another connection
