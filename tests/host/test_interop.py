"""Interop: ``wopeval``'s host on a real socket, driven by the unmodified PyPI ``openwop-client``.

Every event and the summary are validated against the upstream v2 schemas extended only by the
RFC 0244 optional fields (:mod:`tests.host.wire_schemas`).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import httpx
import pytest
from openwop_client import CreateRunRequest, OpenwopClient, WopError

from tests.host.helpers import (
    DEMO_ID,
    DEMO_REF,
    KEY_A,
    KEY_B,
    SCRIPTED,
    SLOW_AGENT,
    SLOW_REF,
    TENANT_A,
    auth,
    host_config,
    segment,
    serving,
)
from tests.host.wire_schemas import (
    validate_agents_record,
    validate_event,
    validate_snapshot,
    validate_summary,
)

UPDATES = ("run.", "eval.")


def _doc(event: Any) -> dict[str, Any]:
    """An SDK ``RunEventDoc`` back to its wire JSON (the SDK fills absent optionals with None)."""
    return {k: v for k, v in dataclasses.asdict(event).items() if v is not None}


def test_interop_discovery_is_the_closed_v2_root(store_url: str) -> None:
    with serving(store_url) as server:
        caps = OpenwopClient(server.base_url, KEY_A).discovery_capabilities()
    assert caps.protocolVersions == ["2.0"]
    assert caps.preferredVersion == "2.0"
    assert caps.eventLogSchemaVersion == 3
    assert caps.implementation is not None
    assert caps.implementation["name"] == "wopeval"
    agents = caps.families["agents"]
    assert (agents.status, agents.since, agents.witness) == (
        "experimental",
        "2.0",
        "witnessable-gated",
    )
    facet = agents.facets["evalSuite"]
    assert facet["trajectory"] is True
    assert facet["fixtureMatching"] is True
    assert facet["trials"] == {"maxTrials": 10}
    assert facet["regressionVerdict"] is True
    assert facet["baselineSelection"] is True
    extensions = facet["x-wopeval-extensions"]
    assert extensions["x-wopeval-adaptive"] == {"rules": ["sprt"]}
    assert extensions["x-wopeval-user"] == {
        "kinds": ["scripted", "llm"],
        "order": ["in-order", "keyed"],
    }
    assert extensions["x-wopeval-pin"] == {"pins": ["turn"]}
    assert set(extensions) == {
        "x-wopeval-adaptive",
        "x-wopeval-world",
        "x-wopeval-user",
        "x-wopeval-pin",
    }
    assert "providerUsage" in caps.families
    validate_agents_record(caps.raw["agents"])
    assert caps.fixtures == ["conformance-eval-hosttest"]


def _drive(base_url: str) -> dict[str, Any]:
    """One eval run through the SDK, plus the raw JSON of the summary, snapshot and poll."""
    client = OpenwopClient(base_url, KEY_A)
    created = client.runs_create(
        CreateRunRequest(mode="eval", evalSuiteRef=DEMO_REF, agentId=SCRIPTED)
    )
    seen: dict[str, Any] = {"created": created}
    seen["updates"] = list(client.runs_events(created.runId))
    seen["debug"] = list(client.runs_events(created.runId, stream_mode="debug"))
    seen["polled"] = polled = client.runs_poll_events(created.runId)
    seen["after"] = client.runs_poll_events(
        created.runId, after_sequence=polled.lastSequence, timeout_seconds=1
    )
    seen["summary"] = client.runs_eval_summary(created.runId)
    seen["snapshot"] = client.runs_get(created.runId)
    path = f"/runs/{segment(created.runId)}"
    with httpx.Client(base_url=base_url, headers=auth(KEY_A)) as raw:
        seen["raw_summary"] = raw.get(f"{path}/eval-summary").json()
        seen["raw_snapshot"] = raw.get(path).json()
        seen["raw_poll"] = raw.get(f"{path}/events/poll").json()
    return seen


def _check_0081_B_order(debug: list[Any]) -> Any:
    """One eval.started, one eval.scored per task × trial, one eval.completed; returns it."""
    types = [e.type for e in debug]
    assert types.count("eval.started") == types.count("eval.completed") == 1
    started = next(e for e in debug if e.type == "eval.started")
    scored = [e for e in debug if e.type == "eval.scored"]
    completed = next(e for e in debug if e.type == "eval.completed")
    assert started.payload["trialCount"] == 2
    assert len(scored) == started.payload["taskCount"] * started.payload["trialCount"]
    assert all(started.sequence < s.sequence < completed.sequence for s in scored)
    assert completed.sequence < debug[-1].sequence
    return completed


def test_interop_0081_eval_run_end_to_end_with_openwop_client(store_url: str) -> None:
    with serving(store_url) as server:
        seen = _drive(server.base_url)
    created, debug, updates = seen["created"], seen["debug"], seen["updates"]
    assert created.status == "pending"
    assert created.runId.startswith(f"{TENANT_A}/")
    assert created.eventsUrl.endswith(f"/runs/{segment(created.runId)}/events")
    # debug: the whole log, contiguous from 0, ending with run.completed
    assert [e.sequence for e in debug] == list(range(len(debug)))
    assert debug[-1].type == "run.completed"
    assert {"agent.invocation-started", "agent.tool-called", "provider.usage"} <= {
        e.type for e in debug
    }
    # updates (the default): exactly the run.* and eval.* events, in order
    assert [e.sequence for e in updates] == [
        e.sequence for e in debug if e.type.startswith(UPDATES)
    ]
    completed = _check_0081_B_order(debug)
    for event in debug:
        validate_event(_doc(event))
    for doc in seen["raw_poll"]["events"]:
        validate_event(doc)
    validate_summary(seen["raw_summary"])
    validate_snapshot(seen["raw_snapshot"])

    polled, after = seen["polled"], seen["after"]
    assert polled.isTerminal
    assert polled.status == "completed"
    assert polled.lastSequence == debug[-1].sequence
    assert [e.eventId for e in polled.events] == [e.eventId for e in debug]
    assert after.events == []
    assert after.lastSequence == polled.lastSequence

    summary, snapshot = seen["summary"], seen["snapshot"]
    assert summary is not None
    assert (summary.suiteId, summary.suiteVersion) == (DEMO_ID, "1.0.0")
    assert summary.taskCount == completed.payload["taskCount"] == 3
    assert summary.passedCount == completed.payload["passedCount"]
    assert summary.aggregateScore == completed.payload["aggregateScore"]
    assert seen["raw_summary"] == debug[-1].payload["outputs"]
    assert snapshot.status == "completed"
    assert snapshot.workflowId == DEMO_ID
    assert snapshot.eventLogSchemaVersion == 3
    assert (snapshot.owner.subject.lane, snapshot.owner.subject.subjectId) == ("api-key", "alice")
    assert debug[0].payload["owner"] == seen["raw_snapshot"]["owner"]


def test_interop_cancel_and_cross_tenant_with_openwop_client(store_url: str) -> None:
    with serving(store_url) as server:
        client = OpenwopClient(server.base_url, KEY_A)
        intruder = OpenwopClient(server.base_url, KEY_B)
        created = client.runs_create(
            CreateRunRequest(mode="eval", evalSuiteRef=SLOW_REF, agentId=SLOW_AGENT)
        )
        with pytest.raises(WopError) as running:
            client.runs_eval_summary(created.runId)
        assert intruder.runs_eval_summary(created.runId) is None
        with pytest.raises(WopError) as foreign:
            intruder.runs_get(created.runId)
        with pytest.raises(WopError) as foreign_cancel:
            intruder.runs_cancel(created.runId)
        cancelled = client.runs_cancel(created.runId)
        events = list(client.runs_events(created.runId, stream_mode="debug"))
        with pytest.raises(WopError) as after_cancel:
            client.runs_eval_summary(created.runId)

    assert running.value.status == 409
    assert running.value.envelope is not None
    assert running.value.envelope.error == "run_state_conflict"
    assert (foreign.value.status, foreign_cancel.value.status) == (404, 404)
    assert cancelled.status == "cancelled"
    assert events[-1].type == "run.cancelled"
    assert after_cancel.value.status == 409


def test_interop_0244_G_unadvertised_wopeval_extension_is_400_with_openwop_client(
    store_url: str,
) -> None:
    config = host_config(eval_suite={"extensions": []})
    with serving(store_url, config) as server:
        client = OpenwopClient(server.base_url, KEY_A)
        facet = client.discovery_capabilities().families["agents"].facets["evalSuite"]
        request = CreateRunRequest(
            mode="eval", evalSuiteRef="suite://core.wopeval.evals.adaptive", agentId=SCRIPTED
        )
        with pytest.raises(WopError) as refused:
            client.runs_create(request)
    assert "x-wopeval-extensions" not in facet
    assert refused.value.status == 400
    envelope = refused.value.envelope
    assert envelope is not None
    assert envelope.error == "validation_error"
    assert envelope.details is not None
    assert envelope.details["field"] == "tasks[0].x-wopeval-adaptive"
    assert "tasks[0].x-wopeval-adaptive" in envelope.message
