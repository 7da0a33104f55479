"""Maximum flow on the §A class graph: first fit, then Dinic only where classes still compete.

First fit gives every expected class, in order, what its observed classes have left. In a
connected component of the graph where first fit saturates either side nothing larger exists;
the other components (the classes that still compete) go to Dinic's augmenting paths, started
from the first-fit flow. ``ignore`` classes have no edges: they take, per tool, whatever calls
are left afterwards (see :mod:`wopeval.grading.classgraph` for why that is maximum).
"""

from __future__ import annotations

from wopeval.grading.classgraph import ClassGraph

__all__ = ["class_matching"]


class _FlowNetwork:
    """A residual network with integer capacities; ``max_flow`` is Dinic's algorithm."""

    def __init__(self, size: int) -> None:
        self.out: list[list[int]] = [[] for _ in range(size)]
        self.head: list[int] = []
        self.cap: list[int] = []
        self.steps = 0  # edges examined, for ClassGraph.work

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
                self.steps += len(self.out[node])
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
                self.steps += 1
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


def _greedy_flow(graph: ClassGraph) -> tuple[list[int], list[int], list[int]]:
    """First fit: the flow on each edge, how many calls of each expected class it uses and
    how many of each observed class it takes."""
    start, targets, capacity = graph.start, graph.targets, graph.right_counts
    into = [0] * len(capacity)
    on_edge = [0] * len(targets)
    used_left = [0] * len(graph.left_counts)
    for slot, count in enumerate(graph.left_counts):
        first, end = start[slot], start[slot + 1]
        if end == first + 1:  # one neighbour (every ``exact`` class): no inner loop
            neighbour = targets[first]
            take = capacity[neighbour] - into[neighbour]
            if take > count:
                take = count
            if take > 0:
                on_edge[first] = take
                into[neighbour] += take
                used_left[slot] = take
            continue
        wanted = count
        for edge in range(first, end):
            if wanted == 0:
                break
            neighbour = targets[edge]
            take = min(wanted, capacity[neighbour] - into[neighbour])
            if take > 0:
                on_edge[edge] = take
                into[neighbour] += take
                wanted -= take
        used_left[slot] = count - wanted
    return on_edge, used_left, into


def _find(parent: list[int], node: int) -> int:
    while parent[node] != node:
        parent[node] = parent[parent[node]]
        node = parent[node]
    return node


def _competing(graph: ClassGraph, used_left: list[int], into: list[int]) -> list[int]:
    """Expected classes in components where first fit saturates neither side."""
    left, start, targets = len(graph.left_counts), graph.start, graph.targets
    parent = list(range(left + len(graph.right_counts)))
    linked = [slot for slot in range(left) if start[slot] < start[slot + 1]]
    for slot in linked:
        for edge in range(start[slot], start[slot + 1]):
            a, b = _find(parent, slot), _find(parent, left + targets[edge])
            if a != b:
                parent[a] = b
    spare: dict[int, list[bool]] = {}  # root → [left side has spare, right side has spare]
    for slot in linked:
        sides = spare.setdefault(_find(parent, slot), [False, False])
        sides[0] = sides[0] or used_left[slot] < graph.left_counts[slot]
    for slot, count in enumerate(graph.right_counts):
        found = spare.get(_find(parent, left + slot))
        if found is not None:
            found[1] = found[1] or into[slot] < count
    return [slot for slot in linked if all(spare[_find(parent, slot)])]


def _augment(
    graph: ClassGraph,
    competing: list[int],
    on_edge: list[int],
    used_left: list[int],
    into: list[int],
) -> None:
    """Dinic on the competing classes, from the first-fit flow; updates the class flows."""
    start, targets = graph.start, graph.targets
    rights = sorted(
        {targets[edge] for slot in competing for edge in range(start[slot], start[slot + 1])}
    )
    local = {slot: index for index, slot in enumerate(rights, start=len(competing))}
    source, sink = len(competing) + len(rights), len(competing) + len(rights) + 1
    network = _FlowNetwork(sink + 1)
    unbounded = sum(graph.left_counts[slot] for slot in competing)
    left_edges: list[int] = []
    for index, slot in enumerate(competing):
        left_edges.append(len(network.head))
        network.add_edge(source, index, graph.left_counts[slot], used_left[slot])
        for edge in range(start[slot], start[slot + 1]):
            network.add_edge(index, local[targets[edge]], unbounded, on_edge[edge])
    right_edges: list[int] = []
    for slot in rights:
        right_edges.append(len(network.head))
        network.add_edge(local[slot], sink, graph.right_counts[slot], into[slot])
    network.max_flow(source, sink)
    graph.work += network.steps
    # The flow on an edge is the residual capacity of its reverse edge (index ^ 1).
    for slot, edge in zip(competing, left_edges, strict=True):
        used_left[slot] = network.cap[edge ^ 1]
    for slot, edge in zip(rights, right_edges, strict=True):
        into[slot] = network.cap[edge ^ 1]


def _fill_ignore(graph: ClassGraph, used_left: list[int], into: list[int]) -> None:
    """Each tool's ``ignore`` class takes the calls of that tool nothing else took."""
    by_tool = graph.right_by_tool() if graph.ignore_of else {}
    for tool, slot in graph.ignore_of.items():
        wanted = graph.left_counts[slot]
        for observed in by_tool.get(tool, ()):
            if wanted == 0:
                break
            take = min(wanted, graph.right_counts[observed] - into[observed])
            into[observed] += take
            wanted -= take
        used_left[slot] = graph.left_counts[slot] - wanted


def class_matching(graph: ClassGraph) -> tuple[int, list[int], list[int]]:
    """The maximum matching's size, and how many calls of each expected / observed class it
    uses (the per-class flows)."""
    on_edge, used_left, into = _greedy_flow(graph)
    greedy = sum(used_left)
    start = graph.start
    saturated = greedy in (
        sum(count for slot, count in enumerate(graph.left_counts) if start[slot] < start[slot + 1]),
        sum(graph.right_counts),
    )
    competing = [] if saturated else _competing(graph, used_left, into)
    if competing:
        _augment(graph, competing, on_edge, used_left, into)
    _fill_ignore(graph, used_left, into)
    return sum(used_left), used_left, into
