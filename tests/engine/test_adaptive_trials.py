"""Adaptive trials through the real engine (``x-wopeval-adaptive``): trials run wave by wave and
stop where the sequential test does, the stop is recorded, grading recomputes it from the log,
a resumed run goes on from where it stopped, and a task that could reach a live tool is never
adaptive."""

from __future__ import annotations

from collections import Counter
from typing import Any

import anyio
import pytest

from tests.engine.helpers import make_suite, run_suite, scripted_task
from wopeval.engine.adaptive import AdaptiveRefused
from wopeval.engine.agent import AgentContext
from wopeval.engine.registry import SCRIPTED_AGENT_ID, Registry
from wopeval.engine.run import RunHandle, RunSettings
from wopeval.events.store import EventStore
from wopeval.grading.adaptive import first_stop
from wopeval.grading.adaptive_report import adaptive_report
from wopeval.service.runs import RunService
from wopeval.service.shards import plan_shard
from wopeval.suite.adaptive_rules import adaptive_plan
from wopeval.suite.models import AgentEvalSuite
from wopeval.wire.events import EvalScored, RunEvent
from wopeval.wire.payloads import AdaptiveStopped
from wopeval.wire.vocab import ADAPTIVE_STOPPED

OK = {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}}
SPRT = {"rule": "sprt", "alpha": 0.05, "minTrials": 1}
FIXTURED = {"onMiss": "fail", "toolResponses": [{"tool": "lookup", "response": {"id": 1}}]}


def adaptive_suite(*tasks: dict[str, Any], count: int = 20, **extra: Any) -> AgentEvalSuite:
    return make_suite(
        list(tasks),
        trials={"count": count, "k": 1},
        thresholds={"passScore": 0.8},
        **{"x-wopeval-adaptive": SPRT, **extra},
    )


def scored(events: list[RunEvent]) -> Counter[tuple[str, int]]:
    return Counter(
        (p.taskId, p.trialIndex or 0) for e in events if isinstance(p := e.typed, EvalScored)
    )


def stops(events: list[RunEvent]) -> dict[str, AdaptiveStopped]:
    return {
        e.payload["taskId"]: AdaptiveStopped.model_validate(e.payload)
        for e in events
        if e.type == ADAPTIVE_STOPPED and isinstance(e.payload, dict)
    }


async def test_0244_B_adaptive_one_task_pass_at_k_over_the_trials_run(store: EventStore) -> None:
    # p0 0.7, p1 0.9, α = β = 0.05: twelve passes in a row decide "above" (hand-worked in
    # tests/grading/test_adaptive_rule.py).
    suite = adaptive_suite(scripted_task("one", {"output": "ok"}, OK))
    ran = await run_suite(store, suite)
    assert scored(ran.events) == Counter({("one", i): 1 for i in range(12)})
    assert stops(ran.events) == {
        "one": AdaptiveStopped(
            taskId="one", rule="sprt", decision="above", trials=12, passedCount=12, maxTrials=20
        )
    }
    trials = ran.done.tasks[0].trials
    assert trials is not None
    assert (trials.n, trials.passedCount, trials.passAtK, trials.passHatK) == (12, 12, 1.0, 1.0)
    assert ran.done.passed
    started = ran.of_type("eval.started")[0].payload
    assert isinstance(started, dict)
    assert started["trialCount"] == 20  # the maximum, RFC 0244 §B's count


async def test_0244_B_adaptive_clear_pass_clear_fail_and_borderline(store: EventStore) -> None:
    borderline = {"output": "ok", "trials": {str(i): {"output": "no"} for i in range(0, 20, 5)}}
    suite = adaptive_suite(
        scripted_task("pass", {"output": "ok"}, OK),
        scripted_task("fail", {"output": "no"}, OK),
        scripted_task("borderline", borderline, OK),  # passes 4 in 5: inside the zone
    )
    ran = await run_suite(store, suite, settings=RunSettings(concurrency=8))
    counts = Counter(task for task, _ in scored(ran.events))
    assert counts == {"pass": 12, "fail": 3, "borderline": 20}
    assert set(scored(ran.events).values()) == {1}  # each (task, trial) scored once
    decided = {task: stop.decision for task, stop in stops(ran.events).items()}
    assert decided == {"pass": "above", "fail": "below", "borderline": "undecided"}
    report = adaptive_report(suite, ran.done)
    assert report is not None
    assert (report.trials_run, report.trials_fixed, report.saved) == (35, 60, 25)
    by_task = {t.task_id: t.decision for t in report.tasks}
    assert by_task == decided  # the report, from the summary, says what the log recorded


@pytest.mark.parametrize("concurrency", [1, 3, 16])
async def test_adaptive_never_runs_a_trial_past_the_stop(
    store: EventStore, concurrency: int
) -> None:
    mixed = {"output": "ok", "trials": {"1": {"output": "no"}, "7": {"output": "no"}}}
    suite = adaptive_suite(
        scripted_task("mixed", mixed, OK),
        scripted_task("pass", {"output": "ok"}, OK),
        scripted_task("fixed", {"output": "ok"}, OK),
        count=30,
    )
    ran = await run_suite(store, suite, settings=RunSettings(concurrency=concurrency))
    outcomes: dict[str, dict[int, bool]] = {}
    for event in ran.events:
        if isinstance(p := event.typed, EvalScored):
            outcomes.setdefault(p.taskId, {})[p.trialIndex or 0] = p.passed
    for task in suite.tasks:
        plan = adaptive_plan(suite, task)
        assert plan is not None
        seen = outcomes[task.taskId]
        assert sorted(seen) == list(range(len(seen)))  # contiguous trial indices
        stop = first_stop(plan, [seen[i] for i in range(len(seen))])
        assert stop.trials == len(seen)  # nothing ran past the first stop


async def test_adaptive_grade_reproduces_the_stored_summary(store: EventStore) -> None:
    suite = adaptive_suite(
        scripted_task("pass", {"output": "ok"}, OK), scripted_task("fail", {"output": "no"}, OK)
    )
    service = RunService(store, Registry())
    plan = await service.plan(suite, SCRIPTED_AGENT_ID, RunSettings())
    record = await service.create(plan)
    summary = await service.execute(plan, RunHandle(record.run_id))
    assert summary is not None
    regraded = await service.regrade(record.run_id)
    assert regraded.reproduces_stored
    assert regraded.summary.to_json() == summary.to_json()


async def test_adaptive_task_level_setting_beside_a_fixed_task(store: EventStore) -> None:
    suite = make_suite(
        [
            scripted_task("fixed", {"output": "ok"}, OK),
            {**scripted_task("adaptive", {"output": "no"}, OK), "x-wopeval-adaptive": SPRT},
        ],
        trials={"count": 6, "k": 1},
        thresholds={"passScore": 0.8},
    )
    ran = await run_suite(store, suite)
    counts = Counter(task for task, _ in scored(ran.events))
    assert counts == {"fixed": 6, "adaptive": 3}
    assert set(stops(ran.events)) == {"adaptive"}


# --- never adaptive where a live tool could be reached ------------------------------------


async def live_lookup(args: Any) -> Any:
    return {"id": 1}


def with_live_tool() -> Registry:
    registry = Registry()
    registry.register_tool("lookup", live_lookup)
    return registry


@pytest.mark.parametrize(
    ("task", "modes", "field"),
    [
        (scripted_task("unfixtured", {"output": "ok"}, OK), None, "x-wopeval-adaptive"),
        (
            {**scripted_task("own", {"output": "ok"}, OK), "x-wopeval-adaptive": SPRT},
            None,
            "tasks[0].x-wopeval-adaptive",
        ),
        (scripted_task("fixtured", {"output": "ok"}, OK, FIXTURED), ["live-shadow"], None),
    ],
)
async def test_adaptive_refused_for_a_task_with_live_tools(
    store: EventStore, task: dict[str, Any], modes: list[str] | None, field: str | None
) -> None:
    extra: dict[str, Any] = {"modes": ["golden", "live-shadow"]}
    if "x-wopeval-adaptive" not in task:
        extra["x-wopeval-adaptive"] = SPRT
    suite = make_suite([task], trials={"count": 10, "k": 1}, thresholds={"passScore": 0.8}, **extra)
    service = RunService(store, with_live_tool())
    settings = RunSettings(modes=modes) if modes else RunSettings()
    before = len(await store.list_runs())
    with pytest.raises(AdaptiveRefused, match="could reach a live tool") as refused:
        await service.plan(suite, SCRIPTED_AGENT_ID, settings)
    assert str(refused.value).startswith(field or "x-wopeval-adaptive")
    assert len(await store.list_runs()) == before  # refused before anything was recorded


async def test_adaptive_zero_decisions_on_live_tool_tasks(store: EventStore) -> None:
    """A live tool in the run: its fail-closed task may be adaptive, and nothing else is."""
    suite = make_suite(
        [
            {
                **scripted_task("fixtured", {"output": "ok"}, OK, FIXTURED),
                "x-wopeval-adaptive": SPRT,
            },
            scripted_task("live", {"output": "ok"}, OK),
        ],
        trials={"count": 20, "k": 1},
        thresholds={"passScore": 0.8},
    )
    ran = await run_suite(store, suite, registry=with_live_tool())
    counts = Counter(task for task, _ in scored(ran.events))
    assert counts == {"fixtured": 12, "live": 20}  # every trial of the live-tool task
    assert set(stops(ran.events)) == {"fixtured"}  # 0 adaptive decisions on the live one


async def test_adaptive_refused_with_a_live_tool_at_execute_too(store: EventStore) -> None:
    suite = adaptive_suite(scripted_task("t", {"output": "ok"}, OK))
    with pytest.raises(AdaptiveRefused, match=r"^x-wopeval-adaptive: task 't' could reach"):
        await run_suite(store, suite, registry=with_live_tool())


async def test_adaptive_refused_for_shards(store: EventStore) -> None:
    suite = adaptive_suite(scripted_task("t", {"output": "ok"}, OK))
    plan = await RunService(store, Registry()).plan(suite, SCRIPTED_AGENT_ID, RunSettings())
    with pytest.raises(AdaptiveRefused, match="cannot be sharded"):
        plan_shard(plan, 0, 2)


# --- resume: the test goes on where it stopped ---------------------------------------------


class Blocking:
    """The scripted answer, except that trials at or past ``block_from`` never answer while
    ``blocked`` (an interrupted process)."""

    def __init__(self, block_from: int) -> None:
        self.block_from = block_from
        self.blocked = True
        self.calls: Counter[tuple[str, int]] = Counter()

    async def __call__(self, task_input: Any, ctx: AgentContext) -> Any:
        self.calls[(ctx.task_id, ctx.trial_index)] += 1
        if self.blocked and ctx.trial_index >= self.block_from:
            await anyio.sleep_forever()
        return task_input["output"]


async def test_0244_B_adaptive_resume_continues_the_test_and_scores_each_trial_once(
    store: EventStore,
) -> None:
    suite = adaptive_suite(
        scripted_task("pass", {"output": "ok"}, OK), scripted_task("fail", {"output": "no"}, OK)
    )
    agent = Blocking(block_from=5)
    registry = Registry()
    registry.register_agent("test.blocking", agent)
    service = RunService(store, registry)
    plan = await service.plan(suite, "test.blocking", RunSettings(concurrency=4))
    record = await service.create(plan)
    handle = RunHandle(record.run_id)

    async def interrupt_when_stuck() -> None:
        while True:
            await anyio.sleep(0.02)
            done = scored(await store.events(record.run_id))
            if len(done) >= 5 + 3 and ("pass", 5) in agent.calls:  # "fail" stopped at 3
                handle.interrupt()
                handle.cancel()
                return

    async with anyio.create_task_group() as group:
        group.start_soon(interrupt_when_stuck)
        await service.execute(plan, handle)
    before = await store.events(record.run_id)
    assert set(stops(before)) == {"fail"}
    assert ("pass", 5) not in scored(before)

    agent.blocked = False
    _, summary = await service.resume(record.run_id)
    assert summary is not None
    events = await store.events(record.run_id)
    counts = scored(events)
    assert set(counts.values()) == {1}  # each (task, trial) scored exactly once
    assert sorted(i for task, i in counts if task == "pass") == list(range(12))
    assert sorted(i for task, i in counts if task == "fail") == [0, 1, 2]
    recorded = [e for e in events if e.type == ADAPTIVE_STOPPED]
    assert Counter(e.payload["taskId"] for e in recorded) == {"pass": 1, "fail": 1}
    assert (await service.regrade(record.run_id)).reproduces_stored
    fresh = await run_suite(store, suite)
    assert [t.trials for t in summary.tasks] == [t.trials for t in fresh.done.tasks]
