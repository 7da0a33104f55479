"""A run's ending is one commit, and nothing follows it (issue 14, points 1 and 4).

A client that sees ``run.completed`` and asks for the summary at once must get it: the
terminal event, the terminal status and the summary are written in one transaction
(:meth:`EventStore.end_run`). And the store refuses any event after a run's terminal event,
whichever process appends it: its own check, the sequence's primary key and, as a backstop,
each INSERT's own check on SQLite (migration 5) and a trigger on PostgreSQL (migration 3),
which also refuses a writer that bypasses the store.
"""

from __future__ import annotations

import random

import anyio
import pytest
from sqlalchemy import text

from tests.engine.helpers import make_suite, scripted_task
from tests.host.helpers import running_host, segment
from wopeval.engine.registry import SCRIPTED_AGENT_ID, Registry
from wopeval.engine.run import RunHandle, RunSettings
from wopeval.events.store import EventStore, RunEndedError, RunTerminalError
from wopeval.service.runs import RunService
from wopeval.wire.events import TERMINAL_TYPES

GOLDEN = {"kind": "golden", "match": {"strategy": "exact", "value": "done"}}
SUITE = make_suite([scripted_task("t", {"output": "done"}, GOLDEN)])
ITERATIONS = 30


async def _watch_end(store: EventStore, run_id: str, rng: random.Random) -> str:
    """Wait for the terminal event, then read the run at once; return its status."""
    cursor = -1
    with anyio.fail_after(30):
        while True:
            for event in await store.wait_for_events(run_id, cursor, 5.0):
                cursor = event.sequence
                if event.type in TERMINAL_TYPES:
                    for _ in range(rng.randrange(3)):  # seeded: read at varying moments
                        await anyio.lowlevel.checkpoint()
                    record = await store.get_run(run_id)
                    assert record is not None
                    assert record.summary is not None or event.type != "run.completed"
                    return record.status


async def test_summary_is_there_when_run_completed_is_seen(store: EventStore) -> None:
    service = RunService(store, Registry())
    for seed in range(ITERATIONS):
        rng = random.Random(seed)
        plan = await service.plan(SUITE, SCRIPTED_AGENT_ID, RunSettings())
        record = await service.create(plan)
        seen: list[str] = []

        async def watch(
            run_id: str = record.run_id, rng: random.Random = rng, seen: list[str] = seen
        ) -> None:
            seen.append(await _watch_end(store, run_id, rng))

        async with anyio.create_task_group() as group:
            group.start_soon(watch)
            await anyio.lowlevel.checkpoint()
            await service.execute(plan, RunHandle(record.run_id))
        assert seen == ["completed"], f"seed {seed}"


async def test_the_host_answers_the_summary_right_after_run_completed(store_url: str) -> None:
    async with running_host(store_url) as host:
        store = host.state.store
        for seed in range(ITERATIONS // 3):
            rng = random.Random(seed)
            run_id = await host.run_id()
            assert await _watch_end(store, run_id, rng) == "completed"
            summary = await host.get(f"/runs/{segment(run_id)}/eval-summary")
            assert summary.status_code == 200, (seed, summary.text)


async def test_nothing_is_appended_after_the_terminal_event(store: EventStore) -> None:
    service = RunService(store, Registry())
    record, summary = await service.run(await service.plan(SUITE, SCRIPTED_AGENT_ID, RunSettings()))
    assert summary is not None
    count = len(await store.events(record.run_id))
    with pytest.raises(RunEndedError):
        await store.append(record.run_id, "x-test.late", {})
    with pytest.raises(RunTerminalError):
        await store.end_run(record.run_id, "run.failed", {"error": {"code": "x", "message": "m"}})
    # Another process (a fresh store: nothing cached) is refused by the database itself.
    url = store._engine.url.render_as_string(hide_password=False)
    async with await EventStore.open(url) as other:
        with pytest.raises(RunEndedError):
            await other.append(record.run_id, "x-test.late", {})
        if store._engine.dialect.name == "sqlite":
            return  # no trigger since migration 5: the store's statements check (events tests)
        async with other._engine.connect() as conn:  # past the store: the trigger refuses
            with pytest.raises(Exception, match="has ended"):
                await conn.execute(
                    text(
                        "INSERT INTO events (run_id, sequence, event_id, type, payload, "
                        "timestamp, schema_version) VALUES (:r, :s, 'e', 'x', '{}', 't', 1)"
                    ),
                    {"r": record.run_id, "s": count},
                )
    assert len(await store.events(record.run_id)) == count
    assert [e.type for e in await store.events(record.run_id)].count("run.completed") == 1


async def test_a_late_append_of_another_run_does_not_fail_the_batch(store: EventStore) -> None:
    service = RunService(store, Registry())
    ended, _ = await service.run(await service.plan(SUITE, SCRIPTED_AGENT_ID, RunSettings()))
    open_ = await service.create(await service.plan(SUITE, SCRIPTED_AGENT_ID, RunSettings()))
    results = await _gather(store, ended.run_id, open_.run_id)
    assert isinstance(results[0], RunEndedError)
    assert not isinstance(results[1], BaseException)


async def _gather(store: EventStore, *run_ids: str) -> list[object]:
    results: list[object] = [None] * len(run_ids)

    async def one(index: int, run_id: str) -> None:
        try:
            results[index] = await store.append(run_id, "x-test.batch", {})
        except Exception as exc:
            results[index] = exc

    async with anyio.create_task_group() as group:
        for index, run_id in enumerate(run_ids):
            group.start_soon(one, index, run_id)
    return results
