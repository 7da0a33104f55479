"""Append to one run from several tasks until killed; print each acknowledged event.

Run by ``test_crash.py`` as ``python crash_writer.py <store-url> <run-id> <writers>``. A line
``<sequence> <eventId>`` is printed only after ``append`` returned, i.e. once the event is
acknowledged as durable.
"""

from __future__ import annotations

import asyncio
import sys

from wopeval.events.store import EventStore


async def main(url: str, run_id: str, writers: int) -> None:
    store = await EventStore.open(url)

    async def writer(worker: int) -> None:
        for i in range(10**9):
            event = await store.append(run_id, "x-test.tick", {"w": worker, "i": i})
            sys.stdout.write(f"{event.sequence} {event.eventId}\n")
            sys.stdout.flush()

    async with asyncio.TaskGroup() as group:
        for worker in range(writers):
            group.create_task(writer(worker))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
