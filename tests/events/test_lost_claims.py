"""A process whose claim lapsed and was taken over stops writing (RFC 0244 §B trials: each
(taskId, trialIndex) scored once, under resume): ``check_claims`` finds the run taken, the
store then refuses every write to it, its end is refused even before that check (the terminal
update is on the owner too), and a run executing under ``holding_runs`` is stopped, with no
terminal event of its own, and told whom it lost the run to (both stores).

The taken-over holder here is "on another machine" (its owner id names another host), the one
case the lease decides: on this machine a live holder keeps its run whatever its lease."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

import pytest

from tests.engine.helpers import make_suite
from tests.events.helpers import run_record
from wopeval.engine.registry import Registry
from wopeval.engine.run import RunHandle, RunSettings
from wopeval.events.owners import owner_id
from wopeval.events.records import ClaimLostError
from wopeval.events.store import EventStore
from wopeval.service import leases
from wopeval.service.leases import ClaimWatch, holding_runs
from wopeval.service.runs import RunService
from wopeval.wire.events import RunCompleted
from wopeval.wire.vocab import EVAL_SCORED, TERMINAL_TYPES

ELSEWHERE = "another-machine:12:77.1:0badcafe"


async def _claimed(url: str, owner: str, lease_seconds: float = 30.0) -> EventStore:
    store = await EventStore.open(url)
    store.claim_runs(owner, lease_seconds)
    return store


async def _types(store: EventStore, run_id: str) -> list[str]:
    return [event.type for event in await store.events(run_id)]


async def test_a_holder_told_its_run_was_taken_writes_no_more(store_url: str) -> None:
    holder = await _claimed(store_url, ELSEWHERE, lease_seconds=0.05)
    resumer = await _claimed(store_url, owner_id())
    try:
        record = run_record()
        await holder.create_run(record)
        await holder.append(record.run_id, "wopeval.note", {"n": 1})
        assert await holder.check_claims() == {}  # its own still
        await asyncio.sleep(0.1)  # its lease lapses (a blocked event loop, say)
        assert await resumer.take_over(record.run_id) is None
        assert await holder.check_claims() == {record.run_id: resumer.owner}
        with pytest.raises(ClaimLostError, match="taken over by another process"):
            await holder.append(record.run_id, "wopeval.note", {"n": 2})
        with pytest.raises(ClaimLostError):
            await holder.emit_end(record.run_id, RunCompleted(outputs={}))
        await resumer.append(record.run_id, "wopeval.note", {"n": 2})  # the resumer writes on
        await resumer.emit_end(record.run_id, RunCompleted(outputs={}))
        assert await _types(resumer, record.run_id) == ["wopeval.note"] * 2 + ["run.completed"]
    finally:
        await holder.close()
        await resumer.close()


async def test_a_holder_cannot_end_a_run_taken_over_before_it_checked(store_url: str) -> None:
    """The terminal event and status commit only on the owner's row: the stale holder's end
    is refused (and rolled back) even before a renewal told it."""
    holder = await _claimed(store_url, ELSEWHERE, lease_seconds=0.05)
    resumer = await _claimed(store_url, owner_id())
    try:
        record = run_record()
        await holder.create_run(record)
        await asyncio.sleep(0.1)
        assert await resumer.take_over(record.run_id) is None
        with pytest.raises(ClaimLostError, match=resumer.owner or "?"):
            await holder.emit_end(record.run_id, RunCompleted(outputs={}))
        assert await _types(resumer, record.run_id) == []  # nothing of it stayed
        stored = await resumer.get_run(record.run_id)
        assert stored is not None
        assert stored.status == "pending"
        assert stored.owner == resumer.owner
        await resumer.emit_end(record.run_id, RunCompleted(outputs={}))  # the owner's end
    finally:
        await holder.close()
        await resumer.close()


async def test_a_store_that_claims_nothing_is_not_fenced(store_url: str) -> None:
    library = await EventStore.open(store_url)
    try:
        record = run_record()
        await library.create_run(record)
        assert await library.check_claims() == {}
        await library.emit_end(record.run_id, RunCompleted(outputs={}))
    finally:
        await library.close()


TRIALS = 6


async def test_a_run_whose_claim_lapsed_is_stopped_and_told(
    store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``holding_runs`` + ``ClaimWatch``, as ``wopeval run`` uses them: the agent's second
    trial blocks the event loop past the lease, another process takes the run over; the
    holder stops within a renewal, writes no terminal event, and says whom it lost it to."""
    monkeypatch.setattr(leases, "owner_id", lambda: ELSEWHERE)  # the lease decides
    suite = make_suite(
        [{"taskId": "t", "input": {}, "expected": {"kind": "golden",
          "match": {"strategy": "exact", "value": "ok"}}}],
        trials={"count": TRIALS, "k": 1},
    )  # fmt: skip
    store = await EventStore.open(store_url)
    resumer = await _claimed(store_url, owner_id())
    calls: list[int] = []
    run: dict[str, Any] = {}
    refused: list[str | None] = []

    def take_over_elsewhere() -> None:  # another process, while the holder's loop is blocked
        async def take() -> None:
            other = await _claimed(store_url, resumer.owner or "")
            try:
                refused.append(await other.take_over(run["id"]))
            finally:
                await other.close()

        time.sleep(0.45)  # past the 0.3 s lease, which no renewal extended
        asyncio.run(take())

    async def agent(task_input: Any, ctx: Any) -> Any:
        calls.append(ctx.trial_index)
        if len(calls) == 2:
            taker = threading.Thread(target=take_over_elsewhere)
            taker.start()
            taker.join()  # the loop blocked meanwhile: no renewal runs
            assert refused == [None]
        await asyncio.sleep(0.05)
        return "ok"

    registry = Registry()
    registry.register_agent("test.blocking", agent)
    service = RunService(store, registry)
    claims = ClaimWatch()
    try:
        async with holding_runs(store, 0.3, on_lost=claims):
            plan = await service.plan(suite, "test.blocking", RunSettings(concurrency=1))
            record = await service.create(plan)
            run["id"] = record.run_id
            handle = RunHandle(record.run_id)
            claims.watch(handle)
            started = time.monotonic()
            try:
                summary = await service.execute(plan, handle)
            except ClaimLostError:
                summary = None
            stopped_after = time.monotonic() - started
        assert summary is None
        assert claims.lost == {record.run_id: resumer.owner}
        with pytest.raises(ClaimLostError, match="taken over by another process"):
            claims.check(record.run_id)
        assert stopped_after < 0.45 + 1.0  # the block, then at most a renewal or so
        assert len(calls) < TRIALS  # it stopped
        types = await _types(resumer, record.run_id)
        assert not TERMINAL_TYPES & set(types)  # its end is the resumer's to write
        assert types.count(EVAL_SCORED) <= 3  # the trial before, the one it blocked in, one more
        assert (await resumer.claim_of(record.run_id))[0] == resumer.owner  # not released
    finally:
        await store.close()
        await resumer.close()
