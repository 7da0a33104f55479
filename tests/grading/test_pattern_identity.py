"""RFC 0244 §A: ``subset`` object patterns grouped into classes without keeping a set per
class (the hash of the term set, confirmed on the class's terms) and terms shared between
patterns that hold the same leaf at a top-level name. JSON-equal patterns share a class,
others never do, and every observed call's edges are what the one call matcher says. The
compiled form holds no reference cycle: it goes with its expectation."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Sequence

from wopeval.grading import patterns
from wopeval.grading.class_matching import class_matching
from wopeval.grading.classgraph import build_graph
from wopeval.grading.jsonmatch import matches
from wopeval.grading.pattern_terms import Term, _terms
from wopeval.grading.patterns import compile_patterns
from wopeval.grading.trajectory import ObservedCall, grade_trajectory
from wopeval.suite.models import ExpectedCall, TrajectoryExpectation


def _subset(patterns: Sequence[object]) -> list[ExpectedCall]:
    return [ExpectedCall(tool="t", args=args, argsMatch="subset") for args in patterns]


def _checked_edges(expected: list[ExpectedCall], inputs: Sequence[object]) -> list[set[int]]:
    """Each observed value's expected classes, checked against ``matches`` call by call."""
    graph = build_graph(expected, [ObservedCall("t", value, "a") for value in inputs])
    edges = [set(graph.right_neighbours[graph.right_of[i]]) for i in range(len(inputs))]
    for value, found in zip(inputs, edges, strict=True):
        brute = {graph.left_of[i] for i, want in enumerate(expected) if matches(want, "t", value)}
        assert found == brute, value
    return edges


def test_0244_A_term_sets_of_equal_hash_stay_apart() -> None:
    # hash(-1) == hash(-2) in CPython, so these two term sets hash alike yet differ.
    first: dict[str, object] = {"a": -1, "b": 0}
    second: dict[str, object] = {"a": -2, "b": 0}
    terms: list[list[Term]] = [[], []]
    _terms(first, (), terms[0])
    _terms(second, (), terms[1])
    assert hash(frozenset(terms[0])) == hash(frozenset(terms[1]))
    expected = _subset([first, second, {"b": 0, "a": -2}, {"b": 0, "a": -1}, second])
    compiled = compile_patterns(expected)
    assert compiled.left_of == [0, 1, 1, 0, 1]
    assert compiled.left_counts == [2, 3]
    edges = _checked_edges(expected, [{"a": -1, "b": 0}, {"a": -2, "b": 0, "c": 1}, {"a": -3}])
    assert edges == [{0}, {1}, set()]


def test_0244_A_a_shared_leaf_is_one_term_and_a_changed_one_a_new_term() -> None:
    # The same name holds 1, 1, "1", {}, {}, 2 in turn: each pattern keeps its own leaf.
    leaves: list[object] = [1, 1, "1", {}, {}, 2]
    expected = _subset([{"a": leaf, "id": i} for i, leaf in enumerate(leaves)])
    compiled = compile_patterns(expected)
    shared = [compiled.left_terms[slot] for slot in (0, 1)]
    a_terms = [next(t for t in terms if t[0] == ("a",)) for terms in shared]
    assert a_terms[0] is a_terms[1]  # one tuple for the leaf both hold
    inputs: list[object] = [{"a": leaf, "id": i} for i, leaf in enumerate(leaves)]
    inputs += [{"a": {"x": 1}, "id": 3}, {"a": "1", "id": 0}, {"a": 1, "id": 5}]
    edges = _checked_edges(expected, inputs)
    assert edges == [{i} for i in range(len(leaves))] + [{3}, set(), set()]
    observed = [ObservedCall("t", value, "a") for value in inputs[: len(leaves)]]
    assert class_matching(build_graph(expected, observed))[0] == len(leaves)


def test_0244_A_a_compiled_expectation_is_freed_with_it_without_the_collector() -> None:
    # Exact and subset classes of two tools: no reference cycle keeps the compiled form alive
    # once its expectation is gone (a cold grade leaves nothing for the collector to find).
    calls = [
        ExpectedCall(tool="t", args={"id": 1}, argsMatch="exact"),
        ExpectedCall(tool="t", args={"id": 1, "x": {}}, argsMatch="subset"),
        ExpectedCall(tool="u", args=[1], argsMatch="subset"),
    ]
    expectation = TrajectoryExpectation(match="any-order", calls=calls)
    observed = [ObservedCall("t", {"id": 1, "x": {}}, "a"), ObservedCall("u", [1], "a")]
    assert grade_trajectory(expectation, observed, "a").matchedCount == 2
    found = patterns.cached(expectation)
    assert found is not None
    assert found.tools["t"].by_canon() == {'{"id":1}': [0]}
    freed = weakref.ref(found)
    del found
    gc.disable()
    try:
        del expectation
        assert freed() is None
    finally:
        gc.enable()


def test_0244_A_in_order_follows_a_call_that_matches_several_expected_classes() -> None:
    # Each observed call matches both patterns (its class has two neighbours, a tuple).
    expected = _subset([{"a": 1}, {"b": 2}])
    both = ObservedCall("t", {"a": 1, "b": 2}, "a")
    only_b = ObservedCall("t", {"b": 2}, "a")
    in_order = TrajectoryExpectation(match="in-order", calls=expected)
    assert grade_trajectory(in_order, [both, both], "a").matched
    assert grade_trajectory(in_order, [both, only_b], "a").matched
    assert not grade_trajectory(in_order, [only_b, both], "a").matched  # b before a
    assert not grade_trajectory(in_order, [both], "a").matched  # one call, two expected
