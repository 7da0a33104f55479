"""A run ends at its terminal event, whichever way that event is written (both stores).

Since migration 4 no SQLite AFTER INSERT trigger marks the end: the store sets
``runs.ended_sequence`` in the transaction that writes a terminal event, ``end_run`` or a plain
``append`` of a terminal type (an imported log's last event). Since migration 5 no SQLite
BEFORE INSERT trigger refuses what comes after it either: each INSERT the store makes checks
the end once, so another process is refused, even one that cached the run's next sequence
before the end. On PostgreSQL the trigger stays, and refuses a writer that bypasses the store.
"""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import select, text

from tests.events.helpers import run_record
from wopeval.events.store import EventStore, RunEndedError
from wopeval.events.tables import runs
from wopeval.wire.events import RunCompleted
from wopeval.wire.vocab import RUN_COMPLETED


async def new_run(store: EventStore) -> str:
    record = run_record()
    await store.create_run(record)
    return record.run_id


async def _ended_sequence(store: EventStore, run_id: str) -> int | None:
    async with store._engine.connect() as conn:
        row = (
            await conn.execute(select(runs.c.ended_sequence).where(runs.c.run_id == run_id))
        ).one()
    value = row[0]
    return None if value is None else int(value)


async def test_end_run_marks_the_end_in_its_transaction(store: EventStore) -> None:
    run_id = await new_run(store)
    await store.append(run_id, "x-test.step", {})
    ended = await store.end_run(run_id, RUN_COMPLETED, {})
    assert await _ended_sequence(store, run_id) == ended.sequence == 1
    with pytest.raises(RunEndedError):
        await store.append(run_id, "x-test.late", {})


async def test_a_terminal_event_appended_as_any_other_ends_the_run(store: EventStore) -> None:
    run_id = await new_run(store)
    first = await store.append(run_id, "x-test.step", {})
    end = await store.append(run_id, RUN_COMPLETED, {})
    assert (first.sequence, end.sequence) == (0, 1)
    assert await _ended_sequence(store, run_id) == 1
    with pytest.raises(RunEndedError):
        await store.append(run_id, "x-test.late", {})
    # Another process (nothing cached) is refused too, and so is a raw INSERT past the store.
    url = store._engine.url.render_as_string(hide_password=False)
    async with await EventStore.open(url) as other:
        with pytest.raises(RunEndedError):
            await other.append(run_id, "x-test.late", {})
        if store._engine.dialect.name == "sqlite":
            return  # no trigger: only the store's own statements check (migration 5)
        async with other._engine.connect() as conn:
            with pytest.raises(Exception, match="has ended"):
                await conn.execute(
                    text(
                        "INSERT INTO events (run_id, sequence, event_id, type, payload, "
                        "timestamp, schema_version) VALUES (:r, 2, 'e', 'x', '{}', 't', 1)"
                    ),
                    {"r": run_id},
                )
    assert [e.type for e in await store.events(run_id)] == ["x-test.step", RUN_COMPLETED]


async def test_in_one_batch_the_events_after_the_end_are_refused(store: EventStore) -> None:
    """Appends queued together share a batch: those after the terminal event fail alone."""
    run_id = await new_run(store)
    other_run = await new_run(store)
    results = await asyncio.gather(
        store.append(run_id, "x-test.step", {}),
        store.append(run_id, RUN_COMPLETED, {}),
        store.append(run_id, "x-test.late", {}),
        store.append(other_run, "x-test.step", {}),
        return_exceptions=True,
    )
    assert not isinstance(results[0], BaseException)
    assert not isinstance(results[1], BaseException)
    assert isinstance(results[2], RunEndedError)
    assert not isinstance(results[3], BaseException)
    assert [e.type for e in await store.events(run_id)] == ["x-test.step", RUN_COMPLETED]
    assert await _ended_sequence(store, run_id) == 1
    assert await _ended_sequence(store, other_run) is None
    await store.append(other_run, "x-test.more", {})  # the other run goes on


async def test_a_process_that_cached_the_sequence_is_refused_after_the_end(
    store: EventStore,
) -> None:
    """A holder that appended before another process ended the run still thinks it knows the
    next sequence: its next append takes a sequence the log has (the primary key), then it
    reads the run again and is refused."""
    run_id = await new_run(store)
    url = store._engine.url.render_as_string(hide_password=False)
    async with await EventStore.open(url) as stale:
        await stale.append(run_id, "x-test.step", {})  # its cache: the next sequence is 1
        await store.append(run_id, "x-test.more", {})  # sequence 1, by this store
        await store.end_run(run_id, RUN_COMPLETED, {})
        with pytest.raises(RunEndedError):
            await stale.append(run_id, "x-test.late", {})
        with pytest.raises(RunEndedError):  # queued for its next batch, refused the same
            await stale.emit_later(run_id, RunCompleted(outputs={})).committed()
    types = [e.type for e in await store.events(run_id)]
    assert types == ["x-test.step", "x-test.more", RUN_COMPLETED]


async def test_an_insert_past_the_end_writes_nothing(store: EventStore) -> None:
    """The backstop: a writer whose next sequence is past the log's end (no primary key to
    hit) writes none of its rows; its events fail as any after the end do, the others of
    its batch are written."""
    run_id, other_run = await new_run(store), await new_run(store)
    await store.end_run(run_id, RUN_COMPLETED, {})
    url = store._engine.url.render_as_string(hide_password=False)
    async with await EventStore.open(url) as wrong:
        await wrong.append(other_run, "x-test.step", {})
        wrong._next_sequence[run_id] = 7  # as if it knew of events the log does not have
        late = wrong.emit_later(run_id, RunCompleted(outputs={}))
        fine = wrong.emit_later(other_run, RunCompleted(outputs={}))
        with pytest.raises(RunEndedError):
            await late.committed()
        assert (await fine.committed()).sequence == 1
    assert [e.type for e in await store.events(run_id)] == [RUN_COMPLETED]
    assert [e.sequence for e in await store.events(other_run)] == [0, 1]
