"""The trial page's conversation and state-diff models (pure): turns in log order with the calls
made before each, how each was answered, the calls after the last; the state diff at each
differing pointer, the first the reason's (issue 33 §2, §3)."""

from __future__ import annotations

from typing import Any

from tests.engine.helpers import make_suite
from wopeval.grading.views import collect_trials
from wopeval.suite.models import Task
from wopeval.viewer.conversation import StateRow, conversation_of, state_diff_of
from wopeval.viewer.render import SHORT, render, short_text
from wopeval.wire.events import RunEvent

ROOT = "ev_test_000000000000"
T0 = "2026-12-05T00:00:00.000Z"


def _event(seq: int, type_: str, payload: dict[str, Any]) -> RunEvent:
    cause = None if seq == 0 else ROOT
    return RunEvent(eventId=f"ev_test_{seq:012d}", runId="acme/r1", type=type_,
                    payload=payload, timestamp=T0, sequence=seq, causationId=cause)  # fmt: skip


def _log(*body: tuple[str, dict[str, Any]], state: Any = None) -> list[RunEvent]:
    start = {"invocationId": "i", "agentId": "a", "source": "run-api", "x-wopeval-taskId": "t",
             "x-wopeval-trialIndex": 0}  # fmt: skip
    rows = [("agent.invocation-started", start), *body]
    if state is not None:
        rows.append(("wopeval.world-state", {"state": state}))
    rows.append(("agent.invocation-completed", {"invocationId": "i", "agentId": "a",
                                                 "outcome": "completed"}))  # fmt: skip
    return [_event(seq, type_, payload) for seq, (type_, payload) in enumerate(rows)]


def _call(call_id: str, tool: str) -> list[tuple[str, dict[str, Any]]]:
    base = {"agentId": "a", "toolName": tool, "callId": call_id}
    return [("agent.tool-called", {**base, "inputs": {"id": call_id}}),
            ("agent.tool-returned", {**base, "status": "ok", "outcome": tool.upper()})]  # fmt: skip


def _turn(turn: int, kind: str, message: Any = "m", reply: Any = None) -> tuple[str, Any]:
    payload = {"agentId": "a", "turn": turn, "kind": kind, "message": message}
    if reply is not None:
        payload |= {"reply": reply, "replyIndex": turn}
    return ("wopeval.user-turn", payload)


def test_33_2_plain_trial_has_no_conversation() -> None:
    log = _log(*_call("c1", "get"), ("agent.decided", {"agentId": "a", "decision": "done"}))
    assert conversation_of(log, collect_trials(log)[("t", 0)]) is None


def test_33_2_turns_in_log_order_each_with_the_calls_before_it() -> None:
    log = _log(_turn(0, "reply", "ref?", "ABC"), *_call("c1", "get"), *_call("c2", "set"),
               _turn(1, "miss", {"ask": "dob"}), _turn(2, "ended"), *_call("c3", "late"),
               ("agent.decided", {"agentId": "a", "decision": "done"}))  # fmt: skip
    talk = conversation_of(log, collect_trials(log)[("t", 0)])
    assert talk is not None
    assert [(t.index, t.kind, [s.tool for s in t.steps]) for t in talk.turns] == [
        (0, "reply", []),
        (1, "miss", ["get", "set"]),
        (2, "ended", []),
    ]
    assert talk.turns[0].reply == "ABC"
    assert talk.turns[0].answered
    assert not talk.turns[1].answered
    assert talk.turns[1].message == {"ask": "dob"}
    assert talk.ended_by == "miss"
    assert [(s.tool, s.status, s.answer) for s in talk.tail] == [("late", "ok", "LATE")]
    assert (talk.has_output, talk.output) == (True, "done")


def test_33_2_an_unanswered_call_and_a_tool_error_are_shown_as_they_were() -> None:
    base = {"agentId": "a", "toolName": "boom", "callId": "c9"}
    error = {"code": "not_found", "message": "no such booking"}
    log = _log(("agent.tool-called", {**base, "callId": "c8", "inputs": None}),
               ("agent.tool-called", {**base, "inputs": {}}),
               ("agent.tool-returned", {**base, "status": "error", "error": error}),
               _turn(0, "max-turns"))  # fmt: skip
    talk = conversation_of(log, collect_trials(log)[("t", 0)])
    assert talk is not None
    steps = talk.turns[0].steps
    assert [(s.status, s.answer) for s in steps] == [(None, None), ("error", error)]
    assert talk.ended_by == "max-turns"
    assert not talk.has_output


def _task(match: str, state: Any) -> Task:
    final = {"match": match, "state": state}
    world = {"initial": {}, "tools": {"noop": [{"result": None}]}}
    task = {"taskId": "t", "input": {}, "x-wopeval-world": world,
            "expected": {"kind": "trajectory", "x-wopeval-finalState": final}}  # fmt: skip
    return make_suite([task]).tasks[0]


def test_33_3_state_diff_at_each_pointer_the_first_first() -> None:
    task = _task("exact", {"b": {"s": "cancelled", "n": 1}, "gone": True})
    log = _log(state={"b": {"s": "confirmed", "n": 1.0}, "extra": [1]})
    diff = state_diff_of(task, collect_trials(log)[("t", 0)])
    assert diff is not None
    assert (diff.recorded, diff.matched, diff.match) == (True, False, "exact")
    assert diff.rows == (
        StateRow("/b/s", "cancelled", "confirmed", False, False),
        StateRow("/gone", True, None, False, True),
        StateRow("/extra", None, [1], True, False),
    )


def test_33_3_state_diff_matched_unrecorded_and_absent() -> None:
    subset = _task("subset", {"b": {"n": 1}})
    matched = state_diff_of(subset, collect_trials(_log(state={"b": {"n": 1.0, "x": 2}}))[("t", 0)])
    assert matched is not None
    assert (matched.matched, matched.rows) == (True, ())
    unrecorded = state_diff_of(subset, collect_trials(_log())[("t", 0)])
    assert unrecorded is not None
    assert (unrecorded.recorded, unrecorded.matched, unrecorded.final) == (False, False, None)
    plain = make_suite([{"taskId": "t", "input": {}, "expected": {"kind": "golden",
                        "match": {"strategy": "exact", "value": 1}}}]).tasks[0]  # fmt: skip
    assert state_diff_of(plain, collect_trials(_log(state={}))[("t", 0)]) is None
    assert state_diff_of(subset, None) is None


def test_33_2_long_messages_are_shortened_at_the_limit() -> None:
    assert short_text("x" * SHORT) is None
    assert short_text("x" * (SHORT + 1)) == "x" * SHORT + "…"
    assert short_text({"k": "v"}) is None
    assert render("missing.html.j2", base="", what="trial", signed_in=None, error=None)
