"""User turns through OTLP, unit by unit: the export's content-free span events, their reading
from OTLP/JSON, and their places among the imported tool calls (issue 33 §5)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

from wopeval.exports.otel import otlp_json_lines, run_spans
from wopeval.service.otlp_read import OtlpEvent, OtlpSpan, read_otlp, spans_of
from wopeval.service.otlp_turns import TurnsBack
from wopeval.wire.events import Payload, RunEvent, UserTurn
from wopeval.wire.vocab import OTEL_USER_TURN_EVENT, TOOL_CALLED

T0 = "2026-12-05T00:00:00.000Z"


ROOT = "ev_test_000000000000"


def _event(seq: int, type_: str, payload: dict[str, Any], cause: str | None = ROOT) -> RunEvent:
    return RunEvent(
        eventId=f"ev_test_{seq:012d}",
        runId="acme/r1",
        type=type_,
        payload=payload,
        timestamp=T0,
        sequence=seq,
        causationId=cause,
    )


def _log() -> list[RunEvent]:
    """One trial: a turn, a call, a missed turn, a world state, then its score."""
    call = {"agentId": "a", "toolName": "get", "callId": "c1"}
    return [
        _event(
            0,
            "agent.invocation-started",
            {
                "invocationId": "i",
                "agentId": "a",
                "x-wopeval-taskId": "t",
                "x-wopeval-trialIndex": 0,
            },
            None,
        ),
        _event(
            1,
            "wopeval.user-turn",
            {
                "agentId": "a",
                "turn": 0,
                "kind": "reply",
                "message": "SECRET-Q",
                "replyIndex": 0,
                "reply": "SECRET-A",
            },
            ROOT,
        ),
        _event(2, "agent.tool-called", {**call, "inputs": {}}),
        _event(
            3,
            "agent.tool-returned",
            {
                **call,
                "status": "ok",
                "outcome": 1,
                "x-wopeval-fixture": "served",
                "x-wopeval-worldRule": 2,
            },
            ROOT,
        ),
        _event(
            4,
            "wopeval.user-turn",
            {"agentId": "a", "turn": 1, "kind": "miss", "message": "SECRET-M"},
            ROOT,
        ),
        _event(5, "wopeval.world-state", {"state": {"k": "SECRET-S"}}),
        _event(
            6,
            "agent.invocation-completed",
            {"invocationId": "i", "agentId": "a", "outcome": "completed"},
            ROOT,
        ),
        _event(
            7, "eval.scored", {"taskId": "t", "score": 0.0, "passed": False, "trialIndex": 0}, ROOT
        ),
    ]


def test_33_5_export_writes_turns_and_state_as_content_free_span_events() -> None:
    spans = run_spans("s", "acme/r1", _log())
    trial = next(s for s in spans if s.name.startswith("invoke_agent"))
    tool = next(s for s in spans if s.name.startswith("execute_tool"))
    events = [(e.name, dict(e.attributes or {})) for e in trial.events]
    assert events == [
        (
            "wopeval.user_turn",
            {
                "openwop.user.turn": 0,
                "openwop.user.kind": "reply",
                "openwop.user.calls_before": 0,
                "openwop.user.reply_index": 0,
            },
        ),
        (
            "wopeval.user_turn",
            {"openwop.user.turn": 1, "openwop.user.kind": "miss", "openwop.user.calls_before": 1},
        ),
        ("wopeval.world_state", {}),
    ]
    assert (tool.attributes or {})["openwop.tool.world_rule"] == 2
    assert "SECRET" not in otlp_json_lines("s", "acme/r1", _log())


def test_33_5_otlp_json_span_events_read_back_only_wopevals() -> None:
    line = otlp_json_lines("s", "acme/r1", _log()).splitlines()[0]
    spans = list(spans_of(json.loads(line)))
    trial = next(s for s in spans if s.name.startswith("invoke_agent"))
    assert [e.name for e in trial.events] == ["wopeval.user_turn"] * 2 + ["wopeval.world_state"]
    assert trial.events[1].attributes["openwop.user.kind"] == "miss"
    foreign = {
        "resourceSpans": [
            {
                "scopeSpans": [
                    {
                        "spans": [
                            {
                                "traceId": "AB",
                                "spanId": "CD",
                                "name": "x",
                                "events": [
                                    {"name": "exception", "timeUnixNano": "5"},
                                    "junk",
                                    {"name": "wopeval.user_turn", "timeUnixNano": "7"},
                                ],
                            }
                        ]
                    }
                ]
            }
        ]
    }
    (only,) = spans_of(foreign)
    assert only.events == (OtlpEvent("wopeval.user_turn", 7, {}),)


def test_33_5_protobuf_span_events_read_as_the_json_ones() -> None:
    data = encode_spans(run_spans("s", "acme/r1", _log())).SerializeToString()
    (trial,) = [s for s in read_otlp(data, protobuf=True) if s.name.startswith("invoke_agent")]
    line = otlp_json_lines("s", "acme/r1", _log()).splitlines()[0]
    (same,) = [s for s in spans_of(json.loads(line)) if s.name.startswith("invoke_agent")]
    assert trial.events == same.events
    assert trial.events[0].attributes["openwop.user.reply_index"] == 0


def _turn_event(turn: Any, kind: Any, before: Any, at: int = 1) -> OtlpEvent:
    attrs = {
        "openwop.user.turn": turn,
        "openwop.user.kind": kind,
        "openwop.user.calls_before": before,
    }
    return OtlpEvent(OTEL_USER_TURN_EVENT, at, attrs)


def _root(*events: OtlpEvent) -> OtlpSpan:
    return OtlpSpan("t", "s", None, "invoke_agent a", 0, 9, events=events)


def test_33_5_turns_go_back_after_the_calls_counted_before_them() -> None:
    root = _root(_turn_event(1, "stop", 2), _turn_event(0, "reply", 0))
    back = TurnsBack(root, "agent")
    log: list[RunEvent] = []
    added: list[tuple[str, Any]] = []

    def add(payload: Payload, ns: int) -> None:
        assert isinstance(payload, UserTurn)
        added.append(("turn", payload.turn))
        log.append(_event(len(log), payload.event_type, payload.to_wire()))

    def call() -> None:
        added.append(("call", None))
        log.append(_event(len(log), TOOL_CALLED, {}))

    for _ in range(3):
        back.due(log, add)
        call()
    back.due(log, add)
    back.rest(add)
    assert added == [("turn", 0), ("call", None), ("call", None), ("turn", 1), ("call", None)]


def test_33_5_turns_the_export_did_not_write_are_not_read() -> None:
    root = _root(
        _turn_event(0, "chat", 0),  # no such kind
        _turn_event(-1, "reply", 0),  # no such turn
        _turn_event(True, "reply", 0),  # a boolean is not a number
        OtlpEvent("wopeval.world_state", 1, {}),
        _turn_event(3, "miss", None),  # no count: before every call
    )
    back = TurnsBack(root, "agent")
    added: list[Payload] = []
    back.due([], lambda payload, ns: added.append(payload))
    assert [(p.turn, p.kind) for p in added if isinstance(p, UserTurn)] == [(3, "miss")]
    back.rest(lambda payload, ns: added.append(payload))
    assert len(added) == 1
    assert TurnsBack(None, "agent") is not None


def _error_log(cause: str) -> list[RunEvent]:
    """One trial whose LLM user failed on its first turn, with a detail that is content."""
    log = _log()
    failed = {"agentId": "a", "turn": 0, "kind": "error", "message": "SECRET-Q",
              "cause": cause, "error": "SECRET-DETAIL"}  # fmt: skip
    return [log[0], _event(1, "wopeval.user-turn", failed, ROOT), *log[5:]]


def _read_back(log: list[RunEvent]) -> list[UserTurn]:
    line = otlp_json_lines("s", "acme/r1", log).splitlines()[0]
    (trial,) = [s for s in spans_of(json.loads(line)) if s.name.startswith("invoke_agent")]
    return _read_back_root(trial)


@pytest.mark.parametrize(
    "cause", ["model-error", "format", "max-turns", "model-miss", "resume-diverged"]
)
def test_33_5_a_user_errors_cause_goes_out_and_comes_back(cause: str) -> None:
    text = otlp_json_lines("s", "acme/r1", _error_log(cause))
    assert "SECRET" not in text  # the message and the detail are content: never exported
    (turn,) = _read_back(_error_log(cause))
    assert (turn.turn, turn.kind, turn.cause, turn.error, turn.message) == (
        0,
        "error",
        cause,
        None,
        None,
    )


def test_33_5_a_cause_outside_the_labels_is_neither_written_nor_read() -> None:
    log = _error_log("format")
    hostile = {**log[1].payload, "cause": "<script>SECRET</script>"}
    bad = [log[0], log[1].model_copy(update={"payload": hostile}), *log[2:]]
    assert "SECRET" not in otlp_json_lines("s", "acme/r1", bad)
    (turn,) = _read_back(bad)
    assert (turn.kind, turn.cause) == ("error", None)  # graded "unknown", as before
    for value in ("anything", ["format"], {"format": 1}, 3):
        forged = _turn_event(0, "error", 0)
        forged.attributes["openwop.user.cause"] = value
        (read,) = _read_back_root(_root(forged))
        assert read.cause is None


def test_33_5_a_kind_that_is_not_a_text_is_not_a_turn() -> None:
    # an OTLP attribute may be an array or a map: never a turn, never a crash
    root = _root(_turn_event(0, ["reply"], 0), _turn_event(1, {"miss": 1}, 0))
    assert _read_back_root(root) == []


def _read_back_root(root: OtlpSpan) -> list[UserTurn]:
    added: list[Payload] = []
    TurnsBack(root, "a").rest(lambda payload, ns: added.append(payload))
    return [p for p in added if isinstance(p, UserTurn)]
