"""RFC 0244 §A trajectory grading: the four match modes, ``forbidden`` and ``matchedCount``.

The observed trajectory is the trial's ``agent.tool-called`` events in log order, kept only
when their ``agentId`` is the task's target agent, or all of them with ``includeDelegates``.
An expected call matches an observed call when the tool names are equal and the arguments
match under the expected call's ``argsMatch`` (:func:`wopeval.grading.jsonmatch.args_match`).

Modes (RFC 0244 §A table):

* ``exact``: same length, and the i-th observed call matches the i-th expected call.
* ``in-order``: the expected calls match a subsequence of the observed list, in order. Greedy
  earliest matching is optimal for a subsequence, so one left-to-right pass decides it.
* ``any-order``: each expected call is matched by a distinct observed call. That holds exactly
  when the maximum matching saturates the expected side, so it reuses ``matchedCount``.
* ``subset``: every observed call matches some expected call (repeats allowed).

Any observed call to a ``forbidden`` tool makes the trajectory unmatched whatever the mode;
``forbiddenCount`` counts those calls.

``matchedCount`` is mode-independent: the size of a maximum one-to-one matching between
expected and observed calls, ignoring order. Calls are first grouped into classes with
multiplicities (expected: tool, ``argsMatch`` and the JSON key of the args; observed: tool and
the JSON key of the inputs, or the tool alone when no expected call of that tool compares
arguments; see :func:`wopeval.grading.jsonmatch.json_key`). The matching is then a maximum flow
on the class graph: a first-fit flow, finished by Dinic's augmenting paths when first fit is not
already maximal. Ten thousand identical calls are one class, and an ``exact`` expected call finds
its observed class by hash lookup, so realistic trajectories grade in time linear in their size.
A ``subset`` expected call looks its candidates up by one of its non-object top-level values;
only an all-object ``subset`` pattern scans its tool's observed classes.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

from wopeval.grading.jsonmatch import args_match, json_key, json_subset
from wopeval.suite.models import ExpectedCall, TrajectoryExpectation
from wopeval.wire.summary import TrajectoryBlock

__all__ = [
    "ObservedCall",
    "call_matches",
    "grade_trajectory",
    "max_matching_size",
    "observed_trajectory",
]


@dataclass(frozen=True)
class ObservedCall:
    """One ``agent.tool-called`` event: ``toolName``, ``inputs`` and the calling ``agentId``."""

    tool: str
    inputs: object
    agent_id: str


def call_matches(expected: ExpectedCall, observed: ObservedCall) -> bool:
    """RFC 0244 §A call matching: equal tool and arguments matching under ``argsMatch``."""
    return expected.tool == observed.tool and args_match(
        expected.args_match, expected.args, observed.inputs
    )


def observed_trajectory(
    expectation: TrajectoryExpectation, observed: Sequence[ObservedCall], target_agent_id: str
) -> list[ObservedCall]:
    """The calls §A grades: the target agent's own, or every call with ``includeDelegates``."""
    if expectation.include_delegates:
        return list(observed)
    return [call for call in observed if call.agent_id == target_agent_id]


# --- the class graph -------------------------------------------------------------------------


@dataclass
class _ObservedClass:
    tool: str
    inputs: object
    key: Hashable | None
    count: int = 0


@dataclass
class _ToolIndex:
    """Observed classes of one tool, with lookups for ``exact`` and ``subset`` candidates."""

    classes: list[int] = field(default_factory=list)
    by_inputs: dict[Hashable, int] = field(default_factory=dict)
    by_field: dict[str, dict[Hashable, list[int]]] = field(default_factory=dict)


@dataclass
class _ClassGraph:
    """Expected classes (left) and observed classes (right) with multiplicities and edges."""

    left: list[ExpectedCall] = field(default_factory=list)
    left_keys: list[Hashable | None] = field(default_factory=list)
    left_counts: list[int] = field(default_factory=list)
    right: list[_ObservedClass] = field(default_factory=list)
    edges: list[list[int]] = field(default_factory=list)
    left_of: list[int] = field(default_factory=list)
    right_of: list[int] = field(default_factory=list)

    def pair_matches(self, left: int, right: int) -> bool:
        """:func:`call_matches` on two classes, reusing the JSON keys already computed."""
        want, got = self.left[left], self.right[right]
        if want.tool != got.tool:
            return False
        mode = want.args_match
        if mode == "ignore":
            return True
        if mode == "exact":
            return self.left_keys[left] == got.key
        return json_subset(want.args, got.inputs)


def _observed_key(
    call: ObservedCall, compared_tools: frozenset[str]
) -> tuple[str, Hashable | None]:
    if call.tool in compared_tools:
        return (call.tool, json_key(call.inputs))
    return (call.tool, None)


def _expected_key(call: ExpectedCall) -> tuple[str, str, Hashable | None]:
    mode = call.args_match
    return (call.tool, mode, None if mode == "ignore" else json_key(call.args))


def _group_expected(graph: _ClassGraph, expected: Sequence[ExpectedCall]) -> None:
    index: dict[tuple[str, str, Hashable | None], int] = {}
    for call in expected:
        key = _expected_key(call)
        slot = index.get(key)
        if slot is None:
            slot = index[key] = len(graph.left)
            graph.left.append(call)
            graph.left_keys.append(key[2])
            graph.left_counts.append(0)
        graph.left_counts[slot] += 1
        graph.left_of.append(slot)


def _group_observed(
    graph: _ClassGraph, observed: Sequence[ObservedCall], compared_tools: frozenset[str]
) -> dict[str, _ToolIndex]:
    tools: dict[str, _ToolIndex] = {}
    index: dict[tuple[str, Hashable | None], int] = {}
    for call in observed:
        key = _observed_key(call, compared_tools)
        slot = index.get(key)
        if slot is None:
            slot = index[key] = len(graph.right)
            graph.right.append(_ObservedClass(call.tool, call.inputs, key[1]))
            tool_index = tools.setdefault(call.tool, _ToolIndex())
            tool_index.classes.append(slot)
            if key[1] is not None:
                tool_index.by_inputs[key[1]] = slot
        graph.right[slot].count += 1
        graph.right_of.append(slot)
    return tools


def _by_field(graph: _ClassGraph, tool_index: _ToolIndex, name: str) -> dict[Hashable, list[int]]:
    """Observed classes of a tool by the JSON key of one top-level field (built lazily)."""
    found = tool_index.by_field.get(name)
    if found is None:
        found = {}
        for slot in tool_index.classes:
            inputs = graph.right[slot].inputs
            if isinstance(inputs, dict) and name in inputs:
                found.setdefault(json_key(inputs[name]), []).append(slot)
        tool_index.by_field[name] = found
    return found


def _exact_candidates(tool_index: _ToolIndex, key: Hashable | None) -> list[int]:
    slot = None if key is None else tool_index.by_inputs.get(key)
    return [] if slot is None else [slot]


def _subset_candidates(
    graph: _ClassGraph, tool_index: _ToolIndex, args: object, key: Hashable | None
) -> list[int]:
    if not isinstance(args, dict):
        return _exact_candidates(tool_index, key)
    for name, value in args.items():
        if not isinstance(value, dict):
            candidates = _by_field(graph, tool_index, name).get(json_key(value), [])
            return [slot for slot in candidates if json_subset(args, graph.right[slot].inputs)]
    return [slot for slot in tool_index.classes if json_subset(args, graph.right[slot].inputs)]


def _neighbours(graph: _ClassGraph, slot: int, tools: dict[str, _ToolIndex]) -> list[int]:
    call = graph.left[slot]
    tool_index = tools.get(call.tool)
    if tool_index is None:
        return []
    mode = call.args_match
    if mode == "ignore":
        return list(tool_index.classes)
    if mode == "exact":
        return _exact_candidates(tool_index, graph.left_keys[slot])
    return _subset_candidates(graph, tool_index, call.args, graph.left_keys[slot])


def _build_graph(expected: Sequence[ExpectedCall], observed: Sequence[ObservedCall]) -> _ClassGraph:
    graph = _ClassGraph()
    _group_expected(graph, expected)
    compared = frozenset(call.tool for call in graph.left if call.args_match != "ignore")
    tools = _group_observed(graph, observed, compared)
    graph.edges = [_neighbours(graph, slot, tools) for slot in range(len(graph.left))]
    return graph


# --- maximum flow (Dinic) on the class graph -------------------------------------------------


class _FlowNetwork:
    """A residual network with integer capacities; ``max_flow`` is Dinic's algorithm."""

    def __init__(self, size: int) -> None:
        self.out: list[list[int]] = [[] for _ in range(size)]
        self.head: list[int] = []
        self.cap: list[int] = []

    def add_edge(self, start: int, end: int, capacity: int, flow: int = 0) -> None:
        """Add ``start → end`` with ``capacity``, already carrying ``flow`` (≤ capacity)."""
        self.out[start].append(len(self.head))
        self.head.append(end)
        self.cap.append(capacity - flow)
        self.out[end].append(len(self.head))
        self.head.append(start)
        self.cap.append(flow)

    def _levels(self, source: int) -> list[int]:
        level = [-1] * len(self.out)
        level[source] = 0
        frontier = [source]
        while frontier:
            following: list[int] = []
            for node in frontier:
                for edge in self.out[node]:
                    target = self.head[edge]
                    if self.cap[edge] > 0 and level[target] < 0:
                        level[target] = level[node] + 1
                        following.append(target)
            frontier = following
        return level

    def _augment(self, source: int, sink: int, level: list[int], cursor: list[int]) -> int:
        """Push flow along one shortest augmenting path (iterative DFS); 0 when blocked."""
        path: list[int] = []
        node = source
        while node != sink:
            edges = self.out[node]
            while cursor[node] < len(edges):
                edge = edges[cursor[node]]
                if self.cap[edge] > 0 and level[self.head[edge]] == level[node] + 1:
                    break
                cursor[node] += 1
            else:
                if not path:
                    return 0
                level[node] = -1
                node = self.head[path.pop() ^ 1]
                cursor[node] += 1
                continue
            path.append(edge)
            node = self.head[edge]
        pushed = min(self.cap[edge] for edge in path)
        for edge in path:
            self.cap[edge] -= pushed
            self.cap[edge ^ 1] += pushed
        return pushed

    def max_flow(self, source: int, sink: int) -> int:
        total = 0
        while True:
            level = self._levels(source)
            if level[sink] < 0:
                return total
            cursor = [0] * len(self.out)
            while pushed := self._augment(source, sink, level, cursor):
                total += pushed


def _greedy_flow(graph: _ClassGraph) -> tuple[list[dict[int, int]], list[int], int]:
    """A first-fit starting flow: per expected class, the edge flows; per observed class, the
    flow into it; and the total. Dinic then only has to find the augmenting paths it missed."""
    into = [0] * len(graph.right)
    flows: list[dict[int, int]] = []
    total = 0
    for slot, count in enumerate(graph.left_counts):
        taken: dict[int, int] = {}
        for neighbour in graph.edges[slot]:
            if count == 0:
                break
            take = min(count, graph.right[neighbour].count - into[neighbour])
            if take > 0:
                taken[neighbour] = take
                into[neighbour] += take
                count -= take
                total += take
        flows.append(taken)
    return flows, into, total


def _matching_size(graph: _ClassGraph) -> int:
    """Maximum flow source → expected classes → observed classes → sink, from a greedy start."""
    return class_matching(graph)[0]


def class_matching(graph: _ClassGraph) -> tuple[int, list[int], list[int]]:
    """The maximum matching's size, and how many calls of each expected / observed class it
    uses (the per-class flows). A greedy first fit, finished by Dinic when it is not maximal."""
    flows, into, greedy = _greedy_flow(graph)
    used_left = [sum(taken.values()) for taken in flows]
    if greedy in (sum(graph.left_counts), sum(c.count for c in graph.right)):
        return greedy, used_left, into  # a side is saturated: nothing larger exists
    left, right = len(graph.left), len(graph.right)
    source, sink = left + right, left + right + 1
    network = _FlowNetwork(left + right + 2)
    unbounded = sum(graph.left_counts)
    left_edges: list[int] = []
    for slot, count in enumerate(graph.left_counts):
        taken = flows[slot]
        left_edges.append(len(network.head))
        network.add_edge(source, slot, count, used_left[slot])
        for neighbour in graph.edges[slot]:
            network.add_edge(slot, left + neighbour, unbounded, taken.get(neighbour, 0))
    right_edges: list[int] = []
    for slot, observed_class in enumerate(graph.right):
        right_edges.append(len(network.head))
        network.add_edge(left + slot, sink, observed_class.count, into[slot])
    total = greedy + network.max_flow(source, sink)
    # The flow on an edge is the residual capacity of its reverse edge (index ^ 1).
    return (
        total,
        [network.cap[edge ^ 1] for edge in left_edges],
        [network.cap[edge ^ 1] for edge in right_edges],
    )


def max_matching_size(expected: Sequence[ExpectedCall], observed: Sequence[ObservedCall]) -> int:
    """RFC 0244 §A ``matchedCount``: a maximum one-to-one matching of calls, ignoring order."""
    return _matching_size(_build_graph(expected, observed))


# --- the modes -------------------------------------------------------------------------------


def _exact(graph: _ClassGraph) -> bool:
    return len(graph.left_of) == len(graph.right_of) and all(
        graph.pair_matches(want, got)
        for want, got in zip(graph.left_of, graph.right_of, strict=True)
    )


def _in_order(graph: _ClassGraph) -> bool:
    expected = graph.left_of
    position = 0
    for got in graph.right_of:
        if position == len(expected):
            break
        if graph.pair_matches(expected[position], got):
            position += 1
    return position == len(expected)


def _every_observed_matchable(graph: _ClassGraph) -> bool:
    reached = {slot for neighbours in graph.edges for slot in neighbours}
    return len(reached) == len(graph.right)


def grade_trajectory(
    expectation: TrajectoryExpectation, observed: Sequence[ObservedCall], target_agent_id: str
) -> TrajectoryBlock:
    """Grade one trial's observed calls against ``expected.trajectory`` (RFC 0244 §A).

    Returns the content-free reporting block: mode, verdict and counts, never tool names.
    """
    calls = observed_trajectory(expectation, observed, target_agent_id)
    expected = expectation.calls
    forbidden = expectation.forbidden_tools
    forbidden_count = sum(1 for call in calls if call.tool in forbidden)
    graph = _build_graph(expected, calls)
    matched_count = _matching_size(graph)
    mode = expectation.match
    if mode == "exact":
        matched = _exact(graph)
    elif mode == "in-order":
        matched = _in_order(graph)
    elif mode == "any-order":
        matched = matched_count == len(expected)
    else:
        matched = _every_observed_matchable(graph)
    return TrajectoryBlock(
        mode=mode,
        matched=matched and forbidden_count == 0,
        expectedCount=len(expected),
        observedCount=len(calls),
        matchedCount=matched_count,
        forbiddenCount=forbidden_count,
    )
