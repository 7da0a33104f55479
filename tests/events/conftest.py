"""Fixtures for the event-store tests.

``store_url``/``store`` (from ``tests/conftest.py``) share one PostgreSQL database per session;
tests that need a pristine database (migrations, start-up races, store-wide queries) use
``fresh_store_url``, which creates a PostgreSQL database for the one test and drops it after.
An unreachable PostgreSQL server fails these tests loudly; it never skips them.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import WORKER, pg_admin, pg_create, pg_url
from tests.events.helpers import MakeRun, run_record
from wopeval.events.store import EventStore, RunRecord


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
async def fresh_store_url(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    """A URL to an empty database: a new SQLite file, or a new PostgreSQL database."""
    if request.param == "sqlite":
        yield str(tmp_path / "fresh.db")
        return
    name = f"wopeval_test_{WORKER}_{secrets.token_hex(6)}"
    await pg_create(name)
    try:
        yield pg_url(name)
    finally:
        await pg_admin(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def tenant() -> str:
    """A tenant no other test uses, so tests can share one database."""
    return f"t-{secrets.token_hex(6)}"


@pytest.fixture
def make_run(store: EventStore, tenant: str) -> MakeRun:
    """Create and store a run in this test's tenant (or ``tenant=...``)."""

    async def make(**overrides: Any) -> RunRecord:
        record = run_record(**{"tenant": tenant, **overrides})
        await store.create_run(record)
        return record

    return make
