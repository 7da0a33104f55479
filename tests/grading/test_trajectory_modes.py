"""RFC 0244 §A trajectory grading on hand-worked cases (wopeval.grading.trajectory).

The first five tests are the RFC's conformance tasks (§Conformance,
``conformance-eval-trajectory``): a match under ``in-order`` with an args ``subset``, a wrong
order, a ``forbidden`` hit, a trajectory-only ``subset`` with repeats and an ``exact`` args
mismatch.
"""

from __future__ import annotations

from typing import Any

from wopeval.grading.jsonmatch import matches
from wopeval.grading.trajectory import (
    ObservedCall,
    grade_trajectory,
    max_matching_size,
    observed_trajectory,
)
from wopeval.suite.models import ExpectedCall, TrajectoryExpectation, TrajectoryMode
from wopeval.wire.summary import TrajectoryBlock


def call_matches(expected: ExpectedCall, observed: ObservedCall) -> bool:
    """The one definition of call matching, on an observed call."""
    return matches(expected, observed.tool, observed.inputs)


AGENT = "support-agent"
LOOKUP = "crm:lookup-order"
REFUND = "billing:refund"
REFUND_ALL = "billing:refund-all"
NOTIFY = "mail:notify"


def _expect(mode: TrajectoryMode, *calls: ExpectedCall, **extra: Any) -> TrajectoryExpectation:
    return TrajectoryExpectation(match=mode, calls=list(calls), **extra)


def _call(tool: str, inputs: object = None, agent: str = AGENT) -> ObservedCall:
    return ObservedCall(tool=tool, inputs=inputs, agent_id=agent)


def _block(mode: TrajectoryMode, matched: bool, *counts: int) -> TrajectoryBlock:
    expected, observed, matched_count, forbidden = counts
    return TrajectoryBlock(
        mode=mode,
        matched=matched,
        expectedCount=expected,
        observedCount=observed,
        matchedCount=matched_count,
        forbiddenCount=forbidden,
    )


REFUND_CALLS = (
    ExpectedCall(tool=LOOKUP, argsMatch="ignore"),
    ExpectedCall(tool=REFUND, args={"amountMinor": 4200}, argsMatch="subset"),
)


def test_0244_A_in_order_with_args_subset() -> None:
    observed = [
        _call(LOOKUP, {"orderId": "o-1"}),
        _call(NOTIFY, {"to": "c-1"}),
        _call(REFUND, {"amountMinor": 4200, "currency": "EUR"}),
    ]
    grade = grade_trajectory(_expect("in-order", *REFUND_CALLS), observed, AGENT)
    # lookup ↔ call 0 (args ignored), refund ↔ call 2 (subset holds); notify is an allowed extra.
    assert grade == _block("in-order", True, 2, 3, 2, 0)


def test_0244_A_in_order_wrong_order() -> None:
    observed = [
        _call(REFUND, {"amountMinor": 4200}),
        _call(LOOKUP, {"orderId": "o-1"}),
    ]
    grade = grade_trajectory(_expect("in-order", *REFUND_CALLS), observed, AGENT)
    # Both calls match one-to-one (matchedCount 2), but not as a subsequence in order.
    assert grade == _block("in-order", False, 2, 2, 2, 0)


def test_0244_A_forbidden_hit_fails_every_mode() -> None:
    observed = [
        _call(LOOKUP, {"orderId": "o-1"}),
        _call(REFUND, {"amountMinor": 4200}),
        _call(REFUND_ALL, {}),
    ]
    modes: list[TrajectoryMode] = ["exact", "in-order", "any-order", "subset"]
    for mode in modes:
        expectation = _expect(mode, *REFUND_CALLS, REFUND_CALLS[0], forbidden=[REFUND_ALL])
        grade = grade_trajectory(expectation, observed[:2] + observed[2:], AGENT)
        assert grade.matched is False, mode
        assert grade.forbiddenCount == 1
    # Without the forbidden call the same expectation matches under any-order.
    clean = _expect("any-order", *REFUND_CALLS, forbidden=[REFUND_ALL])
    assert grade_trajectory(clean, observed[:2], AGENT) == _block("any-order", True, 2, 2, 2, 0)


def test_0244_A_forbidden_counts_every_call_to_it() -> None:
    observed = [_call(REFUND_ALL), _call(LOOKUP), _call(REFUND_ALL)]
    expectation = _expect("in-order", REFUND_CALLS[0], forbidden=[REFUND_ALL])
    assert grade_trajectory(expectation, observed, AGENT) == _block("in-order", False, 1, 3, 1, 2)


def test_0244_A_trajectory_only_subset_with_repeats() -> None:
    search = ExpectedCall(tool="kb:search", argsMatch="ignore")
    fetch = ExpectedCall(tool="kb:fetch", args={"id": 7}, argsMatch="exact")
    observed = [
        _call("kb:search", {"q": "a"}),
        _call("kb:search", {"q": "b"}),
        _call("kb:fetch", {"id": 7}),
        _call("kb:search", {"q": "c"}),
    ]
    grade = grade_trajectory(_expect("subset", search, fetch), observed, AGENT)
    # Every observed call matches some expected call; repeats are allowed. One-to-one, only one
    # search and the fetch can be paired, so matchedCount is 2.
    assert grade == _block("subset", True, 2, 4, 2, 0)
    # One call to a tool outside the expected calls breaks subset.
    grade = grade_trajectory(_expect("subset", search, fetch), [*observed, _call(NOTIFY)], AGENT)
    assert grade == _block("subset", False, 2, 5, 2, 0)
    # So does a call to an expected tool whose arguments match no expected call.
    grade = grade_trajectory(
        _expect("subset", search, fetch), [_call("kb:fetch", {"id": 8})], AGENT
    )
    assert grade == _block("subset", False, 2, 1, 0, 0)


def test_0244_A_exact_args_mismatch() -> None:
    calls = (
        ExpectedCall(tool=LOOKUP, args={"orderId": "o-1"}, argsMatch="exact"),
        ExpectedCall(tool=REFUND, args={"amountMinor": 4200}, argsMatch="exact"),
    )
    observed = [_call(LOOKUP, {"orderId": "o-1"}), _call(REFUND, {"amountMinor": 4200, "x": 1})]
    # Same length and order, but the refund carries an extra key, so exact args fail.
    assert grade_trajectory(_expect("exact", *calls), observed, AGENT) == _block(
        "exact", False, 2, 2, 1, 0
    )
    observed[1] = _call(REFUND, {"amountMinor": 4200.0})
    assert grade_trajectory(_expect("exact", *calls), observed, AGENT) == _block(
        "exact", True, 2, 2, 2, 0
    )


def test_0244_A_exact_needs_the_same_order_where_subset_and_any_order_do_not() -> None:
    calls = (
        ExpectedCall(tool=LOOKUP, args={"orderId": "o-1"}, argsMatch="exact"),
        ExpectedCall(tool=REFUND, args={"amountMinor": 4200}, argsMatch="exact"),
    )
    observed = [_call(REFUND, {"amountMinor": 4200}), _call(LOOKUP, {"orderId": "o-1"})]
    ordered: list[TrajectoryMode] = ["exact", "in-order"]
    unordered: list[TrajectoryMode] = ["any-order", "subset"]
    for mode in ordered:
        assert grade_trajectory(_expect(mode, *calls), observed, AGENT) == _block(
            mode, False, 2, 2, 2, 0
        )
    for mode in unordered:
        assert grade_trajectory(_expect(mode, *calls), observed, AGENT).matched


def test_0244_A_exact_first_grade_keeps_booleans_apart_from_numbers() -> None:
    # Each expectation is new, so nothing is compiled: the call-by-call path decides, where
    # == says {"n": True} equals {"n": 1} and only the marshal bytes (or the keys) tell.
    want = ExpectedCall(tool=LOOKUP, args={"n": 1}, argsMatch="exact")
    assert not grade_trajectory(_expect("exact", want), [_call(LOOKUP, {"n": True})], AGENT).matched
    assert grade_trajectory(_expect("exact", want), [_call(LOOKUP, {"n": 1.0})], AGENT).matched
    assert not grade_trajectory(_expect("exact", want), [_call(REFUND, {"n": 1})], AGENT).matched


def test_0244_A_exact_needs_the_same_length() -> None:
    observed = [_call(LOOKUP), _call(REFUND, {"amountMinor": 4200}), _call(NOTIFY)]
    assert grade_trajectory(_expect("exact", *REFUND_CALLS), observed, AGENT) == _block(
        "exact", False, 2, 3, 2, 0
    )
    assert grade_trajectory(_expect("in-order", *REFUND_CALLS), observed, AGENT).matched


def test_0244_A_any_order_needs_distinct_observed_calls() -> None:
    calls = (ExpectedCall(tool=LOOKUP), ExpectedCall(tool=LOOKUP))
    # One observed lookup cannot satisfy two expected lookups.
    one = [_call(LOOKUP)]
    assert grade_trajectory(_expect("any-order", *calls), one, AGENT) == _block(
        "any-order", False, 2, 1, 1, 0
    )
    two = [_call(NOTIFY), _call(LOOKUP), _call(LOOKUP)]
    assert grade_trajectory(_expect("any-order", *calls), two, AGENT) == _block(
        "any-order", True, 2, 3, 2, 0
    )


def test_0244_A_matched_count_beats_first_fit_greedy() -> None:
    calls = [
        ExpectedCall(tool="a", argsMatch="ignore"),
        ExpectedCall(tool="a", args={"x": 1}, argsMatch="exact"),
    ]
    observed = [_call("a", {"x": 1}), _call("a", {"x": 2})]
    # First fit in expected order pairs the ignore call with {x:1} and then the exact call finds
    # nothing (1). The maximum pairs exact↔{x:1} and ignore↔{x:2} (2).
    first_fit = 0
    used: set[int] = set()
    for want in calls:
        for index, got in enumerate(observed):
            if index not in used and call_matches(want, got):
                used.add(index)
                first_fit += 1
                break
    assert first_fit == 1
    assert max_matching_size(calls, observed) == 2
    assert grade_trajectory(_expect("any-order", *calls), observed, AGENT) == _block(
        "any-order", True, 2, 2, 2, 0
    )


def test_0244_A_matched_count_on_a_path_of_subset_matches() -> None:
    # o_j carries {x: ⌊j/2⌋, y: ⌊(j+1)/2⌋}. {x: i} matches o_2i and o_2i+1; {y: i} matches
    # o_2i-1 and o_2i. With m x-calls and m-1 y-calls on 2m observed calls the graph is one path
    # o_0 - x0 - o_1 - y1 - o_2 - x1 - ... - o_2m-1, whose maximum matching saturates all 2m-1
    # expected calls (x_i ↔ o_2i, y_i ↔ o_2i-1).
    m = 40
    observed = [_call("t", {"x": j // 2, "y": (j + 1) // 2}) for j in range(2 * m)]
    xs = [ExpectedCall(tool="t", args={"x": i}, argsMatch="subset") for i in range(m)]
    ys = [ExpectedCall(tool="t", args={"y": i}, argsMatch="subset") for i in range(1, m)]
    assert max_matching_size(ys + xs, observed[::-1]) == 2 * m - 1
    # Keep only o_0..o_9: the path is o_0 - x0 - ... - x4 - o_9 - y5 (y5 lost o_10), ten
    # expected and ten observed calls, perfectly matched by y5 ↔ o_9, x4 ↔ o_8, ..., x0 ↔ o_0.
    assert max_matching_size(ys + xs, observed[:10]) == 10


def test_0244_A_observed_trajectory_is_the_target_agents_own_calls() -> None:
    observed = [
        _call(LOOKUP),
        _call(REFUND, {"amountMinor": 4200}, agent="billing-delegate"),
    ]
    own = _expect("in-order", *REFUND_CALLS)
    assert observed_trajectory(own, observed, AGENT) == observed[:1]
    assert grade_trajectory(own, observed, AGENT) == _block("in-order", False, 2, 1, 1, 0)
    wide = _expect("in-order", *REFUND_CALLS, includeDelegates=True)
    assert observed_trajectory(wide, observed, AGENT) == observed
    assert grade_trajectory(wide, observed, AGENT) == _block("in-order", True, 2, 2, 2, 0)


def test_0244_A_forbidden_reads_the_same_filtered_calls() -> None:
    observed = [_call(LOOKUP), _call(REFUND_ALL, agent="billing-delegate")]
    own = _expect("in-order", REFUND_CALLS[0], forbidden=[REFUND_ALL])
    assert grade_trajectory(own, observed, AGENT) == _block("in-order", True, 1, 1, 1, 0)
    wide = _expect("in-order", REFUND_CALLS[0], forbidden=[REFUND_ALL], includeDelegates=True)
    assert grade_trajectory(wide, observed, AGENT) == _block("in-order", False, 1, 2, 1, 1)


def test_0244_A_empty_expectations() -> None:
    nothing: list[ObservedCall] = []
    for mode in ("exact", "in-order", "any-order", "subset"):
        assert grade_trajectory(_expect(mode), nothing, AGENT).matched, mode
    some = [_call(LOOKUP)]
    assert not grade_trajectory(_expect("exact"), some, AGENT).matched
    assert grade_trajectory(_expect("in-order"), some, AGENT).matched
    assert grade_trajectory(_expect("any-order"), some, AGENT).matched
    assert not grade_trajectory(_expect("subset"), some, AGENT).matched


def test_0244_A_large_trajectory_of_one_tool() -> None:
    # 10,000 calls of one tool against 10,000 ignore-mode expectations: one class each side.
    observed = [_call("t", {"i": i}) for i in range(10_000)]
    ignore = [ExpectedCall(tool="t")] * 10_000
    assert max_matching_size(ignore, observed) == 10_000
    assert max_matching_size(ignore[:3], observed) == 3
    exact = [ExpectedCall(tool="t", args={"i": i}, argsMatch="exact") for i in range(0, 20_000, 2)]
    # Only the even half of 0..19,998 was observed.
    assert max_matching_size(exact, observed) == 5_000
    assert max_matching_size(exact + ignore[:7_000], observed) == 10_000
