"""Creating a run, counted (never timed): one ``INSERT INTO runs`` and nothing else, no
transaction around it; on PostgreSQL on a pooled connection, so that a create never waits
behind the writer (the executing runs' event batches); and the new run's first append reads
no sequence back."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import pytest
from sqlalchemy import event

from tests.events.helpers import run_record
from wopeval.events.store import DuplicateRunError, EventStore


@contextmanager
def statements(store: EventStore) -> Iterator[list[str]]:
    """Every SQL statement the store sends meanwhile: through SQLAlchemy, and (SQLite) on the
    appender connection, which SQLAlchemy does not see."""
    seen: list[str] = []

    def on_execute(*args: Any) -> None:
        seen.append(" ".join(str(args[2]).split()))

    engine = store._engine.sync_engine
    event.listen(engine, "before_cursor_execute", on_execute)
    appender = store._appender
    if appender is not None:
        appender.set_trace_callback(lambda sql: seen.append(" ".join(sql.split())))
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", on_execute)
        if appender is not None:
            appender.set_trace_callback(None)


@contextmanager
def checkouts(store: EventStore) -> Iterator[list[int]]:
    """Connections taken from the store's pool meanwhile (the writer is not pooled)."""
    taken: list[int] = []
    pool = store._engine.sync_engine.pool

    def on_checkout(*args: Any) -> None:
        taken.append(1)

    event.listen(pool, "checkout", on_checkout)
    try:
        yield taken
    finally:
        event.remove(pool, "checkout", on_checkout)


async def test_a_create_is_one_insert_and_no_transaction(store: EventStore, tenant: str) -> None:
    records = [run_record(tenant) for _ in range(5)]
    with statements(store) as seen:
        for record in records:
            await store.create_run(record)
    assert len(seen) == 5
    assert all(sql.startswith("INSERT INTO runs ") for sql in seen), seen
    for record in records:
        assert (await store.get_run(record.run_id)) == record


@pytest.mark.postgres
async def test_a_postgres_create_takes_one_pooled_connection_and_not_the_writer(
    pg_database: str, tenant: str
) -> None:
    async with await EventStore.open(pg_database) as store:
        with checkouts(store) as taken:
            await store.create_run(run_record(tenant))
        assert len(taken) == 1
        record = run_record(tenant)
        # The writer is busy (its lock held, as while a batch of events is written): the
        # create does not wait for it. The bound only turns a hang into a failure.
        async with store._write_lock:
            with anyio.fail_after(30):
                await store.create_run(record)
        assert await store.get_run(record.run_id) == record


async def test_concurrent_creates_each_record_their_run(store: EventStore, tenant: str) -> None:
    records = [run_record(tenant) for _ in range(12)]
    async with anyio.create_task_group() as group:
        for record in records:
            group.start_soon(store.create_run, record)
    for record in records:
        assert await store.get_run(record.run_id) == record


async def test_a_reused_run_id_is_refused_and_keeps_the_first(
    store: EventStore, tenant: str
) -> None:
    first = run_record(tenant)
    await store.create_run(first)
    await store.append(first.run_id, "x-test.one", {})
    with pytest.raises(DuplicateRunError):
        await store.create_run(run_record(tenant, run_id=first.run_id))
    # The refused create leaves the first run's sequence where its log is.
    appended = await store.append(first.run_id, "x-test.two", {})
    assert appended.sequence == 1
    assert [e.sequence for e in await store.events(first.run_id)] == [0, 1]


async def test_a_new_runs_first_append_reads_no_sequence(store: EventStore, tenant: str) -> None:
    record = run_record(tenant)
    await store.create_run(record)
    with statements(store) as seen:
        appended = await store.append(record.run_id, "x-test.first", {})
    assert appended.sequence == 0
    assert len(seen) == 1, seen
    assert seen[0].startswith("INSERT INTO events"), seen
