"""Expected calls pinned to an agent turn (``x-wopeval-pin``), graded: one more condition after
RFC 0244 §A, in every mode; the turn numbering read from the log; the reason names the call,
the turn it was made in and the turn it is pinned to; a plain expectation grades as §A alone."""

from __future__ import annotations

from typing import Any

from wopeval.grading import turn_pins
from wopeval.grading.trajectory import ObservedCall, grade_trajectory
from wopeval.grading.turn_pins import pin_misses, pin_reasons, pins_hold, pins_of
from wopeval.grading.views import collect_trials
from wopeval.suite.models import TrajectoryExpectation
from wopeval.suite.pins import PIN_KEY
from wopeval.wire.events import RunEvent

AGENT = "core.test.agent"
ROOT_ID = "event-000000000001"


def want(tool: str, turn: int | None = None, **extra: Any) -> dict[str, Any]:
    call: dict[str, Any] = {"tool": tool, **extra}
    if turn is not None:
        call[PIN_KEY] = {"turn": turn}
    return call


def expectation(mode: str, *calls: dict[str, Any]) -> TrajectoryExpectation:
    return TrajectoryExpectation.model_validate({"match": mode, "calls": list(calls)})


def made(tool: str, turn: int, args: Any = None, agent: str = AGENT) -> ObservedCall:
    return ObservedCall(tool, args if args is not None else {}, agent, turn)


def matched(exp: TrajectoryExpectation, *calls: ObservedCall) -> bool:
    return grade_trajectory(exp, list(calls), AGENT).matched


def test_33_5_plain_expectation_has_no_pins_and_grades_as_section_A() -> None:
    exp = expectation("in-order", want("a"), want("b"))
    assert pins_of(exp) == ()
    calls = [made("a", 3), made("b", 0)]  # turns mean nothing without a pin
    assert pins_hold(exp, calls)
    assert pin_misses(exp, calls) == []
    assert grade_trajectory(exp, calls, AGENT) == grade_trajectory(exp, calls, AGENT, pins=False)
    assert pin_reasons(exp, calls) == []


def test_33_5_in_order_pin_holds_only_in_its_turn() -> None:
    exp = expectation("in-order", want("look", 1), want("refund", 2))
    assert pins_of(exp) == ((0, 1), (1, 2))
    assert matched(exp, made("look", 1), made("refund", 2))
    early = grade_trajectory(exp, [made("look", 1), made("refund", 1)], AGENT)
    assert not early.matched
    assert early.matchedCount == 2  # §A's count, the pins aside
    assert grade_trajectory(exp, [made("look", 1), made("refund", 1)], AGENT, pins=False).matched
    assert not matched(exp, made("look", 1), made("refund", 3))  # late is wrong too


def test_33_5_one_call_in_the_right_turn_among_others_is_enough() -> None:
    exp = expectation("in-order", want("refund", 2))
    assert matched(exp, made("refund", 1), made("refund", 2), made("refund", 3))


def test_33_5_args_decide_which_call_meets_the_pin() -> None:
    exp = expectation("any-order", want("f", 1, args={"o": "A"}, argsMatch="subset"))
    assert matched(exp, made("f", 1, {"o": "A", "x": 1}))
    assert not matched(exp, made("f", 1, {"o": "B"}), made("f", 2, {"o": "A"}))


def test_33_5_pinned_calls_are_matched_one_to_one() -> None:
    # Two pins of the same call in turn 1 need two calls made in turn 1.
    exp = expectation("any-order", want("a", 1), want("a", 1))
    assert not matched(exp, made("a", 1), made("a", 2))
    assert matched(exp, made("a", 1), made("a", 1))
    # The first pin could take either call; an augmenting path gives the second its own.
    exp = expectation("any-order", want("a", 1), want("a", 1, args={"x": 1}, argsMatch="exact"))
    assert matched(exp, made("a", 1, {"x": 1}), made("a", 1, {"x": 2}))
    assert not matched(exp, made("a", 1, {"x": 2}), made("a", 1, {"x": 3}))


def test_33_5_subset_mode_a_pinned_call_must_be_made() -> None:
    exp = expectation("subset", want("look"), want("refund", 2))
    assert grade_trajectory(exp, [made("look", 0)], AGENT, pins=False).matched
    assert not matched(exp, made("look", 0))
    assert matched(exp, made("look", 0), made("refund", 2))
    assert not matched(exp, made("look", 0), made("refund", 0))


def test_33_5_exact_mode_the_call_at_the_pinned_position() -> None:
    exp = expectation("exact", want("a", 0), want("a"), want("b", 2))
    assert matched(exp, made("a", 0), made("a", 1), made("b", 2))
    # position 0 was made in turn 1; another ``a`` in turn 0 at position 1 does not count
    assert not matched(exp, made("a", 1), made("a", 0), made("b", 2))
    assert not matched(exp, made("a", 0), made("a", 1), made("b", 1))
    [miss] = pin_misses(exp, [made("a", 0), made("a", 1), made("b", 1)])
    assert (miss.index, miss.tool, miss.pinned, miss.made_in) == (2, "b", 2, (1,))
    # the graph path (exact compiled) and the pairwise path agree
    assert not matched(exp, made("a", 0), made("b", 2), made("a", 1))


def test_33_5_forbidden_still_fails_a_pinned_trajectory() -> None:
    exp = TrajectoryExpectation.model_validate(
        {"match": "subset", "calls": [want("a", 0)], "forbidden": ["x"]}
    )
    block = grade_trajectory(exp, [made("a", 0), made("x", 0)], AGENT)
    assert not block.matched
    assert block.forbiddenCount == 1


def test_33_5_only_the_target_agent_s_calls_meet_a_pin() -> None:
    exp = expectation("any-order", want("a", 1))
    assert not matched(exp, made("a", 1, agent="other"))
    with_delegates = TrajectoryExpectation.model_validate(
        {"match": "any-order", "calls": [want("a", 1)], "includeDelegates": True}
    )
    assert matched(with_delegates, made("a", 1, agent="other"))


def test_33_5_reason_names_the_call_and_both_turns() -> None:
    exp = expectation("in-order", want("look"), want("refund", 2), want("mail", 3))
    calls = [made("look", 0), made("refund", 1), made("refund", 4)]
    [reason] = pin_reasons(exp, calls)
    assert reason.kind == "trajectory"
    assert reason.message == (
        "turn pin: expected call #1 refund is pinned to turn 2, made in turn 1, 4; "
        "expected call #2 mail is pinned to turn 3, never made"
    )
    assert reason.details == {
        "pins": [
            {"index": 1, "tool": "refund", "pinnedTurn": 2, "madeInTurns": [1, 4]},
            {"index": 2, "tool": "mail", "pinnedTurn": 3, "madeInTurns": []},
        ]
    }


def test_33_5_reason_lists_three_misses_then_counts() -> None:
    exp = expectation("any-order", *(want(f"t{i}", 1) for i in range(5)))
    [reason] = pin_reasons(exp, [])
    assert reason.message.count("never made") == 3
    assert reason.message.endswith(" and 2 more")
    assert len(reason.details["pins"]) == 5
    [one] = pin_reasons(expectation("any-order", want("t", 1)), [])
    assert "more" not in one.message


def _event(seq: int, type_: str, payload: dict[str, Any], cause: str | None) -> RunEvent:
    return RunEvent.model_validate(
        {"eventId": f"event-{seq:012d}", "runId": "r", "sequence": seq, "type": type_,
         "timestamp": "2026-12-05T00:00:00Z", "payload": payload,
         **({"causationId": cause} if cause else {})}
    )  # fmt: skip


def test_33_5_turns_are_numbered_from_the_log_like_user_turn() -> None:
    # call, message 0 (reply), call, call, message 1 (stop), call, message after the end, call
    started = {"agentId": AGENT, "invocationId": "i", "source": "run-api",
               "x-wopeval-taskId": "t", "x-wopeval-trialIndex": 0}  # fmt: skip
    root = _event(1, "agent.invocation-started", started, None)
    seq = iter(range(2, 100))

    def call(tool: str) -> RunEvent:
        n = next(seq)
        payload = {"agentId": AGENT, "callId": f"c{n}", "toolName": tool, "inputs": {}}
        return _event(n, "agent.tool-called", payload, ROOT_ID)

    def turn(number: int, kind: str) -> RunEvent:
        payload = {"agentId": AGENT, "turn": number, "kind": kind, "message": "m"}
        if kind in ("reply", "stop"):
            payload |= {"replyIndex": number, "reply": "r"}
        return _event(next(seq), "wopeval.user-turn", payload, ROOT_ID)

    events = [root, call("a"), turn(0, "reply"), call("b"), call("c"), turn(1, "stop"),
              call("d"), turn(2, "ended"), call("e")]  # fmt: skip
    [view] = collect_trials(events).values()
    assert [(c.tool, c.turn) for c in view.calls] == [
        ("a", 0),
        ("b", 1),
        ("c", 1),
        ("d", 2),
        ("e", 2),
    ]


def test_33_5_pins_are_kept_per_expectation_and_forgotten_with_it() -> None:
    first = expectation("any-order", want("a", 1))
    second = expectation("any-order", want("b", 2))
    kept = pins_of(first)
    assert pins_of(second) == ((0, 2),)
    assert pins_of(first) is kept  # kept, not made again, though another came between
    assert pins_of(second) is pins_of(second)
    changed = first.model_copy(update={"calls": [*first.calls, *second.calls]})
    assert pins_of(changed) == ((0, 1), (1, 2))  # new calls: made again
    replaced = pins_of(changed)
    assert pins_of(changed) is replaced
    changed.calls.pop()  # in place: the same list, shorter
    assert pins_of(changed) == ((0, 1),)
    key = id(first)
    assert key in turn_pins._KEPT
    del first, kept  # the last references: CPython frees it at once
    assert key not in turn_pins._KEPT


def test_33_5_exact_pin_past_the_observed_calls_is_a_miss() -> None:
    exp = expectation("exact", want("a"), want("b", 1))
    [miss] = pin_misses(exp, [made("a", 0)])
    assert (miss.index, miss.made_in) == (1, ())


def test_33_5_competing_pins_leave_the_later_one_unmatched() -> None:
    exp = expectation("any-order", want("a", 1), want("a", 1))
    [miss] = pin_misses(exp, [made("a", 1), made("a", 0)])
    assert (miss.index, miss.made_in) == (1, (1, 0))


def test_33_5_reason_counts_more_only_past_three_and_is_shortened() -> None:
    three = pin_reasons(expectation("any-order", *(want(f"t{i}", 1) for i in range(3))), [])
    assert "more" not in three[0].message
    four = pin_reasons(expectation("any-order", *(want(f"t{i}", 1) for i in range(4))), [])
    assert four[0].message.endswith(" and 1 more")
    [long] = pin_reasons(expectation("any-order", want("x" * 400, 1)), [])
    assert len(long.message) == 300
