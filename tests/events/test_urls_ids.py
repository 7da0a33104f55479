"""Store URL normalization, run/event id grammar (wire notes §1.2) and timestamps."""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wopeval.events.ids import (
    EVENT_ID_PATTERN,
    RUN_ID_PATTERN,
    new_event_id,
    new_run_id,
    utc_now,
)
from wopeval.events.urls import DEFAULT_STORE_URL, normalize_store_url, sqlite_path


@pytest.mark.parametrize(
    ("given_url", "expected"),
    [
        ("runs.db", "sqlite+aiosqlite:///runs.db"),
        ("/var/lib/wopeval/runs.db", "sqlite+aiosqlite:////var/lib/wopeval/runs.db"),
        ("sqlite:///runs.db", "sqlite+aiosqlite:///runs.db"),
        ("sqlite:////abs/runs.db", "sqlite+aiosqlite:////abs/runs.db"),
        ("sqlite+aiosqlite:///runs.db", "sqlite+aiosqlite:///runs.db"),
        ("postgresql://u:p@db:5432/w", "postgresql+asyncpg://u:p@db:5432/w"),
        ("postgres://u@db/w", "postgresql+asyncpg://u@db/w"),
        ("postgresql+asyncpg://u@db/w", "postgresql+asyncpg://u@db/w"),
        ("  runs.db  ", "sqlite+aiosqlite:///runs.db"),
    ],
)
def test_store_urls_are_normalized(given_url: str, expected: str) -> None:
    assert normalize_store_url(given_url) == expected


def test_home_is_expanded_in_a_plain_path() -> None:
    assert normalize_store_url("~/w.db") == "sqlite+aiosqlite:///" + os.path.expanduser("~/w.db")


def test_none_means_env_then_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("WOPEVAL_STORE", raising=False)
    assert normalize_store_url(None) == DEFAULT_STORE_URL
    assert sqlite_path(DEFAULT_STORE_URL) is not None
    assert str(sqlite_path(DEFAULT_STORE_URL)) == ".wopeval/wopeval.db"
    monkeypatch.setenv("WOPEVAL_STORE", "postgres://h/db")
    assert normalize_store_url(None) == "postgresql+asyncpg://h/db"
    monkeypatch.setenv("WOPEVAL_STORE", "")
    assert normalize_store_url(None) == DEFAULT_STORE_URL


@pytest.mark.parametrize(
    ("bad", "named"),
    [
        ("mysql://root:hunter2@db/w", "'mysql'"),
        ("postgresql+psycopg://u:hunter2@db/w", "'postgresql+psycopg'"),
        ("sqlite+pysqlite:///x.db", "'sqlite+pysqlite'"),
        ("file:///tmp/x.db", "'file'"),
    ],
)
def test_unsupported_schemes_are_named_without_secrets(bad: str, named: str) -> None:
    with pytest.raises(ValueError, match="scheme") as caught:
        normalize_store_url(bad)
    assert named in str(caught.value)
    assert "hunter2" not in str(caught.value)


@pytest.mark.parametrize("bad", ["", "   ", "sqlite://", "sqlite:///:memory:"])
def test_empty_and_in_memory_stores_are_refused(bad: str) -> None:
    with pytest.raises(ValueError, match=r"empty|in-memory"):
        normalize_store_url(bad)


@given(st.from_regex(r"\A[A-Za-z0-9._~-]{1,128}\Z"))
def test_run_ids_match_the_wire_grammar(tenant: str) -> None:
    run_id = new_run_id(tenant)
    assert re.fullmatch(RUN_ID_PATTERN, run_id)
    assert run_id.split("/")[0] == tenant


@pytest.mark.parametrize("tenant", ["", "a/b", "anon:x", "x" * 129, "sp ace", "ok\n"])
def test_bad_tenants_are_refused(tenant: str) -> None:
    with pytest.raises(ValueError, match="tenant"):
        new_run_id(tenant)


def test_ids_are_unique_and_sort_by_creation() -> None:
    event_ids = [new_event_id() for _ in range(20_000)]
    assert all(re.fullmatch(EVENT_ID_PATTERN, e) for e in event_ids[:100])
    assert len(set(event_ids)) == len(event_ids)
    assert event_ids == sorted(event_ids)
    run_ids = [new_run_id("acme") for _ in range(1000)]
    assert run_ids == sorted(run_ids)


def test_utc_now_is_iso_milliseconds_z() -> None:
    before = datetime.now(UTC)
    stamp = utc_now()
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", stamp)
    parsed = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    assert abs((parsed - before).total_seconds()) < 60


def test_a_store_url_is_shown_without_its_password() -> None:
    """Hints and errors name the store the user gave (a resume hint, a shard's merge hint, a
    store that cannot be reached), never its secret."""
    from wopeval.events.urls import shown_url

    assert shown_url("postgresql://u:s3cret@db:5432/evals") == "postgresql://u:***@db:5432/evals"
    assert shown_url("postgresql+asyncpg://u:p%40ss@db/e") == "postgresql+asyncpg://u:***@db/e"
    assert shown_url("postgresql://u@db/e") == "postgresql://u@db/e"
    assert shown_url("/tmp/store.db") == "/tmp/store.db"
    assert shown_url(None) is None
