"""The viewer's data on both stores: the grid agrees with the pure detail, pages are bounded."""

from __future__ import annotations

import secrets
from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from wopeval.engine.registry import Registry
from wopeval.engine.run import RunSettings
from wopeval.events.store import EventStore, RunRecord
from wopeval.grading.detail import run_detail
from wopeval.service.runs import RunService, grading_options
from wopeval.suite import load_suite, parse_suite
from wopeval.viewer import create_viewer_app
from wopeval.viewer.model import run_page, trial_page
from wopeval.viewer.queries import PAGE_SIZE, RunFilter, runs_page
from wopeval.wire.vocab import TRIAL_FAILED

DATA = Path(__file__).parent / "data"
SCRIPTED = "core.conformance.agents.scripted"


def _tenant() -> str:
    """A tenant of this test only (the PostgreSQL database is shared by the session)."""
    return f"t-{secrets.token_hex(6)}"


async def _run(store: EventStore, tenant: str) -> RunRecord:
    service = RunService(store, Registry(), None)
    plan = await service.plan(load_suite(DATA / "suite.yaml"), SCRIPTED, RunSettings(),
                              tenant=tenant)  # fmt: skip
    record, _ = await service.run(plan)
    found = await store.get_run(record.run_id)
    assert found is not None
    return found


def _detail_statuses(record: RunRecord, events: list) -> dict[str, list[str]]:  # type: ignore[type-arg]
    suite = parse_suite(record.suite_document, source="test")
    detail = run_detail(suite, events, grading_options(record.run_request))
    return {t.task_id: [c.status for c in t.cells] for t in detail.tasks}


async def test_the_grid_from_outcomes_agrees_with_the_pure_detail(store: EventStore) -> None:
    record = await _run(store, _tenant())
    page = await run_page(store, record)
    shown = {t.task_id: [c.status for c in t.cells] for t in page.tasks}
    assert shown == _detail_statuses(record, await store.events(record.run_id))
    assert shown["closed-miss"] == ["fail-closed"] * 3
    assert shown["refund-flow"] == ["pass", "fail", "pass"]
    assert [t.flaky for t in page.tasks] == [True, False, False]
    assert page.finished == 9
    # pass@1 is the mean per-trial pass rate over tasks: (2/3 + 1 + 0) / 3
    assert page.suite_curve[0][1] == pytest.approx(5 / 9)
    # The number the verdict reads (RFC 0246) is the pure detail's gating aggregate.
    suite = parse_suite(record.suite_document, source="test")
    events = await store.events(record.run_id)
    detail = run_detail(suite, events, grading_options(record.run_request))
    assert page.gating_aggregate == pytest.approx(detail.gating_aggregate)


async def test_a_log_without_reasons_is_graded_in_full(store: EventStore) -> None:
    """An imported log carries no wopeval.trial-failed: the grid and the trial page still say
    why, from the same pure grading."""
    source = await _run(store, _tenant())
    copy = replace(source, run_id=f"{source.tenant}/rcopy1", idempotency_key=None)
    await store.create_run(copy)
    for event in await store.events(source.run_id):
        if event.type != TRIAL_FAILED:
            await store.append(
                copy.run_id,
                event.type,
                event.payload,
                event_id=event.eventId,
                causation_id=event.causationId,
                timestamp=event.timestamp,
            )
    events = await store.events(copy.run_id)
    assert not any(e.type == TRIAL_FAILED for e in events)
    page = await run_page(store, copy)
    shown = {t.task_id: [c.status for c in t.cells] for t in page.tasks}
    assert shown == _detail_statuses(copy, events)
    assert shown["refund-flow"] == ["pass", "fail", "pass"]
    trial = await trial_page(store, copy, "refund-flow", 1)
    assert trial is not None
    assert trial.reason is not None
    assert trial.reason.kind == "trajectory"
    assert trial.status == "fail"


async def test_runs_page_is_paged_filtered_and_of_one_tenant(store: EventStore) -> None:
    acme = _tenant()
    first = await _run(store, acme)
    other = await _run(store, _tenant())
    for i in range(PAGE_SIZE + 5):
        agent = "agent.b" if i % 2 else first.agent_id
        run_id = f"{acme}/rmany{i:024d}"
        await store.create_run(replace(first, run_id=run_id, idempotency_key=None, agent_id=agent))
    page1 = await runs_page(store, acme, RunFilter())
    assert page1.total == PAGE_SIZE + 6
    assert len(page1.rows) == PAGE_SIZE
    assert page1.pages == 2
    page2 = await runs_page(store, acme, RunFilter(page=2))
    assert len(page2.rows) == 6
    ids = [r.run_id for r in page1.rows + page2.rows]
    assert len(set(ids)) == len(ids)
    assert other.run_id not in ids
    assert [r.created_at for r in page1.rows] == sorted((r.created_at for r in page1.rows),
                                                        reverse=True)  # fmt: skip
    by_agent = await runs_page(store, acme, RunFilter(agent="agent.b"))
    assert by_agent.total == (PAGE_SIZE + 5) // 2
    searched = await runs_page(store, acme, RunFilter(q="rmany000000000000000000000007"))
    assert [r.run_id for r in searched.rows] == [f"{acme}/rmany000000000000000000000007"]
    assert (await runs_page(store, acme, RunFilter(q="100%_"))).total == 0  # LIKE escaped
    assert (await runs_page(store, None, RunFilter(q=first.run_id))).total == 1  # every tenant
    assert (await runs_page(store, None, RunFilter(q=other.run_id))).total == 1
    assert set(page1.agents) == {first.agent_id, "agent.b"}


async def test_local_viewer_app_serves_every_page(store: EventStore) -> None:
    record = await _run(store, _tenant())
    app = create_viewer_app(store=store)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://view") as client:
        for path, params in [
            ("/", {}),
            ("/run", {"id": record.run_id}),
            ("/trial", {"run": record.run_id, "task": "refund-flow", "i": "1"}),
            ("/compare", {"base": record.run_id, "cand": record.run_id}),
        ]:
            answer = await client.get(path, params=params)
            assert answer.status_code == 200, (path, answer.text[:300])
            assert '<script src="/static/viewer.js"></script>' in answer.text
        for path, params in [("/run", {"id": "acme/nope"}), ("/trial", {"run": record.run_id,
                             "task": "refund-flow", "i": "9"})]:  # fmt: skip
            assert (await client.get(path, params=params)).status_code == 404
        params = {"base": record.run_id, "cand": record.run_id, "alpha": "2"}
        bad = await client.get("/compare", params=params)
        assert bad.status_code == 400
        assert "alpha" in bad.text
        script = await client.get("/static/viewer.js")
        assert script.status_code == 200
        assert "EventSource" in script.text


async def test_the_runs_page_decides_a_lower_bound_gate_with_the_suites_pass_score(
    store: EventStore,
) -> None:
    """The viewer's suite: scores 1, 1, 0 over three tasks at passScore 0.5. The suite gate
    passes; lower-bound does not (2 of 3 tasks' worth: Clopper-Pearson's low 0.094), and the
    runs page says so, having read that run's suite for its passScore."""
    tenant = _tenant()
    service = RunService(store, Registry(), None)
    for gate in ("suite", "lower-bound"):
        plan = await service.plan(load_suite(DATA / "suite.yaml"), SCRIPTED,
                                  RunSettings(gate=gate), tenant=tenant)  # fmt: skip
        await service.run(plan)
    rows = {row.request.get("gate", "suite") if row.request else "?": row
            for row in (await runs_page(store, tenant, RunFilter())).rows}  # fmt: skip
    point, bound = rows["suite"].verdict, rows["lower-bound"].verdict
    assert point is not None
    assert point.passed
    assert bound is not None
    assert not bound.passed
    assert "lower bound 0.094" in bound.headline()
