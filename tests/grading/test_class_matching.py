"""RFC 0244 §A ``matchedCount``: the class-level flow (first fit, Dinic where classes compete,
``ignore`` on the leftovers) is a maximum matching, and its per-class flows are those of one.

Every case is checked against a brute force over the calls themselves: each maximum matching
of expected and observed calls (by :func:`~wopeval.grading.jsonmatch.matches`) gives how many
calls of each expected and each observed class it uses; the flows returned must be one of
those. Cases are seeded, so a failure names its seed.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from wopeval.grading.class_matching import _FlowNetwork, class_matching
from wopeval.grading.classgraph import ClassGraph, build_graph
from wopeval.grading.jsonmatch import matches
from wopeval.grading.trajectory import ObservedCall
from wopeval.suite.models import ArgsMatch, ExpectedCall

AGENT = "a"
Flows = tuple[int, tuple[int, ...], tuple[int, ...]]


def _maximum_flows(graph: ClassGraph) -> set[Flows]:
    """Every (size, per expected class, per observed class) of a maximum call matching."""
    expected, observed = graph.patterns.calls, graph.observed
    left_of, right_of = graph.left_of, graph.right_of
    found: set[Flows] = set()
    best = 0
    used_left = [0] * len(graph.left_counts)
    used_right = [0] * len(graph.right_counts)

    def search(index: int, taken: frozenset[int], size: int) -> None:
        nonlocal best
        if size + len(expected) - index < best:
            return
        if index == len(expected):
            if size > best:
                best = size
                found.clear()
            found.add((size, tuple(used_left), tuple(used_right)))
            return
        want = expected[index]
        for position, call in enumerate(observed):
            if position not in taken and matches(want, call.tool, call.inputs):
                used_left[left_of[index]] += 1
                used_right[right_of[position]] += 1
                search(index + 1, taken | {position}, size + 1)
                used_left[left_of[index]] -= 1
                used_right[right_of[position]] -= 1
        search(index + 1, taken, size)

    search(0, frozenset(), 0)
    return found


def _check(expected: Sequence[ExpectedCall], observed: Sequence[ObservedCall]) -> int:
    graph = build_graph(expected, observed)
    size, used_left, used_right = class_matching(graph)
    assert (size, tuple(used_left), tuple(used_right)) in _maximum_flows(graph)
    return size


def _want(args: object, mode: ArgsMatch = "subset", tool: str = "t") -> ExpectedCall:
    return ExpectedCall(tool=tool, args=args, argsMatch=mode)


def _got(inputs: object, tool: str = "t") -> ObservedCall:
    return ObservedCall(tool, inputs, AGENT)


def test_0244_A_the_plainest_matchings() -> None:
    assert _check([], []) == 0
    assert _check([_want({})], []) == 0
    assert _check([], [_got({})]) == 0
    assert _check([_want({"x": 1})], [_got({"x": 1})]) == 1
    assert _check([_want({"x": 1})], [_got({"x": 2})]) == 0


def test_0244_A_first_fit_is_rerouted_when_a_later_class_needs_its_call() -> None:
    # {} takes {x:1} first; the exact {x:1} then finds nothing; the augmenting path moves {} to
    # {x:2}: 2, with one call of each class used.
    graph = build_graph([_want({}), _want({"x": 1}, "exact")], [_got({"x": 1}), _got({"x": 2})])
    built = graph.work
    assert class_matching(graph) == (2, [1, 1], [1, 1])
    assert graph.work > built  # the augmenting paths' steps are counted on top


def test_0244_A_an_augmenting_path_through_every_class() -> None:
    # o_j holds k_j and k_j+1; {k_i: 1} matches o_i-1 and o_i. First fit, in expected order,
    # gives k1 → o0, k2 → o1, k3 → o2, and k0 (o0 only) finds nothing: the one augmenting path
    # k0 - o0 - k1 - o1 - k2 - o2 - k3 - o3 passes through every class.
    observed = [_got({f"k{j}": 1, f"k{j + 1}": 1}) for j in range(4)]
    expected = [_want({f"k{i}": 1}) for i in (1, 2, 3, 0)]
    graph = build_graph(expected, observed)
    assert class_matching(graph) == (4, [1, 1, 1, 1], [1, 1, 1, 1])
    assert _check(expected, observed) == 4
    # Without o3 the path has nowhere to end: first fit's 3 is the maximum.
    assert _check(expected, observed[:3]) == 3


@pytest.mark.parametrize("seed", range(300))
def test_0244_A_class_flows_are_a_maximum_matchings(seed: int) -> None:
    rng = random.Random(seed)
    values = [{}, {"x": 1}, {"x": 2}, {"y": 1}, {"x": 1, "y": 1}, {"x": 2, "y": 1}]
    tools = ["t", "t", "u"] if seed % 3 == 0 else ["t"]
    modes: list[ArgsMatch] = ["subset", "subset", "subset", "exact", "ignore"]
    expected = [
        _want(rng.choice(values), rng.choice(modes), rng.choice(tools))
        for _ in range(rng.randint(1, 6))
    ]
    observed = [_got(rng.choice(values[1:]), rng.choice(tools)) for _ in range(rng.randint(1, 6))]
    _check(expected, observed)


def test_flow_network_max_flow_on_a_hand_worked_network() -> None:
    # source 0 → 1 (cap 2), 0 → 2 (cap 1), 1 → 3 (cap 1), 1 → 2 (cap 1), 2 → 3 (cap 2), sink 3:
    # the source's edges carry at most 3, and 3 flows along 0-1-3, 0-1-2-3 and 0-2-3. Every
    # edge is then saturated: residual 0 forward, the flow on its reverse edge.
    network = _FlowNetwork(4)
    for start, end, capacity in [(0, 1, 2), (0, 2, 1), (1, 3, 1), (1, 2, 1), (2, 3, 2)]:
        network.add_edge(start, end, capacity)
    assert network.max_flow(0, 3) == 3
    assert network.cap == [0, 2, 0, 1, 0, 1, 0, 1, 0, 2]


def test_flow_network_starts_from_the_flow_it_is_given() -> None:
    # 0 → 1 → 2 with capacity 3 each, already carrying 2: one more unit, and the residual
    # capacities say 3 on each edge (reverse edges hold the flow).
    network = _FlowNetwork(3)
    network.add_edge(0, 1, 3, 2)
    network.add_edge(1, 2, 3, 2)
    assert network.cap == [1, 2, 1, 2]
    assert network.steps == 0
    assert network.max_flow(0, 2) == 1
    assert network.cap == [0, 3, 0, 3]
    # Steps: levels 1 + 2 + 1 edges listed, the path 3 edges looked at, the blocked retry 1,
    # the second levels 1: 9; a second max_flow lists the source's edge once more: 10.
    assert network.steps == 9
    assert network.max_flow(0, 2) == 0
    assert network.steps == 10
