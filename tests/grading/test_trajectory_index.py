"""RFC 0244 §A subset candidates through the (key path, leaf) index equal a brute-force scan."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from wopeval.grading.class_matching import class_matching
from wopeval.grading.classgraph import build_graph
from wopeval.grading.jsonmatch import json_subset
from wopeval.grading.trajectory import ObservedCall
from wopeval.suite.models import ExpectedCall

LEAVES: st.SearchStrategy[object] = st.sampled_from(
    [1, 1.0, 2, True, False, None, "eu", [1], [], {}]
)
NAMES = st.sampled_from(["a", "b", "filter"])
VALUES = st.recursive(LEAVES, lambda inner: st.dictionaries(NAMES, inner, max_size=3), max_leaves=6)
OBJECTS = st.dictionaries(NAMES, VALUES, max_size=3)


@settings(max_examples=300, deadline=None)
@given(st.lists(VALUES | OBJECTS, max_size=4), st.lists(VALUES | OBJECTS, max_size=6))
def test_0244_A_subset_edges_are_exactly_the_matching_classes(
    patterns: list[object], inputs: list[object]
) -> None:
    expected = [ExpectedCall(tool="t", args=args, argsMatch="subset") for args in patterns]
    graph = build_graph(expected, [ObservedCall("t", value, "a") for value in inputs])
    for slot, call in enumerate(graph.left):
        brute = {
            index for index, got in enumerate(graph.right_inputs) if json_subset(call.args, got)
        }
        assert set(graph.neighbours(slot)) == brute


def test_0244_A_ignore_calls_have_no_edges_and_take_the_leftovers() -> None:
    expected = [
        ExpectedCall(tool="t", argsMatch="ignore"),
        ExpectedCall(tool="t", argsMatch="ignore"),
        ExpectedCall(tool="t", args={"id": 1}, argsMatch="exact"),
        ExpectedCall(tool="u", argsMatch="ignore"),
    ]
    observed = [
        ObservedCall(tool, inputs, "a")
        for tool, inputs in [("t", {"id": 1}), ("t", {"id": 2}), ("u", 3)]
    ]
    graph = build_graph(expected, observed)
    ignore_slots = [slot for slot, call in enumerate(graph.left) if call.args_match == "ignore"]
    assert all(graph.neighbours(slot) == [] for slot in ignore_slots)
    size, used_left, used_right = class_matching(graph)
    # exact takes {"id": 1}; one t-ignore takes {"id": 2}; u-ignore takes 3; one t-ignore is left.
    assert size == 3
    assert used_right == [1, 1, 1]
    assert sorted(used_left) == [1, 1, 1]


def test_0244_A_shared_first_field_finds_the_rarest_posting() -> None:
    n = 200
    observed = [ObservedCall("t", {"region": "eu", "orderId": i}, "a") for i in range(n)]
    expected = [
        ExpectedCall(tool="t", args={"region": "eu", "orderId": i}, argsMatch="subset")
        for i in range(n)
    ]
    graph = build_graph(expected, observed)
    assert all(len(graph.neighbours(slot)) == 1 for slot in range(n))
    assert class_matching(graph)[0] == n
