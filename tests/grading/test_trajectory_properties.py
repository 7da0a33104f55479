"""Hypothesis properties of RFC 0244 §A grading: mode implications and ``matchedCount``."""

from __future__ import annotations

from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.hypothesis_counts import examples
from wopeval.grading.jsonmatch import matches
from wopeval.grading.trajectory import (
    ObservedCall,
    grade_trajectory,
    max_matching_size,
)
from wopeval.suite.models import ArgsMatch, ExpectedCall, TrajectoryExpectation, TrajectoryMode


def call_matches(expected: ExpectedCall, observed: ObservedCall) -> bool:
    """The one definition of call matching, on an observed call."""
    return matches(expected, observed.tool, observed.inputs)


AGENT = "me"
TOOLS = st.sampled_from(["a", "b", "c"])
# Values chosen so that exact, subset and the 1 == 1.0 / True != 1 policy all bite.
ARGS = st.sampled_from(
    [{"x": 1}, {"x": 1.0}, {"x": 2}, {"x": True}, {"x": 1, "y": "z"}, {"y": "z"}, {}, 1, None]
)
ARGS_MATCH_VALUES: list[ArgsMatch | None] = [None, "ignore", "exact", "subset"]
ARGS_MATCH = st.sampled_from(ARGS_MATCH_VALUES)


@st.composite
def expected_calls(draw: st.DrawFn) -> ExpectedCall:
    mode: ArgsMatch | None = draw(ARGS_MATCH)
    return ExpectedCall(tool=draw(TOOLS), args=draw(ARGS), argsMatch=mode)


@st.composite
def observed_calls(draw: st.DrawFn) -> ObservedCall:
    return ObservedCall(tool=draw(TOOLS), inputs=draw(ARGS), agent_id=AGENT)


EXPECTED = st.lists(expected_calls(), max_size=6)
OBSERVED = st.lists(observed_calls(), max_size=7)


def _grade(
    mode: TrajectoryMode, expected: list[ExpectedCall], observed: list[ObservedCall]
) -> bool:
    expectation = TrajectoryExpectation(match=mode, calls=expected)
    return grade_trajectory(expectation, observed, AGENT).matched


def _brute_force_matching(
    expected: Sequence[ExpectedCall], observed: Sequence[ObservedCall]
) -> int:
    """Try every assignment: each expected call is skipped or paired with a free match."""
    best = 0

    def search(index: int, used: frozenset[int], size: int) -> None:
        nonlocal best
        if size + len(expected) - index <= best:
            return
        if index == len(expected):
            best = size
            return
        for slot, call in enumerate(observed):
            if slot not in used and call_matches(expected[index], call):
                search(index + 1, used | {slot}, size + 1)
        search(index + 1, used, size)

    search(0, frozenset(), 0)
    return best


@settings(deadline=None)
@given(EXPECTED, OBSERVED)
def test_0244_A_exact_implies_in_order_implies_any_order(
    expected: list[ExpectedCall], observed: list[ObservedCall]
) -> None:
    exact = _grade("exact", expected, observed)
    in_order = _grade("in-order", expected, observed)
    any_order = _grade("any-order", expected, observed)
    assert not exact or in_order
    assert not in_order or any_order


@settings(deadline=None)
@given(EXPECTED)
def test_0244_A_exact_on_the_expected_calls_themselves(expected: list[ExpectedCall]) -> None:
    # An observed list that replays each expected call's own args matches exactly when every
    # call compares args the way the replay satisfies (always: args match themselves).
    observed = [ObservedCall(tool=call.tool, inputs=call.args, agent_id=AGENT) for call in expected]
    assert _grade("exact", expected, observed)


@settings(deadline=None)
@given(EXPECTED, OBSERVED)
def test_0244_A_any_order_iff_matched_count_is_expected_count(
    expected: list[ExpectedCall], observed: list[ObservedCall]
) -> None:
    grade = grade_trajectory(
        TrajectoryExpectation(match="any-order", calls=expected), observed, AGENT
    )
    assert grade.matched == (grade.matchedCount == grade.expectedCount)


@settings(deadline=None)
@given(EXPECTED, OBSERVED, st.sampled_from(["exact", "in-order", "any-order", "subset"]))
def test_0244_A_matched_count_is_bounded_and_mode_independent(
    expected: list[ExpectedCall], observed: list[ObservedCall], mode: TrajectoryMode
) -> None:
    grade = grade_trajectory(TrajectoryExpectation(match=mode, calls=expected), observed, AGENT)
    assert grade.matchedCount <= min(len(expected), len(observed))
    assert grade.matchedCount == max_matching_size(expected, observed)


@settings(deadline=None, max_examples=examples(300))
@given(EXPECTED, OBSERVED)
def test_0244_A_matched_count_is_the_maximum_matching(
    expected: list[ExpectedCall], observed: list[ObservedCall]
) -> None:
    assert max_matching_size(expected, observed) == _brute_force_matching(expected, observed)


# One tool and overlapping argument patterns: the shape where first-fit choices conflict.
DENSE_ARGS = st.sampled_from([{"x": 1}, {"x": 2}, {"x": 1, "y": 1}, {"y": 1}, {}])


@st.composite
def dense_expected(draw: st.DrawFn) -> ExpectedCall:
    mode: ArgsMatch | None = draw(ARGS_MATCH)
    return ExpectedCall(tool="a", args=draw(DENSE_ARGS), argsMatch=mode)


@settings(deadline=None, max_examples=examples(300))
@given(
    st.lists(dense_expected(), max_size=6),
    st.lists(st.builds(ObservedCall, st.just("a"), DENSE_ARGS, st.just(AGENT)), max_size=6),
)
def test_0244_A_matched_count_is_the_maximum_matching_on_one_tool(
    expected: list[ExpectedCall], observed: list[ObservedCall]
) -> None:
    assert max_matching_size(expected, observed) == _brute_force_matching(expected, observed)


@settings(deadline=None)
@given(EXPECTED, OBSERVED)
def test_0244_A_subset_iff_every_observed_call_matches_some_expected_call(
    expected: list[ExpectedCall], observed: list[ObservedCall]
) -> None:
    direct = all(any(call_matches(want, got) for want in expected) for got in observed)
    assert _grade("subset", expected, observed) == direct


@settings(deadline=None)
@given(EXPECTED, OBSERVED)
def test_0244_A_in_order_iff_some_subsequence_matches(
    expected: list[ExpectedCall], observed: list[ObservedCall]
) -> None:
    def embeds(i: int, j: int) -> bool:
        if i == len(expected):
            return True
        if len(observed) - j < len(expected) - i:
            return False
        taken = call_matches(expected[i], observed[j]) and embeds(i + 1, j + 1)
        return taken or embeds(i, j + 1)

    assert _grade("in-order", expected, observed) == embeds(0, 0)


@settings(deadline=None)
@given(EXPECTED, OBSERVED, st.sampled_from(["exact", "in-order", "any-order", "subset"]))
def test_0244_A_forbidden_unmatches_and_counts(
    expected: list[ExpectedCall], observed: list[ObservedCall], mode: TrajectoryMode
) -> None:
    expectation = TrajectoryExpectation(match=mode, calls=expected, forbidden=["b"])
    grade = grade_trajectory(expectation, observed, AGENT)
    hits = sum(1 for call in observed if call.tool == "b")
    assert grade.forbiddenCount == hits
    if hits:
        assert not grade.matched
    else:
        assert grade.matched == _grade(mode, expected, observed)
