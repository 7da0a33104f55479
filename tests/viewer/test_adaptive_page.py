"""The run page of an adaptive run (``x-wopeval-adaptive``): each task's grid holds the trials
its test ran (no "missing" trial past the stop), its curves are over those trials, and the page's
grid agrees with the pure detail."""

from __future__ import annotations

import secrets

import pytest

from wopeval.engine.registry import Registry
from wopeval.engine.run import RunSettings
from wopeval.events.store import EventStore
from wopeval.grading.detail import run_detail
from wopeval.grading.stats import pass_at_k
from wopeval.service.runs import RunService, grading_options
from wopeval.suite import parse_suite
from wopeval.viewer.model import run_page

SCRIPTED = "core.conformance.agents.scripted"
OK = {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}}


async def test_adaptive_run_page_shows_the_trials_run(store: EventStore) -> None:
    suite = parse_suite({
        "suiteId": "core.acme.evals.sequential", "version": "1.0.0", "modes": ["golden"],
        "tasks": [{"taskId": "pass", "input": {"output": "ok"}, "expected": OK},
                  {"taskId": "fail", "input": {"output": "no"}, "expected": OK}],
        "trials": {"count": 20, "k": 1}, "thresholds": {"passScore": 0.8},
        "x-wopeval-adaptive": {"rule": "sprt", "alpha": 0.05, "minTrials": 1},
    })  # fmt: skip
    service = RunService(store, Registry(), None)
    plan = await service.plan(suite, SCRIPTED, RunSettings(), tenant=f"t-{secrets.token_hex(6)}")
    record, _ = await service.run(plan)
    found = await store.get_run(record.run_id)
    assert found is not None
    page = await run_page(store, found)
    shown = {t.task_id: [c.status for c in t.cells] for t in page.tasks}
    assert shown == {"pass": ["pass"] * 12, "fail": ["fail"] * 3}
    detail = run_detail(
        suite, await store.events(record.run_id), grading_options(found.run_request)
    )
    assert shown == {t.task_id: [c.status for c in t.cells] for t in detail.tasks}
    rows = {t.task_id: t for t in page.tasks}
    assert len(rows["pass"].curve) == 12  # pass@k for k = 1..12, the trials run
    assert len(rows["fail"].curve) == 3
    assert len(page.suite_curve) == 3  # k up to the fewest trials any task ran
    # pass@1 over tasks: (12/12 + 0/3) / 2
    assert page.suite_curve[0][1] == pytest.approx(0.5)
    assert page.suite_curve[2][1] == pytest.approx(float(pass_at_k(12, 12, 3) + 0) / 2)
    assert page.gating_aggregate == pytest.approx(detail.gating_aggregate)
