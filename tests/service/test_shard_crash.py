"""A shard killed with ``kill -9`` and resumed: the merge still grades to the unsharded summary.

Each seed runs shard 1 of 2 in a child process (:mod:`tests.service.shard_worker`), SIGKILLs it
after a random delay, resumes it through :meth:`RunService.resume` (which keeps to the shard's
slice), runs shard 0 here, and merges. Every planned pair is scored exactly once in the merged
log, and its summary equals an uninterrupted unsharded run's (latency aside: it is wall-clock
time here, from two processes), on SQLite and on PostgreSQL.
"""

from __future__ import annotations

import asyncio
import os
import random
import secrets
from collections import Counter
from pathlib import Path

import pytest

from tests.service.conftest import CleanRuns, Warm
from tests.service.crash_worker import AGENT, crash_suite, live_registry
from tests.service.test_resume_crash import _scored, _without_latency, kill_after_run_id
from wopeval.engine.run import RunHandle, RunSettings
from wopeval.events.store import EventStore
from wopeval.service.runs import RunService
from wopeval.service.shards import merge_shards, plan_shard
from wopeval.service.slices import ShardState
from wopeval.wire.request import ShardRequest

ROOT = Path(__file__).resolve().parents[2]


def _killed_shard(warm: Warm, store_url: str, group: str, delay: float) -> str:
    argv = ["tests.service.shard_worker", store_url, group, "1", "2"]
    return kill_after_run_id(warm, argv, delay)


@pytest.mark.parametrize("seed", range(3))
async def test_a_killed_and_resumed_shard_merges_to_the_unsharded_summary(
    store_url: str, seed: int, clean_runs: CleanRuns, warm: Warm
) -> None:
    group = f"crash-{secrets.token_hex(6)}"
    delay = random.Random(seed).uniform(0.05, 0.5)
    run_id = await asyncio.to_thread(_killed_shard, warm, store_url, group, delay)
    suite = crash_suite(False)
    async with await EventStore.open(store_url) as store:
        service = RunService(store, live_registry(Path(os.devnull)))
        record = await store.get_run(run_id)
        assert record is not None
        assert not record.terminal, "the shard finished before SIGKILL: lengthen its trials"
        _, resumed = await service.resume(run_id)
        assert resumed is not None
        shard = ShardRequest(group=group, index=1, count=2)
        own = {(suite.tasks[t].taskId, i) for t, i in ShardState(shard=shard).pending(suite)}
        assert _scored(await store.events(run_id)) == Counter(dict.fromkeys(own, 1))
        plan = await service.plan(suite, AGENT, RunSettings(concurrency=3))
        first = await service.create(plan_shard(plan, 0, 2, group))
        await service.execute(plan_shard(plan, 0, 2, group), RunHandle(first.run_id))
        merged = await merge_shards(service, [store], group)
        planned = {(t.taskId, i) for t in suite.tasks for i in range(3)}
        log = await store.events(merged.record.run_id)
        assert _scored(log) == Counter(dict.fromkeys(planned, 1))
        clean = await clean_runs.summary(False)
        assert _without_latency(merged.summary.to_wire()) == _without_latency(clean.to_wire())
        assert (await service.regrade(merged.record.run_id)).reproduces_stored
