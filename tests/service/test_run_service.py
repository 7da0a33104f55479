"""The run service: one plan/create/execute/regrade path, one baseline rule, indexed look-ups."""

from __future__ import annotations

from typing import Any

import pytest

from tests.engine.helpers import make_suite, scripted_task
from wopeval import evaluate
from wopeval.engine.registry import AGENT_ENTRY_POINTS, SCRIPTED_AGENT_ID, Registry
from wopeval.engine.run import RunSettings
from wopeval.errors import RunNotFound, UserError
from wopeval.events.store import EventStore
from wopeval.service.runs import (
    BaselineUnusable,
    RunPlan,
    RunService,
    create_run_record,
    settings_of,
)
from wopeval.wire.request import HostRequest, RunRequest

GOLDEN = {"kind": "golden", "match": {"strategy": "exact", "value": "done"}}
SUITE = make_suite([scripted_task("t", {"output": "done"}, GOLDEN)])


async def test_0251_evaluate_refuses_an_unusable_baseline_before_any_trial(
    store: EventStore,
) -> None:
    calls: list[Any] = []

    async def agent(task_input: Any, ctx: Any) -> Any:
        calls.append(task_input)
        return "done"

    settings = RunSettings(baseline_run_id="local/r" + "0" * 26)
    before = len(await store.list_runs(limit=10_000))
    with pytest.raises(BaselineUnusable, match="baselineRunId"):
        await evaluate(SUITE, agent, store=store, settings=settings)
    assert calls == []  # no trial ran …
    assert len(await store.list_runs(limit=10_000)) == before  # … and no run was recorded


async def test_0251_one_baseline_rule_for_every_caller(store: EventStore) -> None:
    service = RunService(store, Registry())
    first = await evaluate(SUITE, SCRIPTED_AGENT_ID, store=store)
    other = make_suite([scripted_task("t", {"output": "done"}, GOLDEN)],
                       suiteId="core.test.evals.other")  # fmt: skip
    usable = RunSettings(baseline_run_id=first.run_id)
    plan = await service.plan(SUITE, SCRIPTED_AGENT_ID, usable)
    assert plan.settings.modes is not None
    assert "regression" in plan.settings.modes
    for suite, tenant in ((other, "local"), (SUITE, "acme")):  # another suite; another tenant
        with pytest.raises(BaselineUnusable):
            await service.plan(suite, SCRIPTED_AGENT_ID, usable, tenant=tenant)
    record, summary = await service.run(plan)
    assert summary is not None
    assert summary.regression is not None
    assert summary.regression.baselineRunId == first.run_id
    assert (await service.regrade(record.run_id)).reproduces_stored


async def test_plan_refuses_an_unknown_agent_and_a_missing_judge(store: EventStore) -> None:
    service = RunService(store, Registry())
    with pytest.raises(UserError, match="not registered"):
        await service.plan(SUITE, "no.such.agent", RunSettings())
    rubric = make_suite(
        [scripted_task("t", {"output": "x"}, {"kind": "rubric",
         "rubric": [{"criterion": "c", "weight": 1.0}]})], modes=["rubric"]
    )  # fmt: skip
    with pytest.raises(UserError, match="judge"):
        await service.plan(rubric, SCRIPTED_AGENT_ID, RunSettings())
    with pytest.raises(RunNotFound):
        await service.regrade("local/r" + "1" * 26)


async def test_the_stored_request_is_typed_and_round_trips(store: EventStore) -> None:
    settings = RunSettings(concurrency=3, tags=("nightly",), metadata={"sha": "abc"})
    host = HostRequest(bodySha256="f" * 64, scopeId="scope-1")
    record = await create_run_record(store, SUITE, SCRIPTED_AGENT_ID, settings, host=host)
    stored = await store.get_run(record.run_id)
    assert stored is not None
    request = stored.run_request
    assert isinstance(request, RunRequest)
    assert (request.concurrency, request.tags, request.host) == (3, ["nightly"], host)
    assert stored.scope_id == "scope-1"
    assert RunRequest.model_validate(request.to_stored()) == request


async def test_openwop_dedup_finds_an_active_run_older_than_the_newest_thousand(
    store: EventStore,
) -> None:
    """The dedup look-up is an indexed query, not a scan of the newest 1,000 runs."""
    held = await create_run_record(
        store, SUITE, SCRIPTED_AGENT_ID, RunSettings(), tenant="acme",
        host=HostRequest(bodySha256="0" * 64, scopeId="nightly"),
    )  # fmt: skip
    await store.set_status(held.run_id, "running")
    service = RunService(store, Registry())  # one registry: its entry points load once
    newer = RunPlan(SUITE, SCRIPTED_AGENT_ID, RunSettings(), "acme", None)
    for _ in range(1005):
        await service.create(newer)
    active = frozenset({"pending", "running"})
    found = await store.find_active_in_scope("acme", "nightly", active)
    assert found is not None
    assert found.run_id == held.run_id
    assert await store.find_active_in_scope("other", "nightly", active) is None
    await store.set_status(held.run_id, "completed", summary={})
    assert await store.find_active_in_scope("acme", "nightly", active) is None


def test_built_in_agents_come_from_the_entry_points() -> None:
    from importlib.metadata import entry_points

    names = {entry.name for entry in entry_points(group=AGENT_ENTRY_POINTS)}
    assert {SCRIPTED_AGENT_ID, "wopeval.examples.support"} <= names
    registry = Registry()
    assert all(registry.knows(name) for name in names)
    assert registry.resolve(SCRIPTED_AGENT_ID) is registry.resolve(SCRIPTED_AGENT_ID + ".sub")


def test_run_settings_replace_keeps_the_request_in_step() -> None:
    settings = RunSettings().model_copy(update={"trial_timeout_s": 2.5, "executor": "ray"})
    request = settings.to_request("a")
    assert (request.trial_timeout_s, request.executor) == (2.5, "ray")


def test_the_settings_a_stored_run_was_created_with_read_back_whole() -> None:
    # settings_of is the inverse of RunSettings.to_request: a resumed run keeps every setting,
    # the RFC 0252 fixtureRuns it echoes on eval.started included.
    settings = RunSettings(
        concurrency=3,
        trial_timeout_s=12.5,
        host_max_cost_usd=2.0,
        modes=["golden", "regression"],
        baseline_run_id="local/r" + "1" * 26,
        fixture_runs={"t": "local/r" + "2" * 26},
        regression_method="mcnemar",
        alpha=0.01,
        regression_verdict=False,
        owner={"principalId": "p-1"},
        tags=("nightly",),
        metadata={"git": "abc"},
        executor="ray",
    )
    assert settings_of(settings.to_request("core.test.agents.a")) == settings


async def test_a_run_dumps_its_suite_once_and_stores_that_document(
    store: EventStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Create, the request's digests and execution share one suite document (a 10⁴-task suite
    was dumped three times a run); what is stored is still the suite as written."""
    import wopeval.service.runs as runs_module
    import wopeval.suite.digest as digest_module
    from wopeval.suite import suite_to_document
    from wopeval.suite.digest import definition_digests

    dumps: list[int] = []

    def counting(suite: Any) -> dict[str, Any]:
        dumps.append(1)
        return suite_to_document(suite)

    monkeypatch.setattr(runs_module, "suite_to_document", counting)
    monkeypatch.setattr(digest_module, "suite_to_document", counting)
    service = RunService(store, Registry())
    plan = await service.plan(SUITE, SCRIPTED_AGENT_ID, RunSettings())
    record, summary = await service.run(plan)
    assert summary is not None
    assert summary.passedCount == 1
    assert len(dumps) == 1
    stored = await store.get_run(record.run_id)
    assert stored is not None
    assert stored.suite_document == suite_to_document(SUITE)
    assert stored.run_request.digests == definition_digests(SUITE)
