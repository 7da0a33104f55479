"""Trials in Ray workers (``executor="ray"``, the ``wopeval[ray]`` extra), on both stores.

One local Ray cluster (2 CPUs) serves the whole module. A remote trial runs the same
``run_trial`` into a buffer; the driver appends its events keeping ids, timestamps and causation.
Helpers that cross to the workers (agents, live tools, judges) are module-level, so the workers
import them by reference, as a user's would be.
"""

from __future__ import annotations

import importlib
import json
import os
import secrets
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, Literal

import anyio
import pytest
from typer.testing import CliRunner

from tests.engine.helpers import Ran, make_suite, run_suite, scripted_task
from tests.engine.test_trials_and_events import positive_example_suite
from wopeval.cli.app import app
from wopeval.engine.agent import AgentContext, Usage
from wopeval.engine.distributed import NotDistributable, RemoteTrialFailed
from wopeval.engine.judge import record_judge_usage
from wopeval.engine.registry import Registry
from wopeval.engine.run import RunHandle, RunSettings
from wopeval.engine.trial import EventSink
from wopeval.events.store import EventStore
from wopeval.grading.views import collect_trials
from wopeval.service.runs import create_run_record, execute, regrade
from wopeval.suite.models import Task
from wopeval.wire.events import (
    EVAL_SCORED,
    INVOCATION_COMPLETED,
    INVOCATION_STARTED,
    RUN_CANCELLED,
    RUN_FAILED,
    X_TASK_ID,
)
from wopeval.wire.vocab import TRIAL_FAILED

ROOT = Path(__file__).resolve().parents[2]
RAY = RunSettings(executor="ray")
OK = {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}}


# Every test here runs with the local Ray cluster up (tests/engine/conftest.py).
pytestmark = pytest.mark.usefixtures("ray_cluster")


# ---- what crosses to the workers --------------------------------------------------------------


async def slow_agent(task_input: Any, ctx: AgentContext) -> Any:
    await anyio.sleep(0.06)
    return "ok"


async def sleepy_agent(task_input: Any, ctx: AgentContext) -> Any:
    # 30 s in short naps: Ray delivers a cancel to a running task only between bytecodes, so
    # one long sleep would hold its worker (and a CPU of the shared cluster) the whole 30 s.
    for _ in range(600):
        await anyio.sleep(0.05)


async def started_sleepy_agent(task_input: Any, ctx: AgentContext) -> Any:
    """:func:`sleepy_agent` that first appends a line to the file ``task_input["started"]``: the
    driver sees the trial running in its worker."""
    async with await anyio.open_file(task_input["started"], "a") as out:
        await out.write(f"{ctx.task_id}\n")
    await sleepy_agent(task_input, ctx)


async def dying_agent(task_input: Any, ctx: AgentContext) -> Any:
    async with await anyio.open_file(task_input["path"], "a") as out:
        await out.write("ran\n")
    os._exit(1)  # the worker process dies mid-trial


class FileEffect:
    """A live tool whose every real call appends a line to a file the driver can read."""

    def __init__(self, path: Path) -> None:
        self.path = path

    async def __call__(self, args: Any) -> Any:
        async with await anyio.open_file(self.path, "a") as out:
            await out.write(json.dumps(args) + "\n")
        return {"refunded": True}

    @property
    def calls(self) -> int:
        return len(self.path.read_text().splitlines()) if self.path.exists() else 0


class CostlyJudge:
    """Scores 0.75 and spends 0.5 USD per judgement (recorded outside the trial bracket)."""

    evaluator_type: Literal["llm_judge"] = "llm_judge"

    async def score(self, task: Task, output: Any, sink: EventSink, run_id: str) -> float:
        await record_judge_usage(sink, run_id, Usage("judge", "j", 1000, 100, cost_usd=0.5))
        return 0.75


def _without_latency(summary_json: str) -> dict[str, Any]:
    """A summary minus ``tasks[].latencyMs``: wall-clock time, not a function of the executor."""
    doc: dict[str, Any] = json.loads(summary_json)
    for task in doc["tasks"]:
        assert isinstance(task.pop("latencyMs"), int)
    return doc


def _trial_events(ran: Ran) -> dict[str, list[Any]]:
    """Each trial's events in log order, keyed by its root's eventId (the root first)."""
    roots = [e for e in ran.of_type(INVOCATION_STARTED) if X_TASK_ID in e.payload]
    by_root: dict[str, list[Any]] = {root.eventId: [] for root in roots}
    for event in ran.events:
        if event.eventId in by_root:
            by_root[event.eventId].append(event)
        elif event.causationId is not None:
            by_root[event.causationId].append(event)
    return by_root


# ---- RFC 0244 §B: the same results, the same log shape ------------------------------------------


async def test_0244_B_positive_example_on_ray_summarizes_exactly_as_locally(
    store: EventStore,
) -> None:
    local = await run_suite(store, positive_example_suite())
    remote = await run_suite(store, positive_example_suite(), settings=RAY)
    assert _without_latency(remote.done.to_json()) == _without_latency(local.done.to_json())
    trials = remote.done.tasks[0].trials
    assert trials is not None
    assert (trials.n, trials.passedCount, trials.passAtK, trials.passHatK) == (5, 4, 1.0, 0.4)
    record = await store.get_run(remote.run_id)
    assert record is not None
    assert record.request["executor"] == "ray"
    local_record = await store.get_run(local.run_id)
    assert local_record is not None
    assert "executor" not in local_record.request


async def test_0244_B_remote_trials_keep_contiguous_sequences_and_root_causation(
    store: EventStore,
) -> None:
    ran = await run_suite(store, positive_example_suite(), settings=RAY)
    assert [e.sequence for e in ran.events] == list(range(len(ran.events)))
    trials = _trial_events(ran)
    assert len(trials) == 5
    for root_id, events in trials.items():
        root, *rest = events
        # A failing trial's reason (wopeval.trial-failed) follows its eval.scored.
        rest = [e for e in rest if e.type != TRIAL_FAILED]
        assert root.eventId == root_id
        assert root.causationId is None
        assert all(e.causationId == root_id for e in rest)
        assert [e.type for e in rest][-2:] == [INVOCATION_COMPLETED, EVAL_SCORED]
        assert len(rest) == 7  # 2 × (tool-called, tool-returned), decided, completed, scored
        stamps = [e.timestamp for e in events]
        assert stamps == sorted(stamps)
    attributed = sum(len(events) for events in trials.values())
    failed = len(ran.of_type(TRIAL_FAILED))
    assert attributed == len(ran.of_type(INVOCATION_STARTED)) + 5 * 7 + failed


async def test_remote_timestamps_survive_so_latency_reads_the_same(store: EventStore) -> None:
    registry = Registry()
    registry.register_agent("slow-agent", slow_agent)
    suite = make_suite([scripted_task("slow", {}, OK)], trials={"count": 3})
    ran = await run_suite(store, suite, agent_id="slow-agent", registry=registry, settings=RAY)
    views = collect_trials(ran.events)
    for scored in ran.of_type(EVAL_SCORED):
        in_worker = scored.payload["latencyMs"]  # measured in the worker, on its timestamps
        from_log = views[("slow", scored.payload["trialIndex"])].latency_ms
        assert in_worker == from_log
        assert in_worker >= 50  # the agent sleeps 60 ms; a re-stamped log reads ~1 ms
    assert ran.done.passedCount == 1


async def test_0244_B_memory_written_in_one_remote_trial_is_invisible_to_the_others(
    store: EventStore,
) -> None:
    script = {"recall": "note", "remember": [{"key": "note", "value": "written-by-a-trial"}]}
    expected = {
        "kind": "golden",
        "match": {"strategy": "json-match", "value": {"recalled": "seeded"}},
    }
    fixtures = {"memorySeed": [{"key": "note", "value": "seeded"}]}
    suite = make_suite([scripted_task("memory", script, expected, fixtures)], trials={"count": 4})
    ran = await run_suite(store, suite, settings=RunSettings(concurrency=1, executor="ray"))
    assert ran.done.tasks[0].trials is not None
    assert ran.done.tasks[0].trials.passedCount == 4


@pytest.mark.parametrize(("on_miss", "live_calls"), [("fail", 0), (None, 0), ("live", 1)])
async def test_0244_D_remote_miss_fails_closed_and_never_reaches_the_live_tool(
    store: EventStore, tmp_path: Path, on_miss: str | None, live_calls: int
) -> None:
    effect = FileEffect(tmp_path / "refunds.jsonl")
    registry = Registry()
    registry.register_tool("billing:refund", effect)
    fixtures: dict[str, Any] = {
        "toolResponses": [
            {
                "tool": "billing:refund",
                "args": {"amountMinor": 4200},
                "argsMatch": "exact",
                "response": {"refunded": True},
            }
        ]
    }
    if on_miss is not None:
        fixtures["onMiss"] = on_miss
    script = {"calls": [{"tool": "billing:refund", "args": {"amountMinor": 999}}], "output": "ok"}
    suite = make_suite([scripted_task("miss", script, OK, fixtures)])
    ran = await run_suite(store, suite, registry=registry, settings=RAY)
    assert effect.calls == live_calls  # "live": the worker's copy of the tool did run
    (scored,) = ran.of_type(EVAL_SCORED)
    miss = ran.done.tasks[0]
    assert miss.fixtureMissCount == 1
    if live_calls == 0:
        assert (scored.payload["passed"], scored.payload["score"]) == (False, 0.0)
        assert (miss.passed, miss.score) == (False, 0.0)
    else:
        assert miss.passed is True


# ---- cost: the driver meters what the workers spent ---------------------------------------------


async def test_0244_B_cost_ceiling_stops_new_remote_trials(store: EventStore) -> None:
    usage = [{"provider": "mock", "model": "m", "inputTokens": 1, "outputTokens": 1}]
    usage[0]["costEstimateUsd"] = 0.01
    suite = make_suite(
        [scripted_task("costly", {"usage": usage, "output": "ok"}, OK)],
        trials={"count": 6},
        thresholds={"maxCostUsd": 0.025},
    )
    ran = await run_suite(store, suite, settings=RunSettings(concurrency=1, executor="ray"))
    labels = [e.payload["scoreLabel"] for e in ran.of_type(EVAL_SCORED)]
    assert labels.count("pass") == 3  # 0.01 × 3 = 0.03 > 0.025: the fourth never starts
    assert labels.count("skipped-budget") == 3
    assert ran.done.totalCostUsd == pytest.approx(0.03)
    assert ran.done.passed is False


async def test_0244_B_a_remote_judges_spend_counts_against_the_ceiling(store: EventStore) -> None:
    rubric = {"kind": "rubric", "rubric": [{"criterion": "is polite", "weight": 1.0}]}
    suite = make_suite(
        [scripted_task("rub", {"output": "ok"}, rubric)],
        modes=["rubric"],
        trials={"count": 4},
        thresholds={"maxCostUsd": 0.9, "passScore": 0.5},
    )
    settings = RunSettings(concurrency=1, executor="ray")
    ran = await run_suite(store, suite, judge=CostlyJudge(), settings=settings)
    scored = ran.of_type(EVAL_SCORED)
    assert [e.payload["scoreLabel"] for e in scored].count("skipped-budget") == 2
    assert [e.payload["score"] for e in scored if e.payload["scoreLabel"] != "skipped-budget"] == [
        0.75,
        0.75,
    ]
    judged = [e for e in ran.events if e.type == "provider.usage"]
    assert len(judged) == 2
    assert all(e.causationId is None for e in judged)
    assert ran.done.totalCostUsd == pytest.approx(1.0)


# ---- re-grading, failures, cancellation ---------------------------------------------------------


async def test_grade_reproduces_a_ray_runs_stored_summary_byte_for_byte(store: EventStore) -> None:
    suite = make_suite(
        [
            scripted_task("a", {"output": "ok", "trials": {"1": {"output": "no"}}}, OK),
            scripted_task("b", {"output": "ok"}, OK),
        ],
        trials={"count": 3, "k": 2, "passRule": "mean"},
        thresholds={"passScore": 0.5},
    )
    for ran in (
        await run_suite(store, suite, settings=RAY),
        await run_suite(store, positive_example_suite(), settings=RAY),
    ):
        regraded = await regrade(store, ran.run_id)
        assert regraded.reproduces_stored
        assert regraded.summary.to_json() == ran.done.to_json()


async def test_remote_agent_errors_and_timeouts_fail_the_trial_not_the_run(
    store: EventStore,
) -> None:
    async def crash(task_input: Any, ctx: AgentContext) -> Any:
        raise RuntimeError("boom")

    registry = Registry()
    registry.register_agent("crash", crash)
    registry.register_agent("sleepy", sleepy_agent)
    for name, label in (("crash", "agent-error"), ("sleepy", "timeout")):
        settings = RunSettings(trial_timeout_s=0.2, executor="ray")
        suite = make_suite([scripted_task("t", {}, OK)])
        ran = await run_suite(store, suite, agent_id=name, registry=registry, settings=settings)
        (scored,) = ran.of_type(EVAL_SCORED)
        assert (scored.payload["scoreLabel"], scored.payload["score"]) == (label, 0.0)
        assert ran.of_type(INVOCATION_COMPLETED)[0].payload["outcome"] == "failed"


async def test_an_agent_that_cannot_be_sent_to_workers_fails_the_run_before_any_trial(
    store: EventStore,
) -> None:
    lock = threading.Lock()

    async def locked(task_input: Any, ctx: AgentContext) -> Any:
        with lock:
            return "ok"

    registry = Registry()
    registry.register_agent("locked", locked)
    suite = make_suite([scripted_task("t", {}, OK)])
    record = await create_run_record(store, suite, "locked", RAY)
    with pytest.raises(NotDistributable, match="cannot be sent to Ray workers"):
        await execute(store, RunHandle(record.run_id), suite, "locked", registry, RAY)
    types = [e.type for e in await store.events(record.run_id)]
    assert types[-1] == RUN_FAILED
    assert INVOCATION_STARTED not in types
    assert EVAL_SCORED not in types
    stored = await store.get_run(record.run_id)
    assert stored is not None
    assert stored.status == "failed"


async def test_an_agent_the_workers_cannot_import_fails_the_run_before_any_trial(
    store: EventStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = f"driver_only_{secrets.token_hex(4)}"  # importable here, not on the workers' path
    (tmp_path / f"{name}.py").write_text("async def agent(task_input, ctx):\n    return 'ok'\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module(name)
    monkeypatch.setitem(sys.modules, name, module)
    registry = Registry()
    registry.register_agent("driver-only", module.agent)
    suite = make_suite([scripted_task("t", {}, OK)])
    record = await create_run_record(store, suite, "driver-only", RAY)
    with pytest.raises(NotDistributable, match=f"cannot load the agent.*{name}"):
        await execute(store, RunHandle(record.run_id), suite, "driver-only", registry, RAY)
    types = [e.type for e in await store.events(record.run_id)]
    assert types[-1] == RUN_FAILED
    assert INVOCATION_STARTED not in types


async def test_a_worker_that_dies_fails_the_run_and_its_trial_is_never_retried(
    store: EventStore, tmp_path: Path
) -> None:
    registry = Registry()
    registry.register_agent("dying", dying_agent)
    ran_file = tmp_path / "ran.txt"
    suite = make_suite([scripted_task("t", {"path": str(ran_file)}, OK)])
    record = await create_run_record(store, suite, "dying", RAY)
    with pytest.raises(ExceptionGroup) as raised:
        await execute(store, RunHandle(record.run_id), suite, "dying", registry, RAY)
    assert raised.group_contains(RemoteTrialFailed, match="trial 0 of task 't' failed in a Ray")
    assert ran_file.read_text() == "ran\n"  # max_retries=0: a retry would repeat side effects
    types = [e.type for e in await store.events(record.run_id)]
    assert types[-1] == RUN_FAILED
    assert INVOCATION_STARTED not in types


async def test_cancelling_a_ray_run_records_nothing_of_the_trials_in_flight(
    store: EventStore, tmp_path: Path
) -> None:
    registry = Registry()
    registry.register_agent("sleepy", started_sleepy_agent)
    started = tmp_path / "started.txt"
    suite = make_suite([scripted_task(f"t{i}", {"started": str(started)}, OK) for i in range(2)])
    record = await create_run_record(store, suite, "sleepy", RAY)
    handle = RunHandle(record.run_id)
    async with anyio.create_task_group() as group:

        async def go() -> None:
            assert await execute(store, handle, suite, "sleepy", registry, RAY) is None

        group.start_soon(go)
        with anyio.fail_after(60):  # both trials running (polled: the workers write the file)
            while _lines(started) < 2:  # noqa: ASYNC110
                await anyio.sleep(0.02)
        handle.cancel()
    events = await store.events(record.run_id)
    types = [e.type for e in events]
    assert types[-1] == RUN_CANCELLED
    assert INVOCATION_STARTED not in types
    assert INVOCATION_COMPLETED not in types
    assert [e.sequence for e in events] == list(range(len(events)))
    # The cancelled Ray tasks stop too: the cluster's CPUs come back long before the 30 s nap.
    # (Polled: Ray offers no event for it.)
    with anyio.fail_after(10):
        while not _all_cpus_free():  # noqa: ASYNC110
            await anyio.sleep(0.05)


def _lines(path: Path) -> int:
    return len(path.read_text().splitlines()) if path.exists() else 0


def _all_cpus_free() -> bool:
    import ray  # imported by the tests that run: every xdist worker collects this file

    free: dict[str, float] = ray.available_resources()  # type: ignore[no-untyped-call]
    total: dict[str, float] = ray.cluster_resources()  # type: ignore[no-untyped-call]
    return free.get("CPU", 0) >= total["CPU"]


# ---- the CLI and the import boundary ------------------------------------------------------------


def test_cli_run_with_the_ray_executor_stores_a_regradable_run(tmp_path: Path) -> None:
    store = str(tmp_path / "s.db")
    quickstart = str(ROOT / "examples" / "quickstart" / "suite.yaml")
    result = CliRunner().invoke(app, ["run", quickstart, "--store", store, "--json"])
    local = json.loads(result.stdout)
    # Ray is already up in this process: the command joins it and leaves it running.
    argv = ["run", quickstart, "--store", store, "--json", "--executor", "ray"]
    result = CliRunner().invoke(app, argv)
    remote = json.loads(result.stdout)
    import ray

    assert ray.is_initialized()
    assert result.exit_code == (0 if remote["summary"]["passed"] else 1)
    assert _without_latency(json.dumps(remote["summary"])) == _without_latency(
        json.dumps(local["summary"])
    )
    result = CliRunner().invoke(app, ["grade", remote["runId"], "--store", store])
    assert result.exit_code == 0
    assert "reproduces the stored summary exactly" in result.stdout


@pytest.mark.parametrize(
    ("extra", "problem"),
    [
        (["--executor", "dask"], "--executor: 'dask' is not one of local, ray"),
        (["--ray-address", "127.0.0.1:6379"], "--ray-address needs --executor ray"),
        (["--executor", "ray", "--mcp", "python3 -m srv"], "--mcp cannot be used"),
    ],
)
def test_cli_refuses_bad_executor_options(tmp_path: Path, extra: list[str], problem: str) -> None:
    quickstart = str(ROOT / "examples" / "quickstart" / "suite.yaml")
    argv = ["run", quickstart, "--store", str(tmp_path / "s.db"), *extra]
    result = CliRunner().invoke(app, argv)
    assert result.exit_code == 2
    assert problem in " ".join(result.output.split())
    assert not (tmp_path / "s.db").exists()  # refused before anything was recorded


def test_importing_the_engine_and_cli_never_imports_ray() -> None:
    code = (
        "import sys; import wopeval.engine.run, wopeval.engine.distributed, wopeval.cli.app; "
        "print('ray' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
