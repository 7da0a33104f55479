"""Stored logs stay readable: a run written at schema version 1 reads back unchanged today.

``golden/log_v1.json`` holds the raw rows schema version 1 stored and what reading them must
give. The test builds a version-1 database, inserts those rows, then opens the store (which
applies every later migration) and reads the run and its events.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import column, insert, table

from wopeval.events.connections import create_store_engine
from wopeval.events.store import EventStore, RunEndedError, RunRecord
from wopeval.events.tables import MIGRATIONS, apply_migrations
from wopeval.events.urls import normalize_store_url
from wopeval.wire.events import TERMINAL_TYPES

GOLDEN = Path(__file__).with_name("golden") / "log_v1.json"


async def _load_version_1(url: str, rows: dict[str, list[dict[str, Any]]]) -> None:
    engine = create_store_engine(normalize_store_url(url))
    try:
        async with engine.connect() as conn:
            assert await apply_migrations(conn, MIGRATIONS[:1]) == [1]
            for name in ("runs", "events"):  # lightweight tables: independent of today's schema
                target = table(name, *(column(key) for key in rows[name][0]))
                await conn.execute(insert(target), rows[name])
    finally:
        await engine.dispose()


async def test_a_version_1_log_reads_back_unchanged(fresh_store_url: str) -> None:
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    assert golden["schemaVersion"] == 1
    await _load_version_1(fresh_store_url, golden["rows"])
    async with await EventStore.open(fresh_store_url) as store:
        expected_run = RunRecord(**golden["expected"]["run"])
        assert await store.get_run(expected_run.run_id) == expected_run
        events = await store.events(expected_run.run_id)
        assert [event.to_wire() for event in events] == golden["expected"]["events"]
        assert events[-1].type in TERMINAL_TYPES
        # Migration 3 marks the run ended at its terminal event: nothing more may follow.
        with pytest.raises(RunEndedError):
            await store.append(expected_run.run_id, "x-test.after-upgrade", {})
        assert len(await store.events(expected_run.run_id)) == len(events)
