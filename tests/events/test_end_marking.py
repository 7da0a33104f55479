"""A run ends at its terminal event, whichever way that event is written (both stores).

Since migration 4 no SQLite AFTER INSERT trigger marks the end: the store sets
``runs.ended_sequence`` in the transaction that writes a terminal event, ``end_run`` or a plain
``append`` of a terminal type (an imported log's last event). The BEFORE INSERT trigger stays,
so a writer that bypasses the store is still refused after the end.
"""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import select, text

from tests.events.helpers import run_record
from wopeval.events.schema import runs
from wopeval.events.store import EventStore, RunEndedError
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
