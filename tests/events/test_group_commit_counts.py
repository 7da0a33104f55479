"""Issue 13 §3: group commit, counted (never timed): a batch of concurrent appends is one
INSERT and one driver round trip; ``emit_later`` queues in call order and keeps the model."""

from __future__ import annotations

import anyio

from tests.events.helpers import run_record
from wopeval.events.store import EventStore
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
