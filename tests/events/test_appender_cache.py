"""SQLite: the appender's page cache is bounded below SQLite's default (a run's peak memory)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.events.helpers import run_record
from wopeval.events.appends import APPENDER_CACHE_KIB, open_appender
from wopeval.events.store import EventStore


def test_open_appender_bounds_its_page_cache(tmp_path: Path) -> None:
    conn = open_appender(tmp_path / "a.db")
    try:
        assert conn.execute("PRAGMA cache_size").fetchone() == (-APPENDER_CACHE_KIB,)
        assert conn.execute("PRAGMA busy_timeout").fetchone() == (0,)
    finally:
        conn.close()
    assert 0 < APPENDER_CACHE_KIB < 2000  # below SQLite's default of 2,000 KiB


@pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)
async def test_the_stores_appender_is_the_bounded_one_and_appends(store_url: str) -> None:
    async with await EventStore.open(store_url) as store:
        record = run_record()
        await store.create_run(record)
        await store.append(record.run_id, "x-test.step", {})
        appender = store._appender
        assert appender is not None
        assert appender.execute("PRAGMA cache_size").fetchone() == (-APPENDER_CACHE_KIB,)
        assert store.appender_fallbacks == 0  # the append went through it
        events = await store.events(record.run_id)
        assert [e.type for e in events] == ["x-test.step"]
