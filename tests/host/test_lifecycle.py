"""Runs execute in the host process: restarts, shutdown, concurrency, and one store with the CLI."""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

import anyio
import httpx
import pytest
from typer.testing import CliRunner

from tests.host.helpers import (
    DEMO_ID,
    SLOW_AGENT,
    SLOW_REF,
    SUITES,
    auth,
    eval_body,
    host_config,
    running_host,
    segment,
    serving,
)
from wopeval.cli.app import app as cli_app
from wopeval.engine import run as engine_run
from wopeval.engine.run import RunHandle, RunSettings
from wopeval.events.store import EventStore
from wopeval.service import runs as service_runs
from wopeval.service.runs import create_run_record
from wopeval.suite import load_suite
from wopeval.suite.models import AgentEvalSuite
from wopeval.wire.request import HostRequest


async def test_restart_fails_runs_left_unfinished_keeping_their_events(store_url: str) -> None:
    store = await EventStore.open(store_url)
    try:  # a host that died mid-run: run.started recorded, status running
        suite = load_suite(SUITES / "plain.json")
        record = await create_run_record(
            store, suite, SLOW_AGENT, RunSettings(), tenant="acme",
            host=HostRequest(bodySha256="0" * 64),
        )  # fmt: skip
        await store.set_status(record.run_id, "running")
        before = await store.append(record.run_id, "run.started", {"workflowId": suite.suiteId})
    finally:
        await store.close()
    async with running_host(store_url, host_config(resumeInterrupted=False)) as host:
        snapshot = (await host.get(f"/runs/{segment(record.run_id)}")).json()
        poll = (await host.get(f"/runs/{segment(record.run_id)}/events/poll")).json()
    assert snapshot["status"] == "failed"
    assert snapshot["error"]["code"] == "wopeval.interrupted"
    assert poll["isTerminal"] is True
    assert poll["events"][0]["eventId"] == before.eventId
    assert [e["type"] for e in poll["events"]] == ["run.started", "run.failed"]
    assert poll["events"][1]["payload"]["error"]["code"] == "wopeval.interrupted"


async def test_shutdown_marks_executing_and_queued_runs_interrupted(store_url: str) -> None:
    async with running_host(store_url, host_config(concurrency=1)) as host:
        running = await host.run_id(eval_body(SLOW_REF, agent=SLOW_AGENT))
        await host.wait_event(running, "agent.invocation-started")
        queued = await host.run_id(eval_body(SLOW_REF, agent=SLOW_AGENT))
        recorded = [e.eventId for e in await host.state.store.events(running)]
    store = await EventStore.open(store_url)
    try:
        records = [await store.get_run(run_id) for run_id in (running, queued)]
        running_log = await store.events(running)
        queued_log = await store.events(queued)
    finally:
        await store.close()
    for record in records:
        assert record is not None
        assert record.status == "failed"
        assert record.error is not None
        assert record.error["code"] == "wopeval.interrupted"
    assert [e.eventId for e in running_log[: len(recorded)]] == recorded
    assert running_log[-1].type == queued_log[-1].type == "run.failed"
    assert [e.sequence for e in running_log] == list(range(len(running_log)))


async def test_concurrency_limit_holds_runs_pending(store_url: str) -> None:
    async with running_host(store_url, host_config(concurrency=2)) as host:
        run_ids = [await host.run_id(eval_body(SLOW_REF, agent=SLOW_AGENT)) for _ in range(3)]
        for run_id in run_ids[:2]:
            await host.wait_status(run_id, "running")
        statuses = [(await host.get(f"/runs/{segment(r)}")).json()["status"] for r in run_ids]
    assert statuses == ["running", "running", "pending"]


def test_cli_show_reads_a_run_created_over_http(store_url: str) -> None:
    with serving(store_url) as server, httpx.Client(base_url=server.base_url) as client:
        run_id = client.post("/runs", json=eval_body(), headers=auth()).json()["runId"]
        poll = f"/runs/{segment(run_id)}/events/poll?timeout=5"
        while not client.get(poll, headers=auth()).json()["isTerminal"]:
            pass
    result = CliRunner().invoke(cli_app, ["show", run_id, "--store", store_url, "--json"])
    assert result.exit_code == 0, result.output
    shown = json.loads(result.stdout)
    assert shown["runId"] == run_id
    assert shown["status"] == "completed"
    assert shown["summary"]["suiteId"] == DEMO_ID


async def test_a_cancellation_leaking_past_a_run_never_stops_the_host(
    store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run whose cancellation escapes its own scope as a bare ``CancelledError`` (as one that
    lands inside the store's ``append`` does) ends that run only: the manager's task group, the
    other runs and the lifespan keep going."""
    real_execute_run = engine_run.execute_run

    async def leaky_execute_run(store: EventStore, handle: RunHandle, suite: AgentEvalSuite,
                                *args: Any, **kwargs: Any) -> Any:  # fmt: skip
        if suite.suiteId != "core.wopeval.evals.slow":
            return await real_execute_run(store, handle, suite, *args, **kwargs)
        await store.set_status(handle.run_id, "running")
        try:
            with handle.scope:
                with contextlib.suppress(asyncio.CancelledError):
                    await anyio.sleep(30)
                raise asyncio.CancelledError  # a fresh one: not recognized by the scope
        finally:
            with anyio.CancelScope(shield=True):
                await store.append(handle.run_id, "run.cancelled", {})
                await store.set_status(handle.run_id, "cancelled")

    monkeypatch.setattr(service_runs, "execute_run", leaky_execute_run)
    reached_the_end = False
    async with running_host(store_url) as host:
        leaky = await host.run_id(eval_body(SLOW_REF, agent=SLOW_AGENT))
        await host.wait_status(leaky, "running")
        cancelled = await host.client.post(f"/runs/{segment(leaky)}/cancel", headers=auth())
        after = await host.run_id()
        final = await host.wait_terminal(after)
        reached_the_end = True
    assert reached_the_end
    assert cancelled.json()["status"] == "cancelled"
    assert final["status"] == "completed"
