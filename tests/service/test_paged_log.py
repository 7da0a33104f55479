"""The summary is built from the log read in pages, never all of it at once (issue 13 §2)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.engine.helpers import make_suite, run_suite, scripted_task
from wopeval.events.store import EventStore
from wopeval.service import runs as service_runs

OK = {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}}


async def test_regrade_reads_the_log_in_pages(
    store: EventStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    tasks = [scripted_task(f"t{i}", {"output": "ok" if i else "no"}, OK) for i in range(4)]
    ran = await run_suite(store, make_suite(tasks, trials={"count": 2}))
    limits: list[Any] = []
    real = store.events

    async def spy(run_id: str, after: int = -1, limit: int | None = None) -> Any:
        limits.append(limit)
        return await real(run_id, after, limit)

    monkeypatch.setattr(service_runs, "LOG_PAGE", 3)
    monkeypatch.setattr(store, "events", spy)
    regraded = await service_runs.regrade(store, ran.run_id)
    assert regraded.reproduces_stored
    assert len(limits) == len(ran.events) // 3 + 1 + (len(ran.events) % 3 > 0)
    assert set(limits) == {3}
