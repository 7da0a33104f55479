"""``mark_interrupted(request_key=...)``: fail only the unfinished runs whose request has a member.

The host passes ``"host"`` so that its start-up never fails a ``wopeval run`` of the CLI that is
executing in another process; without the argument every unfinished run is failed, as before.
"""

from __future__ import annotations

from tests.events.helpers import run_record
from wopeval.events.store import INTERRUPTED_ERROR_CODE, EventStore, RunRecord

HOST_REQUEST = {"agentId": "a", "host": {"bodySha256": "0" * 64}}
CLI_REQUEST = {"agentId": "a", "concurrency": 4}


async def _runs(store: EventStore) -> dict[str, RunRecord]:
    """One run per (request kind, status); keys like ``host/running``."""
    made: dict[str, RunRecord] = {}
    for kind, request in (("host", HOST_REQUEST), ("cli", CLI_REQUEST)):
        for status in ("pending", "running", "cancelling", "completed"):
            record = run_record("acme", request=request)
            await store.create_run(record)
            if status != "pending":
                await store.set_status(record.run_id, status)
            made[f"{kind}/{status}"] = record
    return made


async def test_mark_interrupted_with_request_key_fails_only_those_runs(
    fresh_store_url: str,
) -> None:
    async with await EventStore.open(fresh_store_url) as store:
        made = await _runs(store)
        interrupted = await store.mark_interrupted(request_key="host")
        after = {name: await store.get_run(record.run_id) for name, record in made.items()}
        again = await store.mark_interrupted(request_key="host")
    unfinished = ("pending", "running", "cancelling")
    assert interrupted == sorted(made[f"host/{s}"].run_id for s in unfinished)
    assert again == []
    for name, stored in after.items():
        assert stored is not None
        kind, status = name.split("/")
        if kind == "host" and status in unfinished:
            assert stored.status == "failed"
            assert stored.error is not None
            assert stored.error["code"] == INTERRUPTED_ERROR_CODE
        else:  # the CLI's runs, and finished runs, keep their status and have no error
            assert stored.status == status
            assert stored.error is None


async def test_mark_interrupted_without_request_key_still_fails_every_unfinished_run(
    fresh_store_url: str,
) -> None:
    async with await EventStore.open(fresh_store_url) as store:
        made = await _runs(store)
        interrupted = await store.mark_interrupted()
    expected = [r.run_id for name, r in made.items() if not name.endswith("/completed")]
    assert interrupted == sorted(expected)


async def test_mark_interrupted_with_request_key_handles_many_runs(fresh_store_url: str) -> None:
    """More matching runs than one bounded ``IN`` list holds: all are failed, none twice."""
    async with await EventStore.open(fresh_store_url) as store:
        ids = []
        for index in range(1203):
            record = run_record("acme", request=HOST_REQUEST if index % 3 else CLI_REQUEST)
            await store.create_run(record)
            if index % 3:
                ids.append(record.run_id)
        interrupted = await store.mark_interrupted(request_key="host")
        left = [r for r in await store.list_runs(limit=2000) if r.status == "pending"]
    assert interrupted == sorted(ids)
    assert len(left) == 1203 - len(ids)
    assert all("host" not in r.request for r in left)
