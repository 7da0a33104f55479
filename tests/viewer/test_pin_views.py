"""The trial page's turn pins (``wopeval.viewer.pins``), without a browser: each pinned
expected call's turn, whether it held, and otherwise the turns it was made in or "never made",
read over the calls §A grades (a delegate's call takes no pin), as the ``turn pin`` reason."""

from __future__ import annotations

from typing import Any

from wopeval.grading.trajectory import ObservedCall
from wopeval.grading.turn_pins import pin_reasons
from wopeval.suite.models import TrajectoryExpectation
from wopeval.viewer.pins import PinView, graded_turns, pin_views

AGENT = "core.acme.agents.shop"


def _expect(*calls: dict[str, Any], match: str = "in-order", **extra: Any) -> Any:
    return TrajectoryExpectation.model_validate({"match": match, "calls": list(calls), **extra})


def _call(tool: str, turn: int, agent: str = AGENT) -> ObservedCall:
    return ObservedCall(tool=tool, inputs={}, agent_id=agent, turn=turn)


def test_33_5_a_plain_trajectory_has_no_pins() -> None:
    assert pin_views(_expect({"tool": "shop:get"}), [_call("shop:get", 0)], AGENT) == {}
    assert pin_views(_expect({"tool": "shop:get"}), [], AGENT) == {}


def test_33_5_each_pin_held_made_elsewhere_or_never_made() -> None:
    expectation = _expect(
        {"tool": "shop:get"},
        {"tool": "shop:get", "x-wopeval-pin": {"turn": 1}},
        {"tool": "shop:refund", "x-wopeval-pin": {"turn": 2}},
        {"tool": "shop:mail", "x-wopeval-pin": {"turn": 2}},
        match="subset",
    )
    calls = [_call("shop:get", 0), _call("shop:get", 1), _call("shop:refund", 1)]
    views = pin_views(expectation, calls, AGENT)
    assert views == {
        1: PinView(1, True),
        2: PinView(2, False, (1,)),
        3: PinView(2, False, ()),
    }
    assert [(v.text, v.miss_text) for v in views.values()] == [
        ("turn 1", ""),
        ("turn 2", "made in turn 1"),
        ("turn 2", "never made"),
    ]
    (reason,) = pin_reasons(expectation, calls)  # the page says what the reason says
    for view in views.values():
        assert view.held or f"pinned to turn {view.turn}, {view.miss_text}" in reason.message
    assert graded_turns(expectation, calls, AGENT) == [0, 1, 1]


def test_33_5_a_call_made_in_several_turns_lists_them_all() -> None:
    expectation = _expect({"tool": "shop:refund", "x-wopeval-pin": {"turn": 3}}, match="subset")
    calls = [_call("shop:refund", 0), _call("shop:refund", 2)]
    (view,) = pin_views(expectation, calls, AGENT).values()
    assert view.miss_text == "made in turn 0, 2"


def test_33_5_a_delegates_call_takes_no_pin_unless_delegates_are_graded() -> None:
    pinned = {"tool": "shop:refund", "x-wopeval-pin": {"turn": 1}}
    calls = [_call("shop:refund", 1, agent="core.acme.agents.helper")]
    assert pin_views(_expect(pinned), calls, AGENT) == {0: PinView(1, False, ())}
    assert graded_turns(_expect(pinned), calls, AGENT) == []
    delegates = _expect(pinned, includeDelegates=True)
    assert pin_views(delegates, calls, AGENT) == {0: PinView(1, True)}
