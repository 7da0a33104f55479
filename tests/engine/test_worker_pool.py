"""Trials are pulled lazily by ``concurrency`` workers, never all spawned up front (issue 13)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.engine.helpers import make_suite, run_suite
from wopeval.engine import run as engine_run
from wopeval.engine.registry import Registry
from wopeval.engine.run import RunSettings
from wopeval.events.store import EventStore

OK = {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}}


async def test_workers_pull_trials_lazily(
    store: EventStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    pulled = 0
    at_first_call: list[int] = []
    real = engine_run.all_pairs

    def counting(suite: Any) -> Iterator[tuple[int, int]]:
        nonlocal pulled
        for pair in real(suite):
            pulled += 1
            yield pair

    async def agent(task_input: Any, ctx: Any) -> Any:
        if not at_first_call:
            at_first_call.append(pulled)
        return "ok"

    monkeypatch.setattr(engine_run, "all_pairs", counting)
    registry = Registry()
    registry.register_agent("test.instant", agent)
    suite = make_suite([{"taskId": "t", "input": {}, "expected": OK}], trials={"count": 300})
    ran = await run_suite(
        store, suite, agent_id="test.instant", registry=registry,
        settings=RunSettings(concurrency=4),
    )  # fmt: skip
    assert ran.done.passed
    assert at_first_call[0] <= 4  # one pair per worker in flight, not the whole plan
    assert pulled == 300
    assert len(ran.of_type("eval.scored")) == 300
