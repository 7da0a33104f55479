"""``plan_fork`` + the run service on real stored runs (SQLite and PostgreSQL): a forked trial
serves its first N calls from the log and the rest live, as a new run linked to the original;
a divergence inside the prefix fails it closed naming the call; every refusal names its option.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import anyio
import pytest

from tests.service import fork_agents
from wopeval.engine.registry import Registry
from wopeval.engine.run import RunHandle, RunSettings
from wopeval.errors import RunNotFound, UserError
from wopeval.events.store import EventStore
from wopeval.service.fork import ForkRefused, plan_fork, prefix_of
from wopeval.service.runs import RunService
from wopeval.service.trial_record import TrialNotReadable, read_trial
from wopeval.suite import parse_suite

AGENT = "tests.service.fork_agents:walker"
STEPS = 4


@pytest.fixture(autouse=True)
def _fresh_tool(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fork_agents, "LIVE", [])
    monkeypatch.setattr(fork_agents, "DIVERGE_AT", None)


def _suite(trials: int | None = None, fixtures: dict[str, Any] | None = None) -> dict[str, Any]:
    task: dict[str, Any] = {
        "taskId": "walk",
        "input": {"steps": STEPS if fixtures is None else 3},
        "expected": {"kind": "golden", "match": {"strategy": "contains", "value": '"done":true'}},
    }
    if fixtures is not None:
        task["fixtures"] = fixtures
    doc: dict[str, Any] = {
        "suiteId": "core.test.evals.fork",
        "version": "1.0.0",
        "modes": ["golden"],
        "tasks": [task, {**task, "taskId": "other"}],
    }
    if trials is not None:
        doc["trials"] = {"count": trials}
    return doc


def _service(store: EventStore, agent: str = AGENT) -> RunService:
    registry = Registry()
    registry.register_tool("step", fork_agents.step)
    registry.resolve(agent)
    return RunService(store, registry)


async def _original(store: EventStore, doc: dict[str, Any], agent: str = AGENT) -> str:
    service = _service(store, agent)
    plan = await service.plan(parse_suite(doc), agent, RunSettings(concurrency=1))
    record, summary = await service.run(plan)
    assert summary is not None
    return record.run_id


async def _snapshot(store: EventStore, run_id: str) -> tuple[int, str, str]:
    record = await store.get_run(run_id)
    assert record is not None
    events = await store.events(run_id, -1, 100_000)
    return len(events), json.dumps(record.summary), record.status


async def _calls(store: EventStore, run_id: str) -> list[tuple[Any, Any, Any]]:
    """The forked run's calls: (arguments, how served, the answer)."""
    trial = await read_trial(store, run_id, "walk", 0)
    return [(c.args, c.fixture, c.outcome) for c in trial.calls]


@pytest.mark.parametrize("at", [0, 2, STEPS])
async def test_fork_serves_the_first_n_calls_from_the_log_and_the_rest_live(
    store: EventStore, at: int
) -> None:
    """Fork at 0, in the middle and at the end: the prefix's answers are the recorded ones
    (never live), the calls after it reach the live tool, the new run links to the original,
    re-grades to its stored bytes, and the original run is unchanged."""
    run_id = await _original(store, _suite())
    original = await read_trial(store, run_id, "walk", 0)
    before = await _snapshot(store, run_id)
    live_before = len(fork_agents.LIVE)

    service = _service(store)
    plan = await plan_fork(service, run_id, "walk", 0, at)
    record, summary = await service.run(plan)

    assert summary is not None
    assert summary.taskCount == 1
    assert summary.passed
    link = record.request["x-wopeval-forkedFrom"]
    assert link == {"runId": run_id, "taskId": "walk", "trialIndex": 0, "at": at}
    calls = await _calls(store, record.run_id)
    recorded = [c.outcome for c in original.calls]
    assert [c[2] for c in calls[:at]] == recorded[:at]
    assert [c[1] for c in calls] == ["served"] * at + ["live"] * (STEPS - at)
    assert len(fork_agents.LIVE) - live_before == STEPS - at  # only the calls after the prefix
    if 0 < at < STEPS:  # the first live call saw the last recorded answer
        assert calls[at][0]["after"] == recorded[at - 1]["n"]
    assert (await service.regrade(record.run_id)).reproduces_stored
    assert await _snapshot(store, run_id) == before


async def test_fork_a_divergence_inside_the_prefix_fails_closed_naming_the_call(
    store: EventStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id = await _original(store, _suite())
    before = await _snapshot(store, run_id)
    monkeypatch.setattr(fork_agents, "DIVERGE_AT", 1)
    live_before = len(fork_agents.LIVE)
    service = _service(store)
    record, summary = await service.run(await plan_fork(service, run_id, "walk", 0, 3))

    assert summary is not None
    assert not summary.passed
    assert summary.tasks[0].score == 0
    assert len(fork_agents.LIVE) == live_before  # nothing reached a live tool
    events = await store.events(record.run_id, -1, 10_000)
    (failed,) = [e.payload for e in events if e.type == "wopeval.trial-failed"]
    assert failed["kind"] == "fixture-miss"
    texts = " ".join(r["message"] for r in failed["reasons"])
    assert "call 1 of the prefix (step) differs from the recorded call at args.oops" in texts
    assert "recorded nothing, got true" in texts
    (scored,) = [e.payload for e in events if e.type == "eval.scored"]
    assert scored["scoreLabel"] == "fixture-miss"
    assert (await service.regrade(record.run_id)).reproduces_stored
    assert await _snapshot(store, run_id) == before


async def test_fork_a_divergence_after_the_prefix_is_not_a_miss(
    store: EventStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Call N is the first live one: differing there is the point of forking."""
    run_id = await _original(store, _suite())
    monkeypatch.setattr(fork_agents, "DIVERGE_AT", 2)
    service = _service(store)
    _, summary = await service.run(await plan_fork(service, run_id, "walk", 0, 2))
    assert summary is not None
    assert summary.passed
    assert fork_agents.LIVE[-2]["oops"] is True


async def test_fork_the_agent_sees_the_original_trial_index(store: EventStore) -> None:
    """Trial 2 relived is trial 2: its arguments carry the index, and the whole prefix
    matches only if the agent is told 2 (the new run's log numbers it 0)."""
    run_id = await _original(store, _suite(trials=3))
    service = _service(store)
    record, summary = await service.run(await plan_fork(service, run_id, "walk", 2, STEPS))
    assert summary is not None
    assert summary.passed
    assert [args["trial"] for args, _, _ in await _calls(store, record.run_id)] == [2] * STEPS
    assert record.suite_document["trials"] == {"count": 1, "k": 1}
    assert [t["taskId"] for t in record.suite_document["tasks"]] == ["walk"]


async def test_fork_a_fork_tells_the_agent_the_first_runs_trial_index(store: EventStore) -> None:
    """Forking a fork's trial (index 0 in its log) relives trial 2 of the first run still."""
    run_id = await _original(store, _suite(trials=3))
    service = _service(store)
    first, _ = await service.run(await plan_fork(service, run_id, "walk", 2, 1))
    assert "agentTrialIndex" not in first.request["x-wopeval-forkedFrom"]
    second, summary = await service.run(await plan_fork(service, first.run_id, "walk", 0, 2))
    assert summary is not None
    assert summary.passed
    link = second.request["x-wopeval-forkedFrom"]
    assert link == {
        "runId": first.run_id, "taskId": "walk", "trialIndex": 0, "at": 2, "agentTrialIndex": 2
    }  # fmt: skip
    assert [args["trial"] for args, _, _ in await _calls(store, second.run_id)] == [2] * STEPS
    third, summary = await service.run(await plan_fork(service, second.run_id, "walk", 0, 3))
    assert summary is not None
    assert summary.passed
    assert third.request["x-wopeval-forkedFrom"]["agentTrialIndex"] == 2


async def test_fork_the_calls_after_the_prefix_find_the_fixture_cursor_where_it_was(
    store: EventStore,
) -> None:
    """A sequence of fixture answers: the prefix consumed entry 0, so call 1 gets entry 1."""
    responses = [{"tool": "step", "response": {"n": n}} for n in (100, 200, 300)]
    run_id = await _original(store, _suite(fixtures={"onMiss": "fail", "toolResponses": responses}))
    service = _service(store)
    record, summary = await service.run(await plan_fork(service, run_id, "walk", 0, 1))
    assert summary is not None
    assert summary.passed
    assert [c[2] for c in await _calls(store, record.run_id)] == [
        {"n": 100},
        {"n": 200},
        {"n": 300},
    ]
    assert fork_agents.LIVE == []


async def test_fork_refusals_name_the_option_and_value(store: EventStore) -> None:
    run_id = await _original(store, _suite())
    before = await _snapshot(store, run_id)
    runs = len(await store.list_runs(limit=100_000))
    service = _service(store)
    with pytest.raises(RunNotFound, match="RUN: no eval run 'local/nope'"):
        await plan_fork(service, "local/nope", "walk", 0, 0)
    with pytest.raises(TrialNotReadable, match=r"--task: .* has no task 'nope' \(its tasks: walk"):
        await plan_fork(service, run_id, "nope", 0, 0)
    with pytest.raises(TrialNotReadable, match=r"--trial: .* no trial 1 that ran .*: 0\)"):
        await plan_fork(service, run_id, "walk", 1, 0)
    with pytest.raises(ForkRefused, match="--trial: -1 is not a trial index"):
        await plan_fork(service, run_id, "walk", -1, 0)
    with pytest.raises(ForkRefused, match=r"--at: -1 .* recorded 4 tool call\(s\)"):
        await plan_fork(service, run_id, "walk", 0, -1)
    with pytest.raises(ForkRefused, match=r"--at: 5 is not a call .* recorded 4 tool call\(s\)"):
        await plan_fork(service, run_id, "walk", 0, STEPS + 1)
    assert await _snapshot(store, run_id) == before
    assert len(await store.list_runs(limit=100_000)) == runs  # nothing was created


async def test_fork_refuses_an_unfinished_run_and_a_trial_never_scored(
    store: EventStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = _service(store)
    plan = await service.plan(parse_suite(_suite()), AGENT, RunSettings())
    pending = await service.create(plan)
    with pytest.raises(TrialNotReadable, match=r"RUN: run .* is pending, not finished"):
        await plan_fork(service, pending.run_id, "walk", 0, 0)

    hung = _service(store, "tests.service.fork_agents:hangs")
    plan = await hung.plan(parse_suite(_suite()), "tests.service.fork_agents:hangs", RunSettings())
    record = await hung.create(plan)
    handle = RunHandle(record.run_id)
    arrived = anyio.Event()
    monkeypatch.setattr(fork_agents, "ARRIVED", arrived)
    async with anyio.create_task_group() as group:
        group.start_soon(hung.execute, plan, handle)
        await arrived.wait()  # both tasks' trials are waiting
        handle.cancel()
    cancelled = await store.get_run(record.run_id)
    assert cancelled is not None
    assert cancelled.status == "cancelled"
    with pytest.raises(ForkRefused, match=r"--trial: trial 0 of task 'walk' .* never scored"):
        await plan_fork(hung, record.run_id, "walk", 0, 1)


async def test_fork_refuses_a_prefix_call_whose_result_was_not_captured(
    store: EventStore,
) -> None:
    run_id = await _original(store, _suite())
    trial = await read_trial(store, run_id, "walk", 0)
    cut = dataclasses.replace(trial.calls[1], result_captured=False)
    trial = dataclasses.replace(trial, calls=(trial.calls[0], cut, *trial.calls[2:]))
    assert len(prefix_of(trial, 1).calls) == 1
    with pytest.raises(ForkRefused, match=r"--at: call 1 \(step\) .* no recorded result"):
        prefix_of(trial, 2)


async def test_a_forked_run_left_unfinished_cannot_be_resumed(store: EventStore) -> None:
    run_id = await _original(store, _suite())
    service = _service(store)
    record = await service.create(await plan_fork(service, run_id, "walk", 0, 1))
    with pytest.raises(UserError, match="is a forked run and cannot be resumed"):
        await service.prepare_resume(record.run_id)
