"""Idle readers cost one watcher per run, not a query each (issue 14, point 3)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.engine.helpers import make_suite, scripted_task
from wopeval.engine.registry import SCRIPTED_AGENT_ID, Registry
from wopeval.engine.run import RunSettings
from wopeval.events.store import EventStore
from wopeval.service.runs import RunService

GOLDEN = {"kind": "golden", "match": {"strategy": "exact", "value": "done"}}
SUITE = make_suite([scripted_task("t", {"output": "done"}, GOLDEN)])


async def _open_run(store: EventStore) -> str:
    service = RunService(store, Registry())
    record = await service.create(await service.plan(SUITE, SCRIPTED_AGENT_ID, RunSettings()))
    await store.append(record.run_id, "x-test.tick", {})
    return record.run_id


async def test_many_idle_subscribers_share_one_watcher(
    store: EventStore, store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id = await _open_run(store)
    store.notifier.interval = 0.05
    checks: list[str] = []
    real = store.last_sequence

    async def counted(run: str) -> int:
        checks.append(run)
        return await real(run)

    monkeypatch.setattr(store.notifier, "_last_sequence", counted)
    waiters = [asyncio.create_task(store.wait_for_events(run_id, 0, 60)) for _ in range(200)]
    async with asyncio.timeout(30):  # every waiter has read the log and waits
        while (watch := store.notifier._watches.get(run_id)) is None or watch.waiters < 200:  # noqa: ASYNC110
            await asyncio.sleep(0.01)
    assert store.notifier.watched == 1
    checks.clear()
    await asyncio.sleep(0.5)
    # At most one re-check per 0.05 s period for all 200 waiters (not 200 per period).
    assert 1 <= len(checks) <= 11
    async with await EventStore.open(store_url) as other:  # another process appends
        appended = await other.append(run_id, "x-test.tick", {})
    async with asyncio.timeout(10):
        results = await asyncio.gather(*waiters)
    assert all(found == [appended] for found in results)
    assert store.notifier.watched == 0


@pytest.mark.postgres
async def test_postgres_wakes_on_notify_without_polling(pg_database: str) -> None:
    async with await EventStore.open(pg_database) as store:
        assert store.notifier.listening
        run_id = await _open_run(store)
        store.notifier.interval = 3600.0  # only LISTEN/NOTIFY can wake the waiter
        waiter = asyncio.create_task(store.wait_for_events(run_id, 0, 60))
        await asyncio.sleep(0.1)
        async with await EventStore.open(pg_database) as other:
            appended = await other.append(run_id, "x-test.tick", {})
        async with asyncio.timeout(5):
            assert await waiter == [appended]


async def test_an_append_while_the_reader_reads_wakes_it(
    store: EventStore, store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Another process appends while the long-poll's read is running, and its notification
    # (PostgreSQL's NOTIFY, relayed to the notifier) arrives before the reader waits. The
    # reader must not miss it and sleep until its watcher's next re-check (here: an hour).
    run_id = await _open_run(store)
    store.notifier.interval = 3600.0
    other = await EventStore.open(store_url)
    reads: list[int] = []
    real = store.events

    async def racing(run: str, after: int = -1, limit: int | None = None) -> list[Any]:
        found = await real(run, after, limit)
        reads.append(len(found))
        if len(reads) == 1:  # the first read found nothing; the append lands right after it
            await other.append(run, "x-test.tick", {"from": "another process"})
            store.notifier.notify(run)
        return found

    monkeypatch.setattr(store, "events", racing)
    try:
        async with asyncio.timeout(60):  # a hang guard only: a missed wake-up waits an hour
            found = await store.wait_for_events(run_id, 0, 3600)
    finally:
        await other.close()
    assert [e.payload for e in found] == [{"from": "another process"}]
    assert reads == [0, 1]  # woken by the notification, read once more
