"""The seeded workflow fixtures (``conformanceSeed``), driven by the unmodified PyPI
``openwop-client`` over a real socket, on both stores.

Each fixture is held to its contract in the OpenWOP repository's ``conformance/fixtures.md``
("Per-fixture contracts"); events, payloads and snapshots are validated against the upstream v2
schemas (:mod:`tests.host.wire_schemas`), and the ``node.*``/``run.cancelled`` payloads, which the
stored excerpt lacks, against their closed defs transcribed below.
"""

from __future__ import annotations

import dataclasses
import secrets
import time
from typing import Any

import anyio
import httpx
import pytest
from jsonschema import Draft202012Validator
from openwop_client import CreateRunRequest, OpenwopClient, StreamMode, WopError

from tests.host.helpers import (
    DEMO_REF,
    KEY_A,
    KEY_B,
    SCRIPTED,
    auth,
    host_config,
    segment,
    serving,
)
from tests.host.wire_schemas import validate_event, validate_snapshot
from wopeval.events.store import EventStore
from wopeval.host.workflows import FIXTURES

SEEDED = host_config(conformanceSeed=True)
WORKFLOW_IDS = sorted(f.workflow_id for f in FIXTURES)
# openwop-sdks schemas/v2/run-event-payloads.schema.json @04b5b6a0: nodeStarted, nodeCompleted,
# nodeFailed, runCancelled (closed; ids by their ids.schema.json patterns).
_NODE_ID = {"type": "string", "pattern": r"^[A-Za-z0-9._~:-]{1,128}$"}
_ERROR = {
    "type": "object",
    "required": ["code", "message"],
    "properties": {"code": {"type": "string"}, "message": {"type": "string"}},
}
_INT = {"type": "integer", "minimum": 0}
NODE_PAYLOADS: dict[str, dict[str, Any]] = {
    "node.started": {
        "required": ["nodeId", "typeId"],
        "properties": {
            "nodeId": _NODE_ID,
            "typeId": {"type": "string", "pattern": r"^[a-z][a-z0-9_-]*(\.[a-z][a-zA-Z0-9_-]*)+$"},
            "attempt": _INT,
        },
    },
    "node.completed": {
        "required": ["nodeId"],
        "properties": {"nodeId": _NODE_ID, "outputs": {"type": "object"}, "durationMs": _INT},
    },
    "node.failed": {
        "required": ["nodeId", "error"],
        "properties": {"nodeId": _NODE_ID, "error": _ERROR, "attempts": {"type": "integer"}},
    },
    "run.cancelled": {
        "properties": {
            "reason": {"type": "string"},
            "cancelledBy": {"type": "string"},
            "durationMs": _INT,
        },
    },
}


def _wire(event: Any) -> dict[str, Any]:
    """An SDK ``RunEventDoc`` back to its wire JSON (the SDK fills absent optionals with None)."""
    return {k: v for k, v in dataclasses.asdict(event).items() if v is not None}


def _valid(doc: dict[str, Any]) -> None:
    validate_event(doc)
    shape = NODE_PAYLOADS.get(doc["type"])
    if shape is not None:
        schema = {"type": "object", "additionalProperties": False, **shape}
        Draft202012Validator(schema).validate(doc["payload"])


def _events(client: OpenwopClient, run_id: str, mode: StreamMode = "debug") -> list[Any]:
    events = list(client.runs_events(run_id, stream_mode=mode))
    for event in events:
        _valid(_wire(event))
    return events


def _wait_status(client: OpenwopClient, run_id: str, status: str) -> str:
    """Read the snapshot until it shows ``status`` (at most 10 s); returns the last status."""
    deadline = time.monotonic() + 10
    seen = str(client.runs_get(run_id).status)
    while seen != status and time.monotonic() < deadline:
        time.sleep(0.02)
        seen = str(client.runs_get(run_id).status)
    return seen


def _create(client: OpenwopClient, workflow_id: str, **inputs: Any) -> str:
    body = CreateRunRequest(workflowId=workflow_id, inputs=inputs or None)
    return str(client.runs_create(body).runId)


def test_fixtures_seeding_is_off_by_default_and_unseeded_ids_are_404(store_url: str) -> None:
    with serving(store_url) as server:
        client = OpenwopClient(server.base_url, KEY_A)
        listed = client.discovery_capabilities().fixtures
        with pytest.raises(WopError) as refused:
            _create(client, "conformance-noop")
    assert listed == ["conformance-eval-hosttest"]
    assert refused.value.status == 404
    assert refused.value.envelope is not None
    assert refused.value.envelope.error == "not_found"
    assert refused.value.envelope.details == {"field": "workflowId"}


def test_fixtures_discovery_lists_exactly_the_seeded_ids(store_url: str) -> None:
    with serving(store_url, SEEDED) as server:
        client = OpenwopClient(server.base_url, KEY_A)
        listed = client.discovery_capabilities().fixtures
        with pytest.raises(WopError) as unknown:
            _create(client, "conformance-approval")  # in the contract, not seeded here
    assert listed == sorted(["conformance-eval-hosttest", *WORKFLOW_IDS])
    assert WORKFLOW_IDS == [
        "conformance-cancellable",
        "conformance-delay",
        "conformance-failure",
        "conformance-idempotent",
        "conformance-identity",
        "conformance-multi-node",
        "conformance-noop",
    ]
    assert unknown.value.status == 404
    assert unknown.value.envelope is not None
    assert unknown.value.envelope.details == {"field": "workflowId"}


def test_fixtures_md_noop_completes_through_the_run_lifecycle(store_url: str) -> None:
    with serving(store_url, SEEDED) as server:
        client = OpenwopClient(server.base_url, KEY_A)
        run_id = _create(client, "conformance-noop")
        updates = _events(client, run_id, "updates")
        debug = _events(client, run_id)
        polled = client.runs_poll_events(run_id)
        snapshot = client.runs_get(run_id)
        with httpx.Client(base_url=server.base_url, headers=auth(KEY_A)) as raw:
            raw_snapshot = raw.get(f"/runs/{segment(run_id)}").json()
            summary = raw.get(f"/runs/{segment(run_id)}/eval-summary")
    types = ["run.started", "node.started", "node.completed", "run.completed"]
    assert [e.type for e in debug] == [e.type for e in updates] == types
    assert [e.sequence for e in debug] == [0, 1, 2, 3]
    assert debug[0].payload["workflowId"] == "conformance-noop"
    assert debug[0].payload["owner"] == raw_snapshot["owner"]
    assert debug[1].nodeId == debug[2].nodeId == "noop"
    assert debug[-1].payload["outputs"] == {}
    assert [e.eventId for e in polled.events] == [e.eventId for e in debug]
    assert (polled.isTerminal, polled.status, polled.lastSequence) == (True, "completed", 3)
    assert (snapshot.status, snapshot.workflowId) == ("completed", "conformance-noop")
    validate_snapshot(raw_snapshot)
    assert summary.status_code == 404  # a workflow run has no eval summary


def test_fixtures_md_identity_outputs_and_variables_echo_the_payload(store_url: str) -> None:
    sent = {"nested": {"list": [1, "two", None], "flag": True}, "n": 1.5}
    with serving(store_url, SEEDED) as server:
        client = OpenwopClient(server.base_url, KEY_A)
        run_id = _create(client, "conformance-identity", payload=sent)
        events = _events(client, run_id)
        with httpx.Client(base_url=server.base_url, headers=auth(KEY_A)) as raw:
            snapshot = raw.get(f"/runs/{segment(run_id)}").json()
            missing = raw.post("/runs", json={"workflowId": "conformance-identity"})
            wrong = raw.post(
                "/runs", json={"workflowId": "conformance-identity", "inputs": {"payload": 3}}
            )
            extra = raw.post(
                "/runs",
                json={"workflowId": "conformance-identity", "inputs": {"payload": {}, "x": 1}},
            )
    assert events[-1].type == "run.completed"
    assert events[-1].payload["outputs"] == {"payload": sent}
    assert events[0].payload["inputs"] == {"payload": sent}
    assert snapshot["variables"] == snapshot["inputs"] == {"payload": sent}
    validate_snapshot(snapshot)
    for answer, field in (
        (missing, "inputs.payload"),
        (wrong, "inputs.payload"),
        (extra, "inputs.x"),
    ):
        assert answer.status_code == 400
        assert answer.json()["error"] == "validation_error"
        assert answer.json()["details"]["field"] == field


def test_fixtures_md_delay_is_running_in_flight_then_completed(store_url: str) -> None:
    with serving(store_url, SEEDED) as server:
        client = OpenwopClient(server.base_url, KEY_A)
        run_id = _create(client, "conformance-delay", delayMs=700)
        in_flight = _wait_status(client, run_id, "running")
        early = client.runs_poll_events(run_id, timeout_seconds=1)
        while [e.type for e in early.events] != ["run.started", "node.started"]:
            assert [e.type for e in early.events] in ([], ["run.started"])  # still starting
            early = client.runs_poll_events(run_id, timeout_seconds=1)
        # long-poll: waits for what comes after the in-flight events
        later = client.runs_poll_events(
            run_id, after_sequence=early.lastSequence, timeout_seconds=10
        )
        streamed = _events(client, run_id, "updates")  # SSE over time, to the terminal event
        final = client.runs_get(run_id).status
        with httpx.Client(base_url=server.base_url, headers=auth(KEY_A)) as raw:
            too_long = raw.post(
                "/runs", json={"workflowId": "conformance-delay", "inputs": {"delayMs": 30_001}}
            )
    assert in_flight == "running"
    assert early.isTerminal is False
    assert [e.type for e in early.events] == ["run.started", "node.started"]
    assert later.events[0].type == "node.completed"
    assert later.events[0].payload["durationMs"] >= 700
    assert [e.type for e in streamed][-1] == "run.completed"
    assert final == "completed"
    assert too_long.status_code == 400
    assert too_long.json()["details"]["field"] == "inputs.delayMs"


def test_fixtures_md_failure_ends_failed_with_its_error(store_url: str) -> None:
    with serving(store_url, SEEDED) as server:
        client = OpenwopClient(server.base_url, KEY_A)
        run_id = _create(client, "conformance-failure")
        events = _events(client, run_id)
        snapshot = client.runs_get(run_id)
    error = {"code": "conformance_test_failure", "message": "Intentional conformance failure"}
    assert [e.type for e in events] == ["run.started", "node.started", "node.failed", "run.failed"]
    assert events[2].payload["error"] == events[3].payload["error"] == error
    assert events[3].payload["failedNodeId"] == "fail"
    assert snapshot.status == "failed"
    assert snapshot.error is not None
    assert (snapshot.error.code, snapshot.error.message) == (error["code"], error["message"])


def test_runs_md_cancel_cancellable_holds_until_cancelled(store_url: str) -> None:
    with serving(store_url, SEEDED) as server:
        client = OpenwopClient(server.base_url, KEY_A)
        held = _create(client, "conformance-cancellable")
        timed = _create(client, "conformance-cancellable", delayMs=60_000)
        for run_id in (held, timed):
            _wait_status(client, run_id, "running")
        cancelled = [client.runs_cancel(run_id) for run_id in (held, timed)]
        logs = [_events(client, run_id) for run_id in (held, timed)]
        done = _create(client, "conformance-noop")
        _events(client, done)
        with pytest.raises(WopError) as terminal:
            client.runs_cancel(done)
    assert [c.status for c in cancelled] == ["cancelled", "cancelled"]
    for log in logs:
        assert [e.type for e in log] == ["run.started", "node.started", "run.cancelled"]
    assert terminal.value.status == 409
    assert terminal.value.envelope is not None
    assert terminal.value.envelope.error == "run_terminal"


def test_idempotency_md_layer1_replay_and_conflict_on_the_idempotent_fixture(
    store_url: str,
) -> None:
    key = secrets.token_urlsafe(16)
    body = CreateRunRequest(workflowId="conformance-idempotent", inputs={"nonce": "n-1"})
    other = CreateRunRequest(workflowId="conformance-idempotent", inputs={"nonce": "n-2"})
    with serving(store_url, SEEDED) as server:
        client = OpenwopClient(server.base_url, KEY_A)
        first = client.runs_create(body, idempotency_key=key)
        second = client.runs_create(body, idempotency_key=key)
        with pytest.raises(WopError) as clash:
            client.runs_create(other, idempotency_key=key)
        with pytest.raises(WopError) as short:
            client.runs_create(body, idempotency_key="a" * 21)
        with pytest.raises(WopError) as nonce:
            client.runs_create(CreateRunRequest(workflowId="conformance-idempotent"))
        with httpx.Client(base_url=server.base_url, headers=auth(KEY_A)) as raw:
            keyed = raw.post(
                "/runs",
                json={"workflowId": "conformance-idempotent", "inputs": {"nonce": "n-1"}},
                headers={"Idempotency-Key": key},
            )
        events = _events(client, first.runId)
    assert second.runId == first.runId
    assert keyed.json()["runId"] == first.runId
    assert keyed.headers["OpenWOP-Idempotent-Replay"] == "true"
    assert clash.value.status == 409
    assert clash.value.envelope is not None
    assert clash.value.envelope.error == "idempotency_key_mismatch"
    assert (short.value.status, nonce.value.status) == (400, 400)
    assert short.value.envelope is not None
    assert short.value.envelope.error == "idempotency_key_invalid"
    assert events[-1].type == "run.completed"


def test_fixtures_md_multi_node_completes_nodes_in_order(store_url: str) -> None:
    with serving(store_url, SEEDED) as server:
        client = OpenwopClient(server.base_url, KEY_A)
        events = _events(client, _create(client, "conformance-multi-node"), "updates")
    completed = [e for e in events if e.type == "node.completed"]
    assert [e.nodeId for e in completed] == ["a", "b", "c"]
    assert [e.sequence for e in completed] == sorted(e.sequence for e in completed)


def test_runs_md_identity_a_fixture_run_is_invisible_to_another_tenant(store_url: str) -> None:
    with serving(store_url, SEEDED) as server:
        owner = OpenwopClient(server.base_url, KEY_A)
        intruder = OpenwopClient(server.base_url, KEY_B)
        run_id = _create(owner, "conformance-cancellable")
        answers = []
        for call in (intruder.runs_get, intruder.runs_poll_events, intruder.runs_cancel):
            with pytest.raises(WopError) as refused:
                call(run_id)
            answers.append(refused.value.status)
        still = owner.runs_get(run_id).status
        owner.runs_cancel(run_id)
    assert answers == [404, 404, 404]
    assert still in ("pending", "running")


def test_fixtures_runs_hold_no_eval_slot_and_shutdown_interrupts_them(store_url: str) -> None:
    config = host_config(conformanceSeed=True, concurrency=1)
    with serving(store_url, config) as server:
        client = OpenwopClient(server.base_url, KEY_A)
        held = _create(client, "conformance-cancellable")
        _wait_status(client, held, "running")
        created = client.runs_create(
            CreateRunRequest(mode="eval", evalSuiteRef=DEMO_REF, agentId=SCRIPTED)
        )
        evaluated = list(client.runs_events(created.runId))  # completes beside the held run
    assert evaluated[-1].type == "run.completed"

    async def after_shutdown() -> tuple[str, list[str]]:
        store = await EventStore.open(store_url)
        try:
            record = await store.get_run(held)
            assert record is not None
            return record.status, [e.type for e in await store.events(held)]
        finally:
            await store.close()

    status, types = anyio.run(after_shutdown)
    assert status == "failed"
    assert types == ["run.started", "node.started", "run.failed"]
