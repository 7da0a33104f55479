"""The typed wire: a closed model per event type, one discriminated union; old logs still read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import TypeAdapter, ValidationError

from tests.engine.helpers import make_suite, run_suite, scripted_task
from wopeval.events.store import EventStore
from wopeval.wire.events import (
    PAYLOAD_MODELS,
    Decided,
    EvalScored,
    InvocationStarted,
    OtherEvent,
    ProviderUsage,
    RunEvent,
    ToolReturned,
    TypedRunEvent,
)

ADAPTER: TypeAdapter[Any] = TypeAdapter(TypedRunEvent)
GOLDEN_LOG = Path(__file__).resolve().parents[1] / "events" / "golden" / "log_v1.json"
ENVELOPE = {"eventId": "0" * 26, "runId": "local/r" + "0" * 26, "timestamp": "t", "sequence": 0}


async def test_every_event_a_run_writes_is_its_types_model(store: EventStore) -> None:
    fixtures = {"onMiss": "fail", "toolResponses": [{"tool": "crm:lookup", "response": 1}]}
    script = {"calls": [{"tool": "crm:lookup"}, {"tool": "crm:other"}], "output": "x",
              "usage": [{"provider": "mock", "model": "m", "inputTokens": 3,
                         "outputTokens": 1}]}  # fmt: skip
    golden = {"kind": "golden", "match": {"strategy": "exact", "value": "x"}}
    ran = await run_suite(store, make_suite([scripted_task("t", script, golden, fixtures)]))
    seen = set()
    for event in ran.events:
        typed = ADAPTER.validate_python(event.to_wire())
        assert type(typed.payload) is PAYLOAD_MODELS[event.type], event.type
        assert typed.payload.to_wire() == event.payload  # the model round-trips the stored JSON
        seen.add(event.type)
    assert {"run.started", "eval.started", "agent.tool-returned", "provider.usage",
            "eval.scored", "wopeval.trial-failed", "run.completed"} <= seen  # fmt: skip


def test_unknown_and_vendor_types_fall_to_other_event_untouched() -> None:
    doc = {**ENVELOPE, "type": "acme.custom-thing", "payload": {"anything": [1]}}
    typed = ADAPTER.validate_python(doc)
    assert isinstance(typed, OtherEvent)
    assert typed.payload == {"anything": [1]}


def test_payloads_are_closed_but_keep_the_vendor_hatch() -> None:
    base = {"invocationId": "i", "agentId": "a", "source": "run-api"}
    assert InvocationStarted.model_validate({**base, "x-acme-note": 1}).model_extra == {
        "x-acme-note": 1
    }
    with pytest.raises(ValidationError, match="'prompt' is not a member"):
        InvocationStarted.model_validate({**base, "prompt": "leak"})
    with pytest.raises(ValidationError, match="costUsd"):  # providerUsage has no hatch at all
        ProviderUsage.model_validate(
            {"provider": "p", "model": "m", "inputTokens": 1, "outputTokens": 1, "costUsd": 1}
        )
    with pytest.raises(ValidationError, match="scoreLabel"):
        EvalScored.model_validate({"taskId": "t", "score": 1, "passed": True,
                                   "scoreLabel": "Looks fine"})  # fmt: skip


def test_wopeval_keys_are_named_fields_spelled_as_on_the_wire() -> None:
    returned = ToolReturned(
        agentId="a", toolName="t", callId="c", status="ok", fixture="served", fixture_index=2
    )
    wire = returned.to_wire()
    assert wire["x-wopeval-fixture"] == "served"
    assert wire["x-wopeval-fixtureIndex"] == 2
    assert wire["outcome"] is None  # a successful call's null outcome is kept
    assert ToolReturned.model_validate(wire).fixture_index == 2


def test_the_golden_v1_log_reads_through_the_typed_models() -> None:
    rows = json.loads(GOLDEN_LOG.read_text(encoding="utf-8"))["rows"]["events"]
    assert rows
    for row in rows:
        event = {
            "eventId": row["event_id"],
            "runId": row["run_id"],
            "type": row["type"],
            "payload": json.loads(row["payload"]),
            "timestamp": row["timestamp"],
            "sequence": row["sequence"],
            "schemaVersion": row["schema_version"],
        }
        typed = ADAPTER.validate_python(event)
        assert type(typed.payload) is PAYLOAD_MODELS[row["type"]], row["type"]


def _stored(type_: str, payload: Any) -> RunEvent:
    return RunEvent.recorded("0" * 26, "local/r1", type_, payload, "t", 0)


def test_typed_validates_once_and_keeps_the_model() -> None:
    event = _stored("agent.decided", {"agentId": "a", "decision": "ok"})
    first = event.typed
    assert isinstance(first, Decided)
    assert first.decision == "ok"
    assert event.typed is first  # cached: the second read validates nothing


def test_typed_of_a_broken_payload_raises_on_every_read() -> None:
    event = _stored("agent.decided", {"decision": "ok"})  # no agentId
    for _ in range(2):  # nothing cached by a read that raised
        with pytest.raises(ValidationError, match="agentId"):
            _ = event.typed


def test_typed_of_an_unknown_type_is_none_and_of_a_validated_event_the_same() -> None:
    assert _stored("x-vendor.thing", {"anything": 1}).typed is None
    built = RunEvent(
        eventId="0" * 26, runId="local/r1", type="agent.decided",
        payload={"agentId": "a", "decision": 1}, timestamp="t", sequence=0,
    )  # fmt: skip
    assert isinstance(built.typed, Decided)
    assert built.typed.decision == 1
