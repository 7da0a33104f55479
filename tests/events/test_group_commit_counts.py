"""Issue 13 §3: group commit, counted (never timed): a batch of concurrent appends is one
INSERT and one driver round trip; ``emit_later`` queues in call order and keeps the model."""

from __future__ import annotations

import anyio
import anyio.lowlevel
import pytest

from tests.events.helpers import run_record
from wopeval.events.store import EventStore, StoreClosedError
from wopeval.wire.events import ToolCalled


async def test_concurrent_appends_share_one_insert(store: EventStore, tenant: str) -> None:
    record = run_record(tenant)
    await store.create_run(record)
    batches, trips = store.batches_written, store.insert_round_trips
    async with anyio.create_task_group() as group:
        for i in range(50):
            group.start_soon(store.append, record.run_id, "x-test.tick", {"i": i})
    assert store.batches_written - batches == 1
    assert store.insert_round_trips - trips == 1
    events = await store.events(record.run_id)
    assert [e.sequence for e in events] == list(range(50))
    assert sorted(e.payload["i"] for e in events) == list(range(50))


async def test_emit_later_orders_with_appends_and_commits_once(
    store: EventStore, tenant: str
) -> None:
    record = run_record(tenant)
    await store.create_run(record)
    calls = [ToolCalled(agentId="a", toolName="t", callId=f"c{i}", inputs={"i": i})
             for i in range(5)]  # fmt: skip
    queued = [store.emit_later(record.run_id, c) for c in calls]
    assert store.batches_written == 0  # queued, not yet written
    last = await store.append(record.run_id, "x-test.after", {})
    events = [await q.committed() for q in queued]
    assert [e.eventId for e in events] == [q.event_id for q in queued]
    assert [e.sequence for e in events] == [0, 1, 2, 3, 4]
    assert last.sequence == 5
    assert store.batches_written == 1  # the five and the append: one batch
    assert [e.typed for e in events] == calls  # the model itself, not re-validated
    stored = await store.events(record.run_id)
    assert [e.payload for e in stored[:5]] == [c.to_wire() for c in calls]


async def _run_with_its_sequence_loaded(store: EventStore, tenant: str) -> str:
    """A new run with one event, so the store has its next sequence (staging reads nothing)."""
    record = run_record(tenant)
    await store.create_run(record)
    await store.append(record.run_id, "x-test.before", {})
    return record.run_id


async def test_events_nobody_waits_for_linger_to_share_a_commit(
    store: EventStore, tenant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The writer lingers (``writes.LINGER_S``, an hour here) while no appender waits: events queued
    apart (a trial's first events, another trial's last) share one batch once one is waited
    for."""
    monkeypatch.setattr("wopeval.events.writes.LINGER_S", 3600.0)
    run_id = await _run_with_its_sequence_loaded(store, tenant)
    batches = store.batches_written
    first = store.emit_later(run_id, ToolCalled(agentId="a", toolName="t", callId="c0"))
    await anyio.sleep(0.2)  # without a linger, the writer writes it meanwhile
    assert store.batches_written == batches
    second = store.emit_later(run_id, ToolCalled(agentId="a", toolName="t", callId="c1"))
    with anyio.fail_after(60):
        events = [await first.committed(), await second.committed()]
    assert [e.sequence for e in events] == [1, 2]
    assert store.batches_written - batches == 1


async def test_a_waited_for_event_does_not_wait_out_the_linger(
    store: EventStore, tenant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An appender that waits (``append``, ``committed()``) hurries the writer: with a linger
    of an hour, both still return."""
    monkeypatch.setattr("wopeval.events.writes.LINGER_S", 3600.0)
    record = run_record(tenant)
    await store.create_run(record)
    with anyio.fail_after(60):
        queued = store.emit_later(record.run_id, ToolCalled(agentId="a", toolName="t", callId="c"))
        await anyio.lowlevel.checkpoint()  # the writer lingers
        assert (await queued.committed()).sequence == 0
        queued = store.emit_later(record.run_id, ToolCalled(agentId="a", toolName="t", callId="d"))
        appended = await store.append(record.run_id, "x-test.after", {})
        assert appended.sequence == 2
        assert (await queued.committed()).sequence == 1


async def _lingering_store(store_url: str, tenant: str) -> tuple[EventStore, str]:
    """A store whose writer lingers (an hour: the test sets LINGER_S) on one queued event."""
    record = run_record(tenant)
    store = await EventStore.open(store_url)
    await store.create_run(record)
    store.emit_later(record.run_id, ToolCalled(agentId="a", toolName="t", callId="c"))
    await anyio.lowlevel.checkpoint()  # the writer lingers
    return store, record.run_id


async def _call_ids_stored(store_url: str, run_id: str) -> list[str]:
    reopened = await EventStore.open(store_url)
    try:
        return [e.payload["callId"] for e in await reopened.events(run_id)]
    finally:
        await reopened.close()


async def test_closing_writes_what_lingers(
    store_url: str, tenant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Events queued and never waited for are written when the store closes, not dropped."""
    monkeypatch.setattr("wopeval.events.writes.LINGER_S", 3600.0)
    with anyio.fail_after(60):
        store, run_id = await _lingering_store(store_url, tenant)
        await store.close()
    assert await _call_ids_stored(store_url, run_id) == ["c"]


async def test_a_cancelled_caller_still_closes_the_store(
    store_url: str, tenant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``close`` in a cancelled scope (a ``finally`` after Ctrl-C) writes what lingers and
    releases the store all the same; the caller gets its cancellation."""
    monkeypatch.setattr("wopeval.events.writes.LINGER_S", 3600.0)
    with anyio.fail_after(60):
        store, run_id = await _lingering_store(store_url, tenant)
        with anyio.CancelScope() as scope:
            scope.cancel()
            await store.close()
        assert scope.cancelled_caught
    with pytest.raises(StoreClosedError):
        store.emit_later(run_id, ToolCalled(agentId="a", toolName="t", callId="d"))
    assert await _call_ids_stored(store_url, run_id) == ["c"]


async def test_a_full_batch_does_not_wait_out_the_linger(
    store: EventStore, tenant: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once a whole batch (``MAX_BATCH`` events) is queued, the writer takes it at once, waited
    for or not."""
    from wopeval.events.store import MAX_BATCH

    monkeypatch.setattr("wopeval.events.writes.LINGER_S", 3600.0)
    run_id = await _run_with_its_sequence_loaded(store, tenant)
    batches = store.batches_written
    first = store.emit_later(run_id, ToolCalled(agentId="a", toolName="t", callId="c"))
    await anyio.lowlevel.checkpoint()  # the writer lingers
    for i in range(MAX_BATCH - 1):
        store.emit_later(run_id, ToolCalled(agentId="a", toolName="t", callId=f"c{i}"))
    with anyio.fail_after(30):
        while store.batches_written == batches:  # noqa: ASYNC110 - a counter, no event
            await anyio.sleep(0.01)
    assert first.settled  # written without anyone waiting for it
    assert store.batches_written - batches == 1
