"""A failed SQLite open leaves no aiosqlite worker behind to die on a closed event loop.

The CLI exits at once on a bad ``--store``, closing its loop; aiosqlite's worker for the failed
connection must have finished by then, or it raises "Event loop is closed" in its thread (which
pytest reports against whichever test runs next, so it showed as a flaky test under load).
"""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from wopeval.events.connections import sqlite_workers
from wopeval.events.store import EventStore


def test_a_failed_sqlite_open_leaves_no_worker_to_die_on_a_closed_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    died: list[BaseException | None] = []
    monkeypatch.setattr(threading, "excepthook", lambda args: died.append(args.exc_value))
    before = sqlite_workers()
    for _ in range(10):
        with pytest.raises(Exception, match="unable to open database file"):
            asyncio.run(EventStore.open(str(tmp_path)))  # a directory is not a database
    for worker in sqlite_workers() - before:
        worker.join(timeout=10)
    assert died == []
    assert not sqlite_workers() - before
