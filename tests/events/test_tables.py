"""Recorded migrations, start-up races, the migrated shape, and the SQLite connection setup."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Connection, MetaData, inspect, text

from wopeval.events.connections import create_store_engine
from wopeval.events.store import EventStore
from wopeval.events.tables import MIGRATIONS, SchemaVersionError, apply_migrations, metadata
from wopeval.events.urls import normalize_store_url


async def _query(url: str, sql: str) -> list[Any]:
    engine = create_store_engine(normalize_store_url(url))
    try:
        async with engine.connect() as conn:
            return list((await conn.execute(text(sql))).all())
    finally:
        await engine.dispose()


async def test_migrations_are_recorded_once_and_idempotent(fresh_store_url: str) -> None:
    for _ in range(3):
        async with await EventStore.open(fresh_store_url):
            pass
    rows = await _query(fresh_store_url, "SELECT version, applied_at FROM schema_migrations")
    assert [row[0] for row in rows] == [m.version for m in MIGRATIONS]
    assert all(row[1].endswith("Z") for row in rows)
    engine = create_store_engine(normalize_store_url(fresh_store_url))
    try:
        async with engine.connect() as conn:
            assert await apply_migrations(conn) == []
    finally:
        await engine.dispose()


async def test_concurrent_startups_apply_each_migration_once(fresh_store_url: str) -> None:
    stores = await asyncio.gather(*(EventStore.open(fresh_store_url) for _ in range(6)))
    try:
        rows = await _query(fresh_store_url, "SELECT version FROM schema_migrations")
        assert sorted(row[0] for row in rows) == [m.version for m in MIGRATIONS]
    finally:
        await asyncio.gather(*(store.close() for store in stores))


async def test_sqlite_first_opens_of_a_new_file_race_cleanly(tmp_path: Path) -> None:
    """Switching a new file to WAL fails fast under contention; open must retry, not fail."""
    for round_ in range(12):
        url = str(tmp_path / f"race-{round_}.db")
        stores = await asyncio.gather(*(EventStore.open(url) for _ in range(8)))
        await asyncio.gather(*(store.close() for store in stores))
        rows = await _query(url, "PRAGMA journal_mode")
        assert rows[0][0] == "wal"


def _shape(conn: Connection, names: list[str]) -> dict[str, Any]:
    inspector = inspect(conn)
    return {
        name: (
            [(c["name"], c["nullable"]) for c in inspector.get_columns(name)],
            sorted(inspector.get_pk_constraint(name)["constrained_columns"]),
        )
        for name in names
    }


async def test_migrated_database_matches_the_live_tables(fresh_store_url: str) -> None:
    """The queries use ``schema.metadata``; it must equal what the migrations built."""
    async with await EventStore.open(fresh_store_url):
        pass
    names = sorted(metadata.tables)
    expected = {
        name: (
            [(c.name, c.nullable) for c in table.columns],
            sorted(c.name for c in table.primary_key.columns),
        )
        for name, table in metadata.tables.items()
    }
    engine = create_store_engine(normalize_store_url(fresh_store_url))
    try:
        async with engine.connect() as conn:
            assert await conn.run_sync(_shape, names) == expected
            reflected = MetaData()
            await conn.run_sync(reflected.reflect)
            assert set(reflected.tables) == set(names)
    finally:
        await engine.dispose()


async def test_a_newer_schema_is_refused(fresh_store_url: str) -> None:
    async with await EventStore.open(fresh_store_url):
        pass
    engine = create_store_engine(normalize_store_url(fresh_store_url))
    try:
        async with engine.connect() as conn:
            await conn.execute(
                text("INSERT INTO schema_migrations VALUES (999, '2099-01-01T00:00:00.000Z')")
            )
    finally:
        await engine.dispose()
    with pytest.raises(SchemaVersionError, match="999"):
        await EventStore.open(fresh_store_url)


async def test_sqlite_connections_get_the_pragmas(tmp_path: Path) -> None:
    url = normalize_store_url(str(tmp_path / "deep" / "er" / "w.db"))
    async with await EventStore.open(url):
        assert (tmp_path / "deep" / "er" / "w.db").is_file()
        engine = create_store_engine(url)
        try:
            async with engine.connect() as conn:
                got = {
                    pragma: (await conn.exec_driver_sql(f"PRAGMA {pragma}")).scalar()
                    for pragma in ("journal_mode", "synchronous", "foreign_keys", "busy_timeout")
                }
        finally:
            await engine.dispose()
    expected = {"journal_mode": "wal", "synchronous": 1, "foreign_keys": 1, "busy_timeout": 10000}
    assert got == expected


async def test_default_store_is_created_under_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("WOPEVAL_STORE", raising=False)
    async with await EventStore.open():
        pass
    assert (tmp_path / ".wopeval" / "wopeval.db").is_file()
