"""The plan service (``wopeval.service.plan``): rates from a stored run's log (re-graded, never
its stored summary), assumed or given rates, and every refusal naming its option."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.cli.gate_runs import suite_doc, write_suite
from tests.viewer.test_viewer_pages import make_run
from wopeval.engine.registry import Registry
from wopeval.engine.run import RunSettings
from wopeval.events.store import EventStore
from wopeval.service.plan import (
    PlanInputError,
    PlanSettings,
    assumed_rates,
    baseline_rates,
    plan_suite,
    rates_from_mapping,
)
from wopeval.service.runs import RunService
from wopeval.suite import load_suite

FAST = PlanSettings(mde=0.5, methods=("sign-test",))


def _suite(tmp: Path, outcomes: list[list[bool]], **kw: Any) -> Path:
    return write_suite(tmp, suite_doc(outcomes, **kw))


async def _rates_after_tampering(url: str, suite_path: Path, run_id: str) -> list[Any]:
    """The rates plan reads after the stored summary was overwritten to say every trial
    passed: they must still be the log's."""
    async with await EventStore.open(url) as store:
        record = await store.get_run(run_id)
        assert record is not None
        assert record.summary is not None
        forged = dict(record.summary)
        forged["tasks"] = [
            {**task, "trials": {**task["trials"], "passedCount": task["trials"]["n"]}}
            for task in forged["tasks"]
        ]
        await store.set_status(run_id, "completed", summary=forged)
        return list(await baseline_rates(store, load_suite(suite_path), run_id))


def test_baseline_rates_are_read_from_the_log_not_the_stored_summary(tmp_path: Path) -> None:
    url = str(tmp_path / "s.db")
    path = _suite(tmp_path, [[True, True, False, True], [False, False, False, True]])
    run_id = anyio.run(make_run, url, path, "local")
    rates = anyio.run(_rates_after_tampering, url, path, run_id)
    assert [(r.task_id, r.rate, r.source) for r in rates] == [
        ("task-0", 0.75, "3/4"),
        ("task-1", 0.25, "1/4"),
    ]


def test_plain_baseline_one_task_one_trial(tmp_path: Path) -> None:
    url = str(tmp_path / "s.db")
    path = _suite(tmp_path, [[True]])

    async def read() -> Any:
        async with await EventStore.open(url) as store:
            return await baseline_rates(store, load_suite(path), run_id)

    run_id = anyio.run(make_run, url, path, "local")
    (rate,) = anyio.run(read)
    assert (rate.task_id, rate.rate, rate.source) == ("task-0", 1.0, "1/1")
    plan = plan_suite(load_suite(path), [rate], FAST)
    assert plan.trials_now == 1
    assert plan.pass_rule == "all"
    # 'all' at 1 against 0.5: 0.5^n ≤ 0.05 from n = 5; the suite gate alike (one task)
    assert plan.tasks[0].rule.trials == 5
    assert plan.suite[0].trials == 5
    assert plan.methods[0].tasks == 15  # P(Binomial(m, 1/2) ≥ 6) ≥ 0.8 from m = 15
    data = plan.to_json()
    assert data["regression"]["methods"][0]["how"] == "exact"  # type: ignore[index]


async def _refusal(url: str, suite_path: Path, run_id: str) -> str:
    async with await EventStore.open(url) as store:
        with pytest.raises(PlanInputError) as caught:
            await baseline_rates(store, load_suite(suite_path), run_id)
        return str(caught.value)


async def _pending(url: str, suite_path: Path) -> str:
    async with await EventStore.open(url) as store:
        service = RunService(store, Registry(), None)
        suite = load_suite(suite_path)
        plan = await service.plan(suite, "core.conformance.agents.scripted", RunSettings())
        record = await service.create(plan)
        return record.run_id


def test_unusable_baselines_are_refused_naming_the_option(tmp_path: Path) -> None:
    url = str(tmp_path / "s.db")
    path = _suite(tmp_path, [[True, False]])
    done = anyio.run(make_run, url, path, "local")
    other_doc = suite_doc([[True]])
    other_doc["suiteId"] = "core.test.evals.other"
    (tmp_path / "other").mkdir()
    other = anyio.run(make_run, url, write_suite(tmp_path / "other", other_doc), "local")
    pending = anyio.run(_pending, url, path)
    missing = anyio.run(_refusal, url, path, "local/r00000000000000000000000000")
    assert missing.startswith("--baseline: run ")
    assert "is not in the store" in missing
    foreign = anyio.run(_refusal, url, path, other)
    assert "is a run of 'core.test.evals.other', not of 'core.test.evals.gate'" in foreign
    assert "not completed" in anyio.run(_refusal, url, path, pending)
    assert done != pending


def test_assumed_and_given_rates(tmp_path: Path) -> None:
    suite = load_suite(_suite(tmp_path, [[True], [False]]))
    assert [r.rate for r in assumed_rates(suite, 0.85)] == [0.85, 0.85]
    given = rates_from_mapping(suite, {"task-0": 0.9, "task-1": 1})
    assert [(r.task_id, r.rate, r.source) for r in given] == [
        ("task-0", 0.9, "given"),
        ("task-1", 1.0, "given"),
    ]


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ([0.9, 0.8], "--rates: expected a JSON object {taskId: rate}"),
        ({"task-0": 0.9}, "--rates: no rate for task(s) task-1"),
        ({"task-0": 0.9, "task-1": 0.9, "task-9": 0.1}, "--rates: tasks not in the suite: task-9"),
        ({"task-0": 1.5, "task-1": 0.9}, "--rates: task-0: a rate is a number in [0, 1], got 1.5"),
        ({"task-0": True, "task-1": 0.9}, "--rates: task-0: a rate is a number in [0, 1]"),
        ({"task-0": "0.9", "task-1": 0.9}, "--rates: task-0: a rate is a number in [0, 1]"),
        ({"task-0": math.nan, "task-1": 0.9}, "--rates: task-0: a rate is a number in [0, 1]"),
    ],
)
def test_hostile_rate_files_are_refused(tmp_path: Path, given: object, message: str) -> None:
    suite = load_suite(_suite(tmp_path, [[True], [False]]))
    with pytest.raises(PlanInputError) as caught:
        rates_from_mapping(suite, given)
    assert str(caught.value).startswith(message)


@pytest.mark.parametrize("rate", [-0.1, 1.01, math.nan, math.inf])
def test_bad_assumed_rates_are_refused(tmp_path: Path, rate: float) -> None:
    suite = load_suite(_suite(tmp_path, [[True]]))
    with pytest.raises(PlanInputError, match="--assume-rate: a rate lies in"):
        assumed_rates(suite, rate)


@pytest.mark.parametrize(
    ("settings", "option"),
    [
        (PlanSettings(mde=0.0), "--mde"),
        (PlanSettings(mde=1.0), "--mde"),
        (PlanSettings(mde=-0.2), "--mde"),
        (PlanSettings(alpha=0.0), "--alpha"),
        (PlanSettings(power=0.05), "--power"),
        (PlanSettings(alpha=0.3, power=0.2), "--power"),
        (PlanSettings(power=1.0), "--power"),
        (PlanSettings(level=1.0), "--ci-level"),
        (PlanSettings(trials=0), "--trials"),
        (PlanSettings(methods=("z-test",)), "--method"),
        (PlanSettings(methods=()), "--method"),
        (PlanSettings(simulations=3), "--simulations"),
        (PlanSettings(mde=math.nan), "--mde"),
    ],
)
def test_bad_settings_are_refused_naming_the_option(settings: PlanSettings, option: str) -> None:
    with pytest.raises(PlanInputError) as caught:
        settings.check()
    assert option in str(caught.value)
