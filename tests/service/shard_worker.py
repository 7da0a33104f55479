"""A real shard run in its own process, for the crash test to kill with SIGKILL.

``python -m tests.service.shard_worker STORE_URL GROUP INDEX COUNT`` creates shard
``INDEX/COUNT`` of :func:`tests.service.crash_worker.crash_suite` (fixtures only) through the
run service, prints its id, then executes it.
"""

from __future__ import annotations

import sys

import anyio

from tests.service.crash_worker import AGENT, crash_suite
from wopeval.engine.registry import Registry
from wopeval.engine.run import RunHandle, RunSettings
from wopeval.events.store import EventStore
from wopeval.service.runs import RunService
from wopeval.service.shards import plan_shard


async def main(store_url: str, group: str, index: int, count: int) -> None:
    store = await EventStore.open(store_url)
    service = RunService(store, Registry())  # fixtures only: no live tool to register
    plan = await service.plan(crash_suite(False), AGENT, RunSettings(concurrency=3))
    plan = plan_shard(plan, index, count, group)
    record = await service.create(plan)
    print(record.run_id, flush=True)
    await service.execute(plan, RunHandle(record.run_id))
    await store.close()


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
