"""The summary is built from the log read in pages, never all of it at once, and is the same
summary whatever the page size (SQLite and PostgreSQL)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.engine.helpers import make_suite, run_suite, scripted_task
from wopeval.engine.registry import SCRIPTED_AGENT_ID
from wopeval.engine.run import RunSettings
from wopeval.events.logged import MalformedEventError
from wopeval.events.store import EventStore
from wopeval.service import runs as service_runs
from wopeval.wire.summary import EvalSummary

OK = {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}}


async def test_regrade_reads_the_log_in_pages(
    store: EventStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    tasks = [scripted_task(f"t{i}", {"output": "ok" if i else "no"}, OK) for i in range(4)]
    ran = await run_suite(store, make_suite(tasks, trials={"count": 2}))
    limits: list[Any] = []
    real = store.logged_events

    async def spy(run_id: str, after: int = -1, limit: int | None = None) -> Any:
        limits.append(limit)
        return await real(run_id, after, limit)

    monkeypatch.setattr(service_runs, "LOG_PAGE", 3)
    monkeypatch.setattr(store, "logged_events", spy)
    regraded = await service_runs.regrade(store, ran.run_id)
    assert regraded.reproduces_stored
    assert len(limits) == len(ran.events) // 3 + 1 + (len(ran.events) % 3 > 0)
    assert set(limits) == {3}


FIXTURED = {
    "onMiss": "fail",
    "toolResponses": [{"tool": "kb:lookup", "response": {"ok": True}}],
}


@pytest.mark.parametrize("page", [1, 2, 7, 10_000])
async def test_regrade_is_the_stored_summary_byte_for_byte_at_every_page_size(
    store: EventStore, monkeypatch: pytest.MonkeyPatch, page: int
) -> None:
    # Interleaved trials (concurrency 4), a fixtured call, a failing task, a task with one
    # trial's fixture missed: folded from pages of 1, 2, 7 events or the whole log at once,
    # the summary is the stored one to the byte, and no page holds more than `page` events.
    call = {"tool": "kb:lookup", "args": {"q": 1}}
    miss = {"tool": "kb:other", "args": {}}
    tasks = [
        scripted_task("fixtured", {"calls": [call], "output": "ok"}, OK, FIXTURED),
        scripted_task("wrong", {"output": "no"}, OK),
        scripted_task("missed", {"calls": [call, miss], "output": "ok"}, OK, FIXTURED),
        scripted_task("plain", {"output": "ok"}, OK),
    ]
    suite = make_suite(tasks, trials={"count": 3})
    ran = await run_suite(store, suite, settings=RunSettings(concurrency=4))
    stored = await store.get_run(ran.run_id)
    assert stored is not None
    assert stored.summary is not None
    pages: list[tuple[int | None, int]] = []
    real = store.logged_events

    async def spy(run_id: str, after: int = -1, limit: int | None = None) -> Any:
        found = await real(run_id, after, limit)
        pages.append((limit, len(found)))
        return found

    monkeypatch.setattr(service_runs, "LOG_PAGE", page)
    monkeypatch.setattr(store, "logged_events", spy)
    regraded = await service_runs.regrade(store, ran.run_id)
    expected = EvalSummary.model_validate(stored.summary).to_json()
    assert regraded.summary.to_json() == expected
    assert {limit for limit, _ in pages} == {page}
    assert max(n for _, n in pages) == min(page, len(ran.events))
    assert sum(n for _, n in pages) == len(ran.events)  # a clean log: each event read once
    assert regraded.summary.tasks[2].fixtureMissCount == 3
    assert [t.passed for t in regraded.summary.tasks] == [True, False, False, True]


async def test_regrade_refuses_a_stored_payload_its_model_breaks_naming_the_event(
    store: EventStore,
) -> None:
    # The store writes any JSON payload it is given; grading validates each payload it reads,
    # so a trial's tool call stored without its callId fails the re-grade, naming that event.
    suite = make_suite([scripted_task("t", {"output": "ok"}, OK)])
    record = await service_runs.create_run_record(store, suite, SCRIPTED_AGENT_ID, RunSettings())
    started = {
        "invocationId": "inv-1",
        "agentId": SCRIPTED_AGENT_ID,
        "source": "run-api",
        "x-wopeval-taskId": "t",
        "x-wopeval-trialIndex": 0,
    }
    root = await store.append(record.run_id, "agent.invocation-started", started)
    broken = {"agentId": SCRIPTED_AGENT_ID, "toolName": "kb:a", "inputs": {}}
    bad = await store.append(record.run_id, "agent.tool-called", broken, causation_id=root.eventId)
    with pytest.raises(MalformedEventError, match=rf"event {bad.sequence} \(agent\.tool-called\)"):
        await service_runs.regrade(store, record.run_id)
