"""The append-only event log on both stores: sequences, durability, long-poll, append-only."""

from __future__ import annotations

import asyncio
import gc
import logging
import math
import random
import re

import anyio
import pytest
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from tests.events.helpers import MakeRun, run_record
from wopeval.events import store as store_module
from wopeval.events.ids import EVENT_ID_PATTERN
from wopeval.events.store import EventStore, StoreClosedError, UnknownRunError
from wopeval.events.tables import insert_events_sql
from wopeval.events.urls import normalize_store_url
from wopeval.wire.events import EVAL_SCORED, RUN_STARTED, TOOL_CALLED, EvalScored, RunEvent

TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


async def test_append_fills_the_v2_envelope(store: EventStore, make_run: MakeRun) -> None:
    run = await make_run()
    first = await store.append(run.run_id, RUN_STARTED, {"workflowId": run.suite_id})
    second = await store.append(
        run.run_id, TOOL_CALLED, {"callId": "c1"}, causation_id=first.eventId, node_id="n1"
    )
    assert [first.sequence, second.sequence] == [0, 1]
    for event in (first, second):
        assert re.fullmatch(EVENT_ID_PATTERN, event.eventId)
        assert TIMESTAMP.match(event.timestamp)
        assert event.schemaVersion == 1
        assert event.runId == run.run_id
        assert RunEvent.model_validate(event.to_wire()) == event  # a valid closed RunEventDoc
    assert first.eventId != second.eventId
    assert (second.causationId, second.nodeId) == (first.eventId, "n1")
    assert second.payload == {"callId": "c1"}
    assert await store.events(run.run_id) == [first, second]


async def test_one_batch_of_events_with_and_without_node_ids_reads_back_whole(
    store: EventStore, make_run: MakeRun
) -> None:
    """A batch where some events carry a node id binds that column in every row; one where
    none does writes it (and the engine version, never written) as a literal NULL."""
    run = await make_run()
    mixed = [
        store.emit_later(run.run_id, EvalScored(taskId="a", score=1.0, passed=True)),
        store.emit_later(run.run_id, EvalScored(taskId="b", score=0.0, passed=False), node_id="n7"),
        store.emit_later(run.run_id, EvalScored(taskId="c", score=0.5, passed=False)),
    ]
    written = [await queued.committed() for queued in mixed]
    plain = await store.append(run.run_id, "x-test.tick", {"i": 1}, causation_id="c-1")
    stored = await store.events(run.run_id)
    assert stored == [*written, plain]
    assert [(e.nodeId, e.engineVersion, e.causationId) for e in stored] == [
        (None, None, None), ("n7", None, None), (None, None, None), (None, None, "c-1")
    ]  # fmt: skip
    assert [e.payload["taskId"] for e in stored[:3]] == ["a", "b", "c"]


@pytest.mark.parametrize("paramstyle", ["qmark", "numeric"])
def test_the_event_insert_binds_no_column_it_writes_as_null(paramstyle: str) -> None:
    from sqlalchemy.dialects import sqlite

    dialect = sqlite.dialect(paramstyle=paramstyle)
    for nodes, bound in ((False, 8), (True, 9)):
        sql = insert_events_sql(dialect, 3, nodes)
        groups = sql.partition(" VALUES ")[2]
        assert groups.count("NULL") == 3 * (10 - bound)
        marks = re.findall(r"\?|:\d+", groups)
        assert len(marks) == 3 * bound  # the staged rows' width, flattened


async def test_fifty_concurrent_appenders_get_contiguous_sequences(
    store: EventStore, make_run: MakeRun
) -> None:
    run = await make_run()
    rng = random.Random(50)

    async def appender(worker: int) -> list[RunEvent]:
        mine = []
        for i in range(20):
            mine.append(await store.append(run.run_id, "x-test.tick", {"w": worker, "i": i}))
            if rng.random() < 0.3:
                await asyncio.sleep(0)
        return mine

    per_worker = await asyncio.gather(*(appender(w) for w in range(50)))
    stored = await store.events(run.run_id)
    assert [event.sequence for event in stored] == list(range(1000))
    assert len({event.eventId for event in stored}) == 1000
    for worker, mine in enumerate(per_worker):  # each caller's events keep its call order
        assert [event.payload["i"] for event in mine] == list(range(20))
        assert [event.sequence for event in mine] == sorted(event.sequence for event in mine)
        assert all(event.payload["w"] == worker for event in mine)
    by_sequence = {event.sequence: event for event in stored}
    assert all(by_sequence[event.sequence] == event for mine in per_worker for event in mine)


async def test_more_concurrent_appenders_than_one_batch_holds(
    store: EventStore, make_run: MakeRun
) -> None:
    run = await make_run()
    count = 3 * store_module.MAX_BATCH + 7
    appended = await asyncio.gather(
        *(store.append(run.run_id, "x-test.tick", {"i": i}) for i in range(count))
    )
    assert sorted(e.sequence for e in appended) == list(range(count))
    assert await store.events(run.run_id) == sorted(appended, key=lambda e: e.sequence)


async def test_concurrent_appends_to_many_runs_keep_each_run_contiguous(
    store: EventStore, make_run: MakeRun
) -> None:
    runs = [await make_run() for _ in range(6)]

    async def appender(run_id: str) -> None:
        for i in range(30):
            await store.append(run_id, "x-test.tick", {"i": i})

    await asyncio.gather(*(appender(run.run_id) for run in runs for _ in range(3)))
    for run in runs:
        assert [e.sequence for e in await store.events(run.run_id)] == list(range(90))
        assert await store.last_sequence(run.run_id) == 89


async def test_events_after_a_cursor_with_a_limit(store: EventStore, make_run: MakeRun) -> None:
    run = await make_run()
    assert await store.last_sequence(run.run_id) == -1
    assert await store.events(run.run_id) == []
    for i in range(5):
        await store.append(run.run_id, "x-test.tick", {"i": i})
    assert [e.sequence for e in await store.events(run.run_id, after_sequence=2)] == [3, 4]
    assert [e.sequence for e in await store.events(run.run_id, 0, limit=2)] == [1, 2]
    assert await store.events(run.run_id, after_sequence=4) == []
    assert await store.events(run.run_id, after_sequence=99) == []
    assert await store.last_sequence(run.run_id) == 4


async def test_events_survive_closing_and_reopening(store_url: str, tenant: str) -> None:
    record = run_record(tenant)
    async with await EventStore.open(store_url) as first:
        await first.create_run(record)
        written = [await first.append(record.run_id, "x-test.tick", {"i": i}) for i in range(3)]
    async with await EventStore.open(store_url) as second:
        assert await second.events(record.run_id) == written
        assert await second.get_run(record.run_id) == record
        more = await second.append(record.run_id, "x-test.tick", {"i": 3})
        assert more.sequence == 3


async def test_two_stores_appending_to_one_run_stay_contiguous(
    store_url: str, store: EventStore, make_run: MakeRun
) -> None:
    """A second writer (another process) takes sequences; the backstop key forces a reload."""
    run = await make_run()
    async with await EventStore.open(store_url) as other:
        for i in range(16):
            writer = store if i % 4 == 0 else other  # the other store gets 3 ahead each time
            event = await writer.append(run.run_id, "x-test.tick", {"i": i})
            assert event.sequence == i
    assert [e.payload["i"] for e in await store.events(run.run_id)] == list(range(16))


async def test_append_to_an_unknown_run_fails_alone(store: EventStore, make_run: MakeRun) -> None:
    run = await make_run()
    results = await asyncio.gather(
        store.append(run.run_id, "x-test.tick", {"i": 0}),
        store.append(f"{run.tenant}/r-no-such-run-0000000000", "x-test.tick", {}),
        store.append(run.run_id, "x-test.tick", {"i": 1}),
        return_exceptions=True,
    )
    assert isinstance(results[1], UnknownRunError)
    assert [e.payload["i"] for e in await store.events(run.run_id)] == [0, 1]


@pytest.mark.parametrize("payload", [math.nan, {"x": object()}, {"x": math.inf}])
async def test_non_json_payload_is_refused_before_writing(
    store: EventStore, make_run: MakeRun, payload: object
) -> None:
    run = await make_run()
    with pytest.raises((TypeError, ValueError)):
        await store.append(run.run_id, "x-test.tick", payload)
    assert (await store.append(run.run_id, "x-test.tick", None)).sequence == 0


async def test_payload_shapes_round_trip(store: EventStore, make_run: MakeRun) -> None:
    run = await make_run()
    scored = EvalScored(taskId="t1", score=0.5, passed=False)
    values = [scored, None, [1, "two", {"3": 4.5}], "ünïcode ✓", 7, {"nested": {"a": [True]}}]
    appended = [await store.append(run.run_id, "x-test.value", value) for value in values]
    stored = await store.events(run.run_id)
    assert [e.payload for e in stored] == [scored.to_wire(), *values[1:]]
    assert stored == appended
    assert (await store.append(run.run_id, EVAL_SCORED, scored)).payload == scored.to_wire()


async def test_cancelled_appends_leave_the_log_contiguous(
    store: EventStore, make_run: MakeRun
) -> None:
    run = await make_run()
    tasks = [
        asyncio.create_task(store.append(run.run_id, "x-test.tick", {"i": i})) for i in range(60)
    ]
    await asyncio.sleep(0)
    for task in tasks[1::3]:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    acknowledged = {t.result().eventId for t in tasks if not t.cancelled()}
    stored = await store.events(run.run_id)
    assert [e.sequence for e in stored] == list(range(len(stored)))
    assert acknowledged <= {e.eventId for e in stored}
    assert len(acknowledged) >= 40
    assert (await store.append(run.run_id, "x-test.tick", {})).sequence == len(stored)


async def test_cancelling_appends_mid_write_keeps_acknowledged_events(
    store: EventStore, make_run: MakeRun
) -> None:
    """Cancel appenders at arbitrary points, the writing one included (anyio cancel scopes do)."""
    run = await make_run()
    rng = random.Random(7)
    acknowledged: set[str] = set()
    for round_ in range(40):
        tasks = [
            asyncio.create_task(store.append(run.run_id, "x-test.tick", {"r": round_, "i": i}))
            for i in range(8)
        ]
        await asyncio.sleep(rng.choice([0, 0, 0.0005, 0.001, 0.002]))
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        acknowledged |= {t.result().eventId for t in tasks if not t.cancelled()}
    final = await store.append(run.run_id, "x-test.tick", {"final": True})
    stored = await store.events(run.run_id)
    assert [e.sequence for e in stored] == list(range(len(stored)))
    assert acknowledged <= {e.eventId for e in stored}
    assert stored[-1] == final


async def test_anyio_cancel_scopes_mid_write_keep_the_log_consistent(
    store: EventStore, make_run: MakeRun
) -> None:
    """The engine's trials run in anyio task groups; their cancellation re-delivers repeatedly."""
    run = await make_run()
    rng = random.Random(11)
    acknowledged: set[str] = set()

    async def append(round_: int, i: int) -> None:
        event = await store.append(run.run_id, "x-test.tick", {"r": round_, "i": i})
        acknowledged.add(event.eventId)

    for round_ in range(25):
        with anyio.move_on_after(rng.choice([0, 0.0005, 0.001, 0.003])):
            async with anyio.create_task_group() as group:
                for i in range(8):
                    group.start_soon(append, round_, i)
    final = await store.append(run.run_id, "x-test.tick", {"final": True})
    stored = await store.events(run.run_id)
    assert [e.sequence for e in stored] == list(range(len(stored)))
    assert acknowledged <= {e.eventId for e in stored}
    assert stored[-1] == final


async def test_readers_cancelled_mid_query_leave_the_store_usable(
    store: EventStore, make_run: MakeRun, caplog: pytest.LogCaptureFixture, own_heap: None
) -> None:
    """SSE clients disconnect at any moment: a cancelled read must not leak or poison anything."""
    run = await make_run()
    for i in range(50):
        await store.append(run.run_id, "x-test.tick", {"i": i})
    rng = random.Random(3)
    for _ in range(40):
        readers = [
            asyncio.create_task(store.events(run.run_id)),
            asyncio.create_task(store.wait_for_events(run.run_id, 49, timeout=5)),
            asyncio.create_task(store.get_run(run.run_id)),
        ]
        await asyncio.sleep(rng.choice([0, 0.0002, 0.001]))
        for reader in readers:
            reader.cancel()
        await asyncio.gather(*readers, return_exceptions=True)
    assert len(await store.events(run.run_id)) == 50
    assert (await store.append(run.run_id, "x-test.tick", {})).sequence == 50
    gc.collect()
    assert not [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]


async def test_event_rows_cannot_be_updated_or_deleted(
    store_url: str, store: EventStore, make_run: MakeRun
) -> None:
    run = await make_run()
    await store.append(run.run_id, "x-test.tick", {"i": 0})
    engine = create_async_engine(normalize_store_url(store_url))
    try:
        for sql in ("UPDATE events SET type = 'x' WHERE run_id = :r", "DELETE FROM events"):
            async with engine.connect() as conn:
                with pytest.raises(Exception, match="append-only"):
                    await conn.execute(text(sql), {"r": run.run_id})
    finally:
        await engine.dispose()
    assert len(await store.events(run.run_id)) == 1


async def test_wait_for_events_wakes_on_an_in_process_append(
    store: EventStore, make_run: MakeRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.notifier.interval = 60.0  # only the wake-up works
    run = await make_run()
    await store.append(run.run_id, "x-test.tick", {"i": 0})
    waiter = asyncio.create_task(store.wait_for_events(run.run_id, 0, timeout=60))
    await asyncio.sleep(0.05)
    assert not waiter.done()
    appended = await store.append(run.run_id, "x-test.tick", {"i": 1})
    async with asyncio.timeout(10):
        assert await waiter == [appended]


async def test_wait_for_events_returns_at_once_when_events_exist(
    store: EventStore, make_run: MakeRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.notifier.interval = 60.0
    run = await make_run()
    events = [await store.append(run.run_id, "x-test.tick", {"i": i}) for i in range(3)]
    async with asyncio.timeout(10):
        assert await store.wait_for_events(run.run_id, -1, timeout=60) == events
        assert await store.wait_for_events(run.run_id, 0, timeout=60, limit=1) == events[1:2]


async def test_wait_for_events_times_out_empty(store: EventStore, make_run: MakeRun) -> None:
    run = await make_run()
    await store.append(run.run_id, "x-test.tick", {})
    assert await store.wait_for_events(run.run_id, 0, timeout=0.2) == []
    assert await store.wait_for_events(run.run_id, 0, timeout=0) == []


async def test_wait_for_events_sees_another_process_append(
    store_url: str, store: EventStore, make_run: MakeRun
) -> None:
    """No in-process wake-up crosses stores: the periodic re-query must find the event."""
    run = await make_run()
    waiter = asyncio.create_task(store.wait_for_events(run.run_id, -1, timeout=30))
    async with await EventStore.open(store_url) as other:
        await asyncio.sleep(0.05)
        appended = await other.append(run.run_id, "x-test.tick", {})
    async with asyncio.timeout(10):
        assert await waiter == [appended]


async def test_closed_store_refuses_work(store_url: str, tenant: str) -> None:
    opened = await EventStore.open(store_url)
    record = run_record(tenant)
    await opened.create_run(record)
    await opened.close()
    await opened.close()  # idempotent
    with pytest.raises(StoreClosedError):
        await opened.append(record.run_id, "x-test.tick", {})
    with pytest.raises(StoreClosedError):
        await opened.get_run(record.run_id)
