"""A run's summary is folded as its events are committed (wopeval.grading.live), not read back:
the same summary ``wopeval grade`` computes from the stored log (invariant 1), on both stores;
and when the log holds what the fold did not see, the log is read back instead."""

from __future__ import annotations

from typing import Any

import pytest

from tests.engine.helpers import make_suite, scripted_task
from wopeval.engine.registry import SCRIPTED_AGENT_ID, Registry
from wopeval.engine.run import RunHandle, RunSettings
from wopeval.events.store import EventStore
from wopeval.grading.detail import run_detail
from wopeval.service.runs import (
    RunService,
    create_run_record,
    execute,
    grading_options,
    regrade,
)
from wopeval.wire.events import RunStarted

GOLDEN = {"kind": "golden", "match": {"strategy": "exact", "value": "done"}}
CALLS = [{"tool": "kb:search", "args": {"q": "x"}}, {"tool": "kb:get", "args": {"id": 1}}]
FIXTURES = {
    "onMiss": "fail",
    "toolResponses": [{"tool": "kb:search", "response": [1]}, {"tool": "kb:get", "response": {}}],
}
SUITE = make_suite(
    [
        scripted_task("ok", {"calls": CALLS, "output": "done"}, GOLDEN, FIXTURES),
        scripted_task("wrong", {"calls": CALLS[:1], "output": "nope"}, GOLDEN, FIXTURES),
        scripted_task("miss", {"calls": [{"tool": "kb:other"}], "output": "done"}, GOLDEN,
                      FIXTURES),
    ],
    trials={"count": 4},
)  # fmt: skip


class CountingReads:
    """Counts the store's log reads (``events``, and ``logged_events``: grading's) while the
    run executes."""

    def __init__(self, store: EventStore, monkeypatch: pytest.MonkeyPatch) -> None:
        self.pages = 0
        for name in ("events", "logged_events"):
            monkeypatch.setattr(store, name, self._counting(getattr(store, name)))

    def _counting(self, original: Any) -> Any:
        async def read(*args: Any, **kwargs: Any) -> Any:
            self.pages += 1
            return await original(*args, **kwargs)

        return read


async def test_rfc0244_a_run_is_summarised_live_as_grade_reproduces(
    store: EventStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads = CountingReads(store, monkeypatch)
    settings = RunSettings(concurrency=3)
    record = await create_run_record(store, SUITE, SCRIPTED_AGENT_ID, settings)
    summary = await execute(
        store, RunHandle(record.run_id), SUITE, SCRIPTED_AGENT_ID, Registry(), settings
    )
    assert summary is not None
    assert not summary.passed
    assert [t.passed for t in summary.tasks] == [True, False, False]
    assert reads.pages == 0  # folded as committed: the log was never read back
    regraded = await regrade(store, record.run_id)
    assert reads.pages > 0
    assert regraded.reproduces_stored
    assert regraded.summary.to_json() == summary.to_json()


async def test_a_runs_detail_is_folded_live_as_run_detail_reads_it(
    store: EventStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads = CountingReads(store, monkeypatch)
    service = RunService(store, Registry())
    plan = await service.plan(SUITE, SCRIPTED_AGENT_ID, RunSettings(concurrency=3))
    record = await service.create(plan)
    summary, detail = await service.execute_detailed(plan, RunHandle(record.run_id))
    assert summary is not None
    assert detail is not None
    assert reads.pages == 0  # neither the summary nor the detail read the log back
    assert [t.passed for t in detail.tasks] == [True, False, False]
    assert {c.status for c in detail.tasks[2].cells} == {"fail-closed"}
    stored = await store.events(record.run_id)
    assert detail == run_detail(SUITE, stored, grading_options(plan.request()))


async def test_rfc0244_events_the_fold_did_not_see_make_the_run_read_its_log_back(
    store: EventStore, store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Another process appends to the run while it executes (here: a second store on the same
    # database, from a live tool): the fold sees a gap in the sequence and is not used.
    other = await EventStore.open(store_url)
    registry = Registry()
    run_ids: list[str] = []

    async def note(args: Any) -> Any:
        await other.append(run_ids[0], "x-test.note", {"from": "another writer"})
        return "noted"

    registry.register_tool("crm:note", note)
    suite = make_suite([scripted_task("t", {"calls": [{"tool": "crm:note"}], "output": "done"},
                                      GOLDEN)])  # fmt: skip
    reads = CountingReads(store, monkeypatch)
    try:
        record = await create_run_record(store, suite, SCRIPTED_AGENT_ID, RunSettings())
        run_ids.append(record.run_id)
        service = RunService(store, registry)
        plan = await service.plan(suite, SCRIPTED_AGENT_ID, RunSettings())
        summary, detail = await service.execute_detailed(plan, RunHandle(record.run_id))
    finally:
        await other.close()
    assert summary is not None
    assert summary.passed
    assert reads.pages > 0  # read back: the fold had not seen the other writer's event
    log = await store.events(record.run_id)
    assert any(e.type == "x-test.note" for e in log)
    assert (await regrade(store, record.run_id)).reproduces_stored
    assert detail == run_detail(suite, log, grading_options(plan.request()))  # read back


async def test_a_store_taps_one_receiver_a_run_and_untaps_it(store: EventStore) -> None:
    record = await create_run_record(store, SUITE, SCRIPTED_AGENT_ID, RunSettings())
    seen: list[int] = []
    untap = store.tap(record.run_id, lambda event: seen.append(event.sequence))
    with pytest.raises(ValueError, match="tapped already"):
        store.tap(record.run_id, lambda event: None)
    await store.append(record.run_id, "x-test.note", {})
    queued = [store.emit_later(record.run_id, _note()) for _ in range(3)]
    for item in queued:
        await item.committed()
    untap()
    await store.append(record.run_id, "x-test.note", {})
    assert seen == [0, 1, 2, 3]


def _note() -> RunStarted:
    return RunStarted(workflowId="core.test.evals.engine", transport="rest")
