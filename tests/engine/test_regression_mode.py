"""RFC 0244 §F regression mode on a run: the regression block and regressionVsBaseline."""

from __future__ import annotations

from typing import Any

from tests.engine.helpers import make_suite, run_suite, scripted_task
from wopeval.engine.agent import AgentContext
from wopeval.engine.registry import Registry
from wopeval.engine.run import RunSettings
from wopeval.events.store import EventStore
from wopeval.service.runs import regrade, usable_baseline
from wopeval.wire.events import EVAL_COMPLETED, EVAL_STARTED

OK = {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}}


def _suite(outputs: list[str]) -> Any:
    tasks = [scripted_task(f"t{i}", {"output": out}, OK) for i, out in enumerate(outputs)]
    return make_suite(tasks, modes=["golden", "regression"], trials={"count": 2})


async def test_0244_F_regression_run_reports_the_verdict_and_pairs_by_task(
    store: EventStore,
) -> None:
    suite = _suite(["ok"] * 12)
    baseline = await run_suite(store, suite)

    async def worse(task_input: Any, ctx: AgentContext) -> Any:  # the same tasks, a worse agent
        return "no"

    registry = Registry()
    registry.register_agent("test.worse", worse)
    settings = RunSettings(baseline_run_id=baseline.run_id, regression_method="sign-test")
    candidate = await run_suite(
        store, suite, agent_id="test.worse", registry=registry, settings=settings
    )
    regression = candidate.done.regression
    assert regression is not None
    assert regression.baselineRunId == baseline.run_id
    assert regression.pairedTaskCount == 12
    assert regression.method == "sign-test"
    assert regression.verdict == "regressed"
    assert regression.scoreDelta == candidate.done.aggregateScore - baseline.done.aggregateScore
    completed = candidate.of_type(EVAL_COMPLETED)[0].payload
    assert completed["regressionVsBaseline"] == regression.scoreDelta
    assert candidate.of_type(EVAL_STARTED)[0].payload["baselineRunId"] == baseline.run_id
    assert (await regrade(store, candidate.run_id)).reproduces_stored


async def test_0244_F_identical_runs_are_never_improved_or_regressed(store: EventStore) -> None:
    suite = _suite(["ok", "no", "ok", "ok", "no", "ok"])
    baseline = await run_suite(store, suite)
    for method in ("paired-bootstrap", "mcnemar", "sign-test", "paired-t"):
        settings = RunSettings(baseline_run_id=baseline.run_id, regression_method=method)
        again = await run_suite(store, suite, settings=settings)
        assert again.done.regression is not None
        assert again.done.regression.verdict == "inconclusive", method


async def test_0251_unusable_baselines_are_all_refused_alike(store: EventStore) -> None:
    suite = _suite(["ok"])
    good = await run_suite(store, suite)
    other_suite = make_suite(
        [scripted_task("t0", {"output": "ok"}, OK)], suiteId="core.test.evals.other"
    )
    other = await run_suite(store, other_suite)
    assert await usable_baseline(store, "local", good.run_id, suite) is not None
    for tenant, run_id in (
        ("local", "local/rmissingmissingmissing"),
        ("acme", good.run_id),
        ("local", other.run_id),
    ):
        assert await usable_baseline(store, tenant, run_id, suite) is None
