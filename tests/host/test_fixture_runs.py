"""RFC 0252 ``fixtureRuns`` on ``POST /runs``: a source run's recorded tool calls become a task's
fixtures (``onMiss: "fail"``), echoed on ``eval.started``; every unusable source is refused
with one identical ``400 validation_error`` (no existence oracle)."""

from __future__ import annotations

import time
from typing import Any

from openwop_client import CreateRunRequest, OpenwopClient

from tests.host.helpers import (
    KEY_A,
    KEY_B,
    PLAIN_REF,
    SCRIPTED,
    SLOW_AGENT,
    SLOW_REF,
    Host,
    eval_body,
    host_config,
    running_host,
    serving,
)
from tests.host.test_create_refusals import refused
from tests.host.wire_schemas import validate_event
from wopeval.host.fixture_runs import UNUSABLE_FIXTURE_RUN
from wopeval.service.runs import regrade

TASK = "refund-approved"
LIVE_ORDER = {"orderId": "A-1", "from": "the live tool"}


async def _live_order(args: Any) -> Any:
    _live_order.calls += 1  # type: ignore[attr-defined]
    return LIVE_ORDER


async def _source(host: Host) -> str:
    """A live-shadow run of the demo suite: its lookup-order call reached a live tool."""
    _live_order.calls = 0  # type: ignore[attr-defined]
    host.state.registry.register_tool("crm:lookup-order", _live_order)
    source = await host.run_id(eval_body(evalModes=["live-shadow"]))
    await host.wait_terminal(source)
    assert _live_order.calls == 2  # type: ignore[attr-defined]  # two trials, live
    return source


async def test_0252_fixture_runs_serve_the_source_runs_calls_and_are_echoed(
    store_url: str,
) -> None:
    async with running_host(store_url) as host:
        source = await _source(host)
        discovery = (await host.client.get("/.well-known/openwop")).json()
        replay = await host.run_id(eval_body(fixtureRuns={TASK: source}))
        await host.wait_terminal(replay)
        events = await host.state.store.events(replay)
        regraded = await regrade(host.state.store, replay)
        record = await host.state.store.get_run(replay)
    assert discovery["agents"]["evalSuite"]["recordedFixtures"] is True
    assert _live_order.calls == 2  # type: ignore[attr-defined]  # the replay reached no live tool
    started = next(e for e in events if e.type == "eval.started")
    assert started.payload["fixtureRuns"] == {TASK: source}
    validate_event(started.to_wire())
    lookups = [
        e.payload for e in events if e.type == "agent.tool-returned"
        and e.payload["toolName"] == "crm:lookup-order"
    ]  # fmt: skip
    # served from the source run's recording, not the suite's own {"orderId": "A-1"} fixture
    assert [(p["x-wopeval-fixture"], p["outcome"]) for p in lookups] == [("served", LIVE_ORDER)] * 2
    assert record is not None
    fixtures = record.suite_document["tasks"][0]["fixtures"]
    assert fixtures["onMiss"] == "fail"
    assert fixtures["toolResponses"][0]["argsMatch"] == "exact"
    assert regraded.reproduces_stored


async def test_0252_unusable_fixture_run_refused_identically(store_url: str) -> None:
    config = host_config(conformanceSeed=True)
    async with running_host(store_url, config) as host:
        mine = await _source(host)
        theirs = (await host.create(eval_body(), key=KEY_B)).json()["runId"]
        no_task = await host.run_id(eval_body(PLAIN_REF))  # a run with no refund-approved task
        await host.wait_terminal(no_task)
        workflow = await host.run_id({"workflowId": "conformance-noop"})
        await host.wait_terminal(workflow)
        running = await host.run_id(eval_body(SLOW_REF, agent=SLOW_AGENT))
        sources = (theirs, "acme/r0000000000000000", no_task, workflow, running, "junk")
        answers = [await host.create(eval_body(fixtureRuns={TASK: s})) for s in sources]
        answers.append(await host.create(eval_body(fixtureRuns={TASK: mine}), key=KEY_B))
        not_a_task = await host.create(eval_body(fixtureRuns={"no-such-task": mine}))
        empty = await host.create(eval_body(fixtureRuns={}))
        accepted = await host.create(eval_body(fixtureRuns={TASK: mine}))
    for answer in answers:
        refused(answer, 400, "validation_error", "fixtureRuns")
        assert UNUSABLE_FIXTURE_RUN in answer.json()["message"]
    assert len({(a.status_code, a.content) for a in answers}) == 1
    refused(not_a_task, 400, "validation_error", "fixtureRuns.no-such-task")
    refused(empty, 400, "validation_error", "fixtureRuns")
    assert accepted.status_code == 201, accepted.text


async def test_0252_fixture_runs_refused_when_not_advertised(store_url: str) -> None:
    async with running_host(store_url, host_config(eval_suite={"recordedFixtures": False})) as h:
        source = await h.run_id(eval_body())
        await h.wait_terminal(source)
        discovery = (await h.client.get("/.well-known/openwop")).json()
        answer = await h.create(eval_body(fixtureRuns={TASK: source}))
    assert "recordedFixtures" not in discovery["agents"]["evalSuite"]
    refused(answer, 400, "validation_error", "fixtureRuns")


def test_interop_0252_openwop_client_creates_a_fixture_runs_run(store_url: str) -> None:
    with serving(store_url) as server:
        client = OpenwopClient(server.base_url, KEY_A)
        caps = client.discovery_capabilities()
        source = client.runs_create(
            CreateRunRequest(mode="eval", evalSuiteRef=DEMO, agentId=SCRIPTED)
        ).runId
        list(client.runs_events(source))  # to its end, then until its status says so
        while client.runs_get(source).status != "completed":
            time.sleep(0.01)
        created = client.runs_create(
            CreateRunRequest(
                mode="eval", evalSuiteRef=DEMO, agentId=SCRIPTED, fixtureRuns={TASK: source}
            )
        )
        debug = list(client.runs_events(created.runId, stream_mode="debug"))
    assert caps.families["agents"].facets["evalSuite"]["recordedFixtures"] is True
    started = next(e for e in debug if e.type == "eval.started")
    assert started.payload["fixtureRuns"] == {TASK: source}
    assert debug[-1].type == "run.completed"


DEMO = eval_body()["evalSuiteRef"]
