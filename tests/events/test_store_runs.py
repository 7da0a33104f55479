"""The run registry on both stores: create/get/list, idempotency keys, statuses, interruption."""

from __future__ import annotations

import dataclasses

import pytest

from tests.events.helpers import MakeRun, run_record
from wopeval.events.store import (
    INTERRUPTED_ERROR_CODE,
    DuplicateRunError,
    EventStore,
    RunTerminalError,
    UnknownRunError,
)


async def test_create_then_get_round_trips_every_field(store: EventStore, tenant: str) -> None:
    record = run_record(
        tenant,
        idempotency_key="key-1",
        request={"evalModes": ["golden", "regression"], "baselineRunId": f"{tenant}/rX" * 3},
        suite_document={"suiteId": "s", "tasks": [{"taskId": "ü", "input": {"q": [1, 2.5]}}]},
    )
    await store.create_run(record)
    assert await store.get_run(record.run_id) == record
    assert await store.get_run(f"{tenant}/r-missing-000000000000") is None


async def test_duplicate_run_id_is_refused(store: EventStore, make_run: MakeRun) -> None:
    run = await make_run()
    with pytest.raises(DuplicateRunError):
        await store.create_run(run)


async def test_idempotency_key_is_unique_per_tenant(store: EventStore, tenant: str) -> None:
    first = run_record(tenant, idempotency_key="k")
    await store.create_run(first)
    with pytest.raises(DuplicateRunError):
        await store.create_run(run_record(tenant, idempotency_key="k"))
    other_tenant = run_record(f"{tenant}-b", idempotency_key="k")
    await store.create_run(other_tenant)  # same key, other tenant: a different run
    await store.create_run(run_record(tenant))  # many runs without a key
    await store.create_run(run_record(tenant))
    assert await store.find_by_idempotency_key(tenant, "k") == first
    assert await store.find_by_idempotency_key(f"{tenant}-b", "k") == other_tenant
    assert await store.find_by_idempotency_key(tenant, "other") is None
    assert await store.find_by_idempotency_key(f"{tenant}-c", "k") is None


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"status": "paused"}, "status"),
        ({"run_id": "someone-else/r0123456789abcdefghij"}, "tenant"),
    ],
)
async def test_malformed_records_are_refused(
    store: EventStore, tenant: str, overrides: dict[str, str], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        await store.create_run(run_record(tenant, **overrides))


async def test_list_runs_newest_first_per_tenant(store: EventStore, tenant: str) -> None:
    stamps = ["2030-01-01T00:00:00.000Z", "2030-01-03T00:00:00.000Z", "2030-01-02T00:00:00.000Z"]
    records = [run_record(tenant, created_at=s, updated_at=s) for s in stamps]
    for record in records:
        await store.create_run(record)
    await store.create_run(run_record(f"{tenant}-other"))
    listed = await store.list_runs(tenant=tenant)
    assert listed == [records[1], records[2], records[0]]
    assert await store.list_runs(tenant=tenant, limit=2) == [records[1], records[2]]
    with pytest.raises(ValueError, match="limit"):
        await store.list_runs(limit=0)


async def test_list_runs_same_millisecond_keeps_creation_order(
    store: EventStore, tenant: str
) -> None:
    same = "2031-05-05T05:05:05.005Z"
    records = [run_record(tenant, created_at=same, updated_at=same) for _ in range(5)]
    for record in records:
        await store.create_run(record)
    assert await store.list_runs(tenant=tenant) == records[::-1]


async def test_list_runs_of_all_tenants(fresh_store_url: str) -> None:
    async with await EventStore.open(fresh_store_url) as store:
        older = run_record("a", created_at="2030-01-01T00:00:00.000Z")
        newer = run_record("b", created_at="2030-02-01T00:00:00.000Z")
        for record in (older, newer):
            await store.create_run(record)
        assert await store.list_runs() == [newer, older]


async def test_set_status_records_summary_and_error(store: EventStore, make_run: MakeRun) -> None:
    run = await make_run()
    await store.set_status(run.run_id, "running")
    running = await store.get_run(run.run_id)
    assert running is not None
    assert (running.status, running.summary, running.terminal) == ("running", None, False)
    assert running.updated_at >= run.updated_at
    summary = {"suiteId": run.suite_id, "aggregateScore": 0.75, "passed": True}
    await store.set_status(run.run_id, "completed", summary=summary)
    done = await store.get_run(run.run_id)
    assert done is not None
    expected = dataclasses.replace(
        running, status="completed", summary=summary, updated_at=done.updated_at
    )
    assert done == expected
    assert done.terminal


async def test_terminal_status_is_final(store: EventStore, make_run: MakeRun) -> None:
    run = await make_run()
    error = {"code": "internal_error", "message": "boom"}
    await store.set_status(run.run_id, "failed", error=error)
    for status in ("running", "cancelling", "completed", "cancelled"):
        with pytest.raises(RunTerminalError, match="failed"):
            await store.set_status(run.run_id, status)
    better = {"code": "internal_error", "message": "boom, explained"}
    await store.set_status(run.run_id, "failed", error=better)  # same status: may refine
    stored = await store.get_run(run.run_id)
    assert stored is not None
    assert (stored.status, stored.error) == ("failed", better)


async def test_set_status_rejects_unknown_runs_and_statuses(
    store: EventStore, make_run: MakeRun, tenant: str
) -> None:
    run = await make_run()
    with pytest.raises(UnknownRunError):
        await store.set_status(f"{tenant}/r-missing-000000000000", "running")
    with pytest.raises(ValueError, match="waiting-input"):
        await store.set_status(run.run_id, "waiting-input")


async def test_mark_interrupted_fails_every_unfinished_run(fresh_store_url: str) -> None:
    async with await EventStore.open(fresh_store_url) as store:
        by_status = {}
        for status in ("pending", "running", "cancelling", "completed", "failed", "cancelled"):
            record = run_record("acme")
            await store.create_run(record)
            if status != "pending":
                await store.set_status(record.run_id, status)
            by_status[status] = record.run_id
        interrupted = await store.mark_interrupted()
        unfinished = ("pending", "running", "cancelling")
        assert interrupted == sorted(by_status[s] for s in unfinished)
        for status, run_id in by_status.items():
            stored = await store.get_run(run_id)
            assert stored is not None
            if status in unfinished:
                assert stored.status == "failed"
                assert stored.error is not None
                assert stored.error["code"] == INTERRUPTED_ERROR_CODE
                assert stored.error["message"]
            else:
                assert stored.status == status
                assert stored.error is None
        assert await store.mark_interrupted() == []


async def test_appends_continue_after_a_terminal_status(
    store: EventStore, make_run: MakeRun
) -> None:
    """The run.completed event may be appended after the status flips (the engine's order)."""
    run = await make_run()
    await store.append(run.run_id, "x-test.tick", {})
    await store.set_status(run.run_id, "completed", summary={})
    assert (await store.append(run.run_id, "run.completed", {"outputs": {}})).sequence == 1
