"""The OTLP export of a resumed run: the attempt the interruption left unscored is marked
superseded (``openwop.eval.superseded``) and ended where the trial ran again, and
``import-otlp`` of the export reads one trial per (task, trial), as grading does. It used to
refuse the file: "traces … and … both claim trial 0 of task 't'"."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
from typer.testing import CliRunner

from wopeval.agents.openai_compat import ModelUnavailable
from wopeval.cli.app import app
from wopeval.engine.agent import Usage
from wopeval.engine.registry import Registry
from wopeval.engine.run import RunHandle, RunSettings
from wopeval.events.store import EventStore
from wopeval.service.runs import RunService
from wopeval.suite import parse_suite
from wopeval.wire.request import RetryPolicy
from wopeval.wire.vocab import OTEL_SUPERSEDED

SUITE = {
    "suiteId": "core.test.evals.resumedotel",
    "version": "1.0.0",
    "modes": ["golden"],
    "trials": {"count": 2},
    "tasks": [
        {"taskId": "t", "input": {},
         "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}}},
    ],
}  # fmt: skip


async def _resumed_run(store_url: str) -> str:
    """A run interrupted while its first trial ran (as SIGTERM leaves it), then resumed. Each
    attempt reports a model call costing $0.25, the superseded one too."""
    started, release = anyio.Event(), anyio.Event()

    async def agent(task_input: Any, ctx: Any) -> Any:
        await ctx.report_usage(Usage("p", "m", input_tokens=3, output_tokens=2, cost_usd=0.25))
        if not release.is_set():
            started.set()
            await anyio.sleep(30)
        return "ok"

    registry = Registry()
    registry.register_agent("test.agent", agent)
    async with await EventStore.open(store_url) as store:
        service = RunService(store, registry)
        plan = await service.plan(parse_suite(SUITE), "test.agent", RunSettings(concurrency=1))
        record = await service.create(plan)
        handle = RunHandle(record.run_id)
        async with anyio.create_task_group() as group:
            group.start_soon(service.execute, plan, handle)
            await started.wait()
            handle.interrupt()
            handle.cancel()
        release.set()
        _, summary = await service.resume(record.run_id)
        assert summary is not None
        return record.run_id


async def _retried_run(store_url: str) -> str:
    """A run whose first trial's first attempt failed for infrastructure and was retried."""
    attempts: list[int] = []

    async def agent(task_input: Any, ctx: Any) -> Any:
        attempts.append(ctx.trial_index)
        if attempts.count(0) == 1 and ctx.trial_index == 0:
            raise ModelUnavailable("the model server at http://h/v1 answered HTTP 503")
        return "ok"

    registry = Registry()
    registry.register_agent("test.agent", agent)
    policy = RetryPolicy(maxRetries=1, backoffS=0.0)
    async with await EventStore.open(store_url) as store:
        service = RunService(store, registry)
        settings = RunSettings(concurrency=1, retry_infrastructure=policy)
        plan = await service.plan(parse_suite(SUITE), "test.agent", settings)
        record = await service.create(plan)
        await service.execute(plan, RunHandle(record.run_id))
        return record.run_id


def _agent_spans(runner: CliRunner, run_id: str, store: str, exported: Path) -> list[Any]:
    result = runner.invoke(app, ["export", run_id, "--format", "otel", "-o", str(exported),
                                 "--store", store])  # fmt: skip
    assert result.exit_code == 0, result.output
    return [
        span
        for line in exported.read_text().splitlines()
        for resource in json.loads(line).get("resourceSpans", [])
        for scope in resource["scopeSpans"]
        for span in scope["spans"]
        if span["name"].startswith("invoke_agent")
    ]


def _superseded(spans: list[Any]) -> list[Any]:
    return [
        span for span in spans
        if {"key": OTEL_SUPERSEDED, "value": {"boolValue": True}} in span["attributes"]
    ]  # fmt: skip


def test_the_export_says_why_an_attempt_was_superseded(tmp_path: Path) -> None:
    runner = CliRunner()
    resumed = anyio.run(_resumed_run, str(tmp_path / "r.db"))
    retried = anyio.run(_retried_run, str(tmp_path / "t.db"))
    spans = {
        "resumed": _superseded(_agent_spans(runner, resumed, str(tmp_path / "r.db"),
                                            tmp_path / "r.jsonl")),
        "retried": _superseded(_agent_spans(runner, retried, str(tmp_path / "t.db"),
                                            tmp_path / "t.jsonl")),
    }  # fmt: skip
    messages = {why: [s["status"].get("message") for s in found] for why, found in spans.items()}
    assert messages == {
        "resumed": ["superseded: the run was resumed"],
        "retried": ["superseded: retried"],
    }


def test_the_export_of_a_resumed_run_imports_one_trial_per_pair(tmp_path: Path) -> None:
    store = str(tmp_path / "s.db")
    run_id = anyio.run(_resumed_run, store)
    exported = tmp_path / "run.otel.jsonl"
    runner = CliRunner()
    agents = _agent_spans(runner, run_id, store, exported)
    marked = _superseded(agents)
    assert (len(agents), len(marked)) == (3, 1)  # two trials, one attempt superseded
    suite = tmp_path / "suite.json"
    suite.write_text(json.dumps(SUITE))
    converted = tmp_path / "converted.jsonl"
    result = runner.invoke(app, ["import-otlp", str(exported), "--suite", str(suite), "--json",
                                 "--events-out", str(converted)])  # fmt: skip
    assert result.exit_code in (0, 1), result.output  # graded (content-free: no outputs)
    events = [json.loads(line) for line in converted.read_text().splitlines()]
    scored = [e["payload"] for e in events if e["type"] == "eval.scored"]
    assert sorted(p.get("trialIndex", 0) for p in scored) == [0, 1]  # each pair once
    # What the superseded attempt spent is the run's too: the total round-trips ($0.75), and
    # the task's cost stays its two trials' ($0.50), as in the stored run.
    stored = runner.invoke(app, ["show", run_id, "--json", "--store", store])
    assert stored.exit_code in (0, 1), stored.output
    imported = json.loads(result.output)
    original = json.loads(stored.output)["summary"]
    assert original["totalCostUsd"] == imported["totalCostUsd"] == 0.75
    assert [t["costUsd"] for t in imported["tasks"]] == [t["costUsd"] for t in original["tasks"]]
