"""Durability: kill a writing process; every acknowledged event must be there, in order."""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path

import pytest

from tests.events.helpers import run_record
from wopeval.events.store import EventStore

WRITER = Path(__file__).with_name("crash_writer.py")


async def _acknowledged_until_killed(url: str, run_id: str, at_least: int) -> dict[int, str]:
    """Run the writer, SIGKILL it after ``at_least`` acknowledgements; return them all."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(WRITER),
        url,
        run_id,
        "8",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stdout is not None
    assert proc.stderr is not None
    acked: dict[int, str] = {}
    try:
        async with asyncio.timeout(60):
            while len(acked) < at_least:
                line = await proc.stdout.readline()
                if not line:
                    error = (await proc.stderr.read()).decode()
                    pytest.fail(f"the writer died before {at_least} appends:\n{error}")
                sequence, event_id = line.decode().split()
                acked[int(sequence)] = event_id
    finally:
        if proc.returncode is None:
            proc.send_signal(signal.SIGKILL)
        rest, _ = await proc.communicate()
    for text in rest.decode().splitlines():  # acknowledged before the kill, still in the pipe
        sequence, _, event_id = text.partition(" ")
        if event_id:
            acked[int(sequence)] = event_id
    assert proc.returncode == -signal.SIGKILL
    return acked


async def test_a_killed_writer_loses_no_acknowledged_event(store_url: str, tenant: str) -> None:
    record = run_record(tenant)
    async with await EventStore.open(store_url) as store:
        await store.create_run(record)
    acked = await _acknowledged_until_killed(store_url, record.run_id, at_least=400)
    async with await EventStore.open(store_url) as store:
        stored = await store.events(record.run_id)
        assert [e.sequence for e in stored] == list(range(len(stored)))
        by_sequence = {e.sequence: e.eventId for e in stored}
        assert {seq: by_sequence.get(seq) for seq in acked} == acked
        resumed = await store.append(record.run_id, "x-test.tick", {"after": "crash"})
        assert resumed.sequence == len(stored)
