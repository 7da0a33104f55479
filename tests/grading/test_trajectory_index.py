"""RFC 0244 §A observed lookups (:mod:`wopeval.grading.classgraph`): subset candidates through
the (key path, leaf) index equal a brute-force scan; each observed call's edges are exactly the
expected classes it matches, through the pivot buckets and the canonical-key fallback too; the
graph counts its steps."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.hypothesis_counts import examples
from wopeval.grading.class_matching import class_matching
from wopeval.grading.classgraph import build_graph
from wopeval.grading.jsonmatch import json_subset, matches
from wopeval.grading.trajectory import ObservedCall
from wopeval.suite.models import ArgsMatch, ExpectedCall

LEAVES: st.SearchStrategy[object] = st.sampled_from(
    [1, 1.0, 2, True, False, None, "eu", [1], [], {}]
)
NAMES = st.sampled_from(["a", "b", "filter"])
VALUES = st.recursive(LEAVES, lambda inner: st.dictionaries(NAMES, inner, max_size=3), max_leaves=6)
OBJECTS = st.dictionaries(NAMES, VALUES, max_size=3)


@settings(max_examples=examples(300), deadline=None)
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


def _edges(
    patterns: Sequence[object], inputs: Sequence[object], mode: ArgsMatch = "exact"
) -> list[tuple[int, ...]]:
    expected = [ExpectedCall(tool="t", args=args, argsMatch=mode) for args in patterns]
    observed = [ObservedCall("t", value, "a") for value in inputs]
    graph = build_graph(expected, observed)
    edges = [graph.right_neighbours[graph.right_of[i]] for i in range(len(observed))]
    for position, value in enumerate(inputs):  # the one call matcher agrees, call by call
        brute = {graph.left_of[i] for i, want in enumerate(expected) if matches(want, "t", value)}
        assert set(edges[position]) == brute, (patterns, value)
    return edges


@pytest.mark.parametrize("pivot", [None, True, 2.5, "s", 7])
def test_0244_A_every_scalar_pivot_value_finds_its_class(pivot: object) -> None:
    assert _edges([{"id": pivot}], [{"id": pivot}, {"id": "other"}, {}]) == [(0,), (), ()]


def test_0244_A_an_observed_value_that_is_no_object_misses_the_buckets() -> None:
    assert _edges([{"id": 1}], [[1], "id", None, {"id": [1]}, {"id": {"x": 1}}]) == [()] * 5


def test_0244_A_a_bucket_miss_that_a_tuple_explains_falls_back_to_the_canonical_key() -> None:
    one = [{"id": 1, "tags": [1, 2]}]
    assert _edges(one, [{"id": 1, "tags": (1, 2)}, {"id": 1, "tags": (2, 1)}]) == [(0,), ()]
    two = [{"id": 1, "tags": [1, 2]}, {"id": 1, "tags": [3]}]
    assert _edges(two, [{"id": 1, "tags": (3,)}, {"id": 1, "tags": (1, 2)}]) == [(1,), (0,)]


def test_0244_A_a_missing_key_is_not_a_null_in_the_subset_index() -> None:
    assert _edges([{"a": None}], [{"b": 1, "c": 2}, {"a": None, "b": 1}], "subset") == [(), (0,)]


def test_0244_A_building_counts_its_steps() -> None:
    # {a: 1, c: "z"}: two terms, equally rare; indexed under a = 1, c = "z" confirmed after.
    expected = [ExpectedCall(tool="t", args={"a": 1, "c": "z"}, argsMatch="subset")]
    observed = [
        ObservedCall("t", {"a": 1, "c": "z", "b": 2}, "x"),  # more keys than the trie's branches
        ObservedCall("t", {"a": 1}, "x"),  # fewer: its keys are walked
        ObservedCall("t", "x", "x"),  # not an object: no walk
    ]
    graph = build_graph(expected, observed)
    assert graph.right_neighbours == [(0,), ()]
    # Compiling: 2 terms + 2 · 2 indexed = 6. Building: 3 per observed call = 9. Lookups: the
    # first two walk the root (1) and one branch (1) and confirm one candidate (1 + 1 other
    # term) = 4 each; the third 0. Edges: 1 target + 2 row starts = 3. 6 + 9 + 8 + 3 = 26.
    assert graph.work == 26
