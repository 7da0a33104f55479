"""RFC 0244 §A on whole trajectories: the first (cold) grade of an expectation, which compiles
its index, and the later (compiled) grades agree with a brute-force grader built on the one
call matcher (``jsonmatch.matches``), on random trajectories of the shapes the index treats
specially: patterns sharing a field, patterns whose only fields are objects, empty objects,
single-term patterns, numbers respelt (``1`` / ``1.0``) and booleans next to numbers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.hypothesis_counts import examples
from wopeval.grading.jsonmatch import matches
from wopeval.grading.patterns import cached, compile_patterns
from wopeval.grading.trajectory import ObservedCall, grade_trajectory
from wopeval.suite.models import ArgsMatch, ExpectedCall, TrajectoryExpectation, TrajectoryMode

AGENT = "me"
IDS = st.sampled_from([0, 1, 2, 1.0, True, "1"])
ARGS = st.one_of(
    st.builds(lambda i: {"region": "eu", "orderId": i}, IDS),  # a shared first field
    st.builds(lambda i: {"orderId": i}, IDS),
    st.builds(lambda i: {"filter": {"id": i}}, IDS),  # every field an object
    st.builds(lambda i: {"id": i, "opts": {}}, IDS),  # an empty object
    st.builds(lambda i, j: {"filter": {"id": i, "k": j}}, IDS, IDS),
    st.sampled_from([{}, {"region": "eu"}, {"filter": {}}, 1, None, [1, {"id": 1}]]),
)
ARGS_MATCH: st.SearchStrategy[ArgsMatch | None] = st.sampled_from(
    [None, "ignore", "exact", "subset", "subset", "exact"]
)
TOOLS = st.sampled_from(["kb:orders", "kb:orders", "kb:other"])
EXPECTED = st.lists(
    st.builds(lambda tool, args, mode: ExpectedCall(tool=tool, args=args, argsMatch=mode),
              TOOLS, ARGS, ARGS_MATCH),
    max_size=7,
)  # fmt: skip
OBSERVED = st.lists(
    st.builds(lambda tool, inputs: ObservedCall(tool, inputs, AGENT), TOOLS, ARGS), max_size=8
)
MODES: list[TrajectoryMode] = ["exact", "in-order", "any-order", "subset"]


def _pairs(expected: Sequence[ExpectedCall], observed: Sequence[ObservedCall]) -> list[list[int]]:
    return [
        [j for j, call in enumerate(observed) if matches(want, call.tool, call.inputs)]
        for want in expected
    ]


def _maximum_matching(edges: list[list[int]], right: int) -> int:
    """Kuhn's augmenting paths, one expected call at a time (small inputs only)."""
    owner = [-1] * right

    def augment(left: int, seen: set[int]) -> bool:
        for j in edges[left]:
            if j not in seen:
                seen.add(j)
                if owner[j] < 0 or augment(owner[j], seen):
                    owner[j] = left
                    return True
        return False

    return sum(augment(left, set()) for left in range(len(edges)))


def _reference(
    mode: TrajectoryMode, expected: Sequence[ExpectedCall], observed: Sequence[ObservedCall]
) -> tuple[bool, int]:
    edges = _pairs(expected, observed)
    size = _maximum_matching(edges, len(observed))
    if mode == "exact":
        held = len(expected) == len(observed) and all(i in edges[i] for i in range(len(edges)))
    elif mode == "in-order":
        position = 0
        for j in range(len(observed)):
            if position < len(expected) and j in edges[position]:
                position += 1
        held = position == len(expected)
    elif mode == "any-order":
        held = size == len(expected)
    else:
        held = all(any(j in found for found in edges) for j in range(len(observed)))
    return held, size


@settings(max_examples=examples(250), deadline=None)
@given(EXPECTED, OBSERVED)
def test_0244_A_cold_and_compiled_grades_agree_with_brute_force(
    expected: list[ExpectedCall], observed: list[ObservedCall]
) -> None:
    for mode in MODES:
        held, size = _reference(mode, expected, observed)
        expectation = TrajectoryExpectation(match=mode, calls=expected)
        assert cached(expectation) is None
        cold = grade_trajectory(expectation, observed, AGENT)
        later = grade_trajectory(expectation, observed, AGENT)
        for block in (cold, later):
            assert (block.matched, block.matchedCount) == (held, size), (mode, block)


@settings(max_examples=examples(150), deadline=None)
@given(EXPECTED, OBSERVED)
def test_0244_A_compiled_classes_match_as_the_one_call_matcher(
    expected: list[ExpectedCall], observed: list[ObservedCall]
) -> None:
    patterns = compile_patterns(expected)
    for position, want in enumerate(expected):
        slot = patterns.left_of[position]
        for call in observed:
            assert patterns.matches(slot, call.tool, call.inputs) is matches(
                want, call.tool, call.inputs
            )


def _shared(n: int, shape: str) -> tuple[list[ObservedCall], list[ExpectedCall]]:
    def inputs(i: int) -> dict[str, Any]:
        return {"region": "eu", "orderId": i} if shape == "shared" else {"filter": {"id": i}}

    observed = [ObservedCall("kb:orders", inputs(i), AGENT) for i in range(n)]
    expected = [
        ExpectedCall(tool="kb:orders", args=inputs(i), argsMatch="subset") for i in range(n)
    ]
    return observed, expected[::-1]


def test_0244_A_adversarial_shapes_cold_one_call_short() -> None:
    """The bench's shapes at a small size: every mode, and one observed call that no pattern
    takes (``orderId`` / ``id`` out of range) turns subset and any-order's verdicts."""
    for shape in ("shared", "objects"):
        observed, expected = _shared(40, shape)
        stray = ObservedCall("kb:orders", _shared(41, shape)[0][40].inputs, AGENT)
        for mode in MODES:
            for calls in (observed, [*observed[:-1], stray]):
                held, size = _reference(mode, expected, calls)
                block = grade_trajectory(
                    TrajectoryExpectation(match=mode, calls=expected), calls, AGENT
                )
                assert (block.matched, block.matchedCount) == (held, size), (shape, mode)
        assert _reference("subset", expected, [*observed[:-1], stray]) == (False, 39)
