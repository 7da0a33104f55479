"""The class graph of RFC 0244 §A trajectory grading, in linear time.

The expected calls are grouped and indexed once per expectation (:mod:`wopeval.grading.patterns`);
here each observed call is looked up against that index:

* ``exact``: one bucket lookup on the tool's field and one ``==`` (guarded), or the canonical key
  where that cannot decide (:class:`~wopeval.grading.patterns.ToolPatterns`).
* ``subset``: the observed value walks the tool's trie of indexed key paths (each level the fewer
  of its keys and the trie's branches); the patterns found are confirmed on their other terms.
* ``ignore``: no edges. Classes of different tools never share an edge, so the matching splits
  by tool, and within a tool an ``ignore`` class takes any call the other classes leave: the
  tool's total ``min(used + ignored, observed)`` only grows with ``used``, so a maximum flow
  among the other classes followed by ``ignore`` taking the leftovers is a maximum matching.

Observed calls are grouped into classes by (tool, the expected classes they match): calls with
the same neighbours are interchangeable in any matching, so no canonical key of the observed
inputs is needed to group them. The matching (:mod:`wopeval.grading.class_matching`) is a
first-fit pass, then Dinic's augmenting paths only inside the connected components of the
graph where first fit saturates neither side.

Linear in the calls' size, with one caveat no index avoids: the edges are the matching
(pattern, observed) pairs, and distinct ``subset`` patterns can be built to share large candidate
lists (a set-containment join). ``ClassGraph.work`` counts the elementary steps (terms, index
steps, candidates confirmed, edges, the flow's edge visits): the structural measure of
linearity the tests check, independent of the machine's speed.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from wopeval.grading.jsonmatch import canonical_json
from wopeval.grading.pattern_terms import _MISSING, has_terms, leaf_key
from wopeval.grading.patterns import _FEW, IndexNode, Patterns, ToolPatterns, compile_patterns
from wopeval.suite.models import ExpectedCall

__all__ = ["Call", "ClassGraph", "build", "build_graph"]

_CONTAINERS = (dict, list, tuple)
_NONE: tuple[int, ...] = ()  # no neighbours

Found = int | tuple[int, ...]  # the expected classes a call matches: one (its slot) or any number


class Call(Protocol):
    """An observed call as the graph reads it (an ``ObservedCall`` of the trajectory module)."""

    @property
    def tool(self) -> str: ...

    @property
    def inputs(self) -> object: ...


@dataclass
class ClassGraph:
    """Expected classes (left, from :class:`Patterns`) and observed classes (right) with
    multiplicities and edges.

    ``left_of`` / ``right_of`` give each call's class. An observed class is a tool and the
    expected classes its calls match (``right_neighbours``; ``right_found`` holds a lone one as
    its slot, no tuple allocated per class). The edges are flat (compressed
    rows): the neighbours of expected class ``i`` are ``targets[start[i]:start[i + 1]]``.
    """

    patterns: Patterns
    observed: Sequence[Call]
    right_first: list[int] = field(default_factory=list)  # each class's first call
    right_found: list[Found] = field(default_factory=list)
    right_counts: list[int] = field(default_factory=list)
    right_of: list[int] = field(default_factory=list)
    start: list[int] = field(default_factory=lambda: [0])
    targets: list[int] = field(default_factory=list)
    work: int = 0

    @property
    def right_neighbours(self) -> list[tuple[int, ...]]:
        """Each observed class's expected classes, as tuples."""
        return [(found,) if isinstance(found, int) else found for found in self.right_found]

    @property
    def right_tools(self) -> list[str]:
        return [self.observed[position].tool for position in self.right_first]

    @property
    def right_inputs(self) -> list[object]:
        return [self.observed[position].inputs for position in self.right_first]

    def right_by_tool(self) -> dict[str, list[int]]:
        """The observed classes of each tool, in order."""
        by_tool: dict[str, list[int]] = {}
        observed = self.observed
        for slot, position in enumerate(self.right_first):
            by_tool.setdefault(observed[position].tool, []).append(slot)
        return by_tool

    @property
    def left(self) -> list[ExpectedCall]:
        return self.patterns.left

    @property
    def left_counts(self) -> list[int]:
        return self.patterns.left_counts

    @property
    def left_of(self) -> list[int]:
        return self.patterns.left_of

    @property
    def ignore_of(self) -> dict[str, int]:
        return self.patterns.ignore_of

    def neighbours(self, left: int) -> list[int]:
        """The observed classes expected class ``left`` matches."""
        return self.targets[self.start[left] : self.start[left + 1]]

    def pair_matches(self, left: int, right: int) -> bool:
        """Call matching on two classes, from the lookups already made (``ignore``: the tool)."""
        found = self.right_found[right]
        if found == left if isinstance(found, int) else left in found:
            return True
        patterns = self.patterns
        return (
            patterns.left_modes[left] == "ignore"
            and patterns.left_tools[left] == self.observed[self.right_first[right]].tool
        )

    def matchable(self, right: int) -> bool:
        """Whether some expected class can take observed class ``right``."""
        tool = self.observed[self.right_first[right]].tool
        found = self.right_found[right]
        return isinstance(found, int) or bool(found) or tool in self.patterns.ignore_of

    def matchable_right(self) -> int:
        """How many observed classes some expected class can take (:meth:`matchable`)."""
        ignored, observed = self.patterns.ignore_of, self.observed
        return sum(
            1
            for found, position in zip(self.right_found, self.right_first, strict=True)
            if isinstance(found, int) or found or observed[position].tool in ignored
        )


def _exact_classes(tool: ToolPatterns, inputs: object) -> Found:
    """The exact-like classes ``inputs`` equals (``tool.slots`` is not empty)."""
    canon = tool.rest
    pivot = tool.pivot
    if pivot is not None and isinstance(inputs, dict):
        value = inputs.get(pivot, _MISSING)
        kind = type(value)
        if kind is str or kind is int:
            found = tool.by_field.get(value)
        elif value is _MISSING or isinstance(value, _CONTAINERS):
            found = None
        else:
            found = tool.by_field.get(leaf_key(value))
        if isinstance(found, int):
            if tool.plain.equals(found, inputs):
                return found
            canon = True
        elif found is not None:
            if len(found) <= _FEW:
                equals = tool.plain.equals
                for slot in found:
                    if equals(slot, inputs):
                        return slot
            canon = True
    if not canon:
        return _NONE
    slots = tool.by_canon().get(canonical_json(inputs))
    return _NONE if slots is None else slots[0] if len(slots) == 1 else tuple(slots)


def _walk(node: IndexNode, value: dict[str, object], out: list[int]) -> int:
    """Append the patterns indexed along the paths of the object ``value``; the steps taken."""
    if node.objects:
        out.extend(node.objects)
    steps = 1
    children = node.children
    if len(children) < len(value):
        for name, child in children.items():
            item = value.get(name, _MISSING)
            if item is _MISSING:
                continue
            if isinstance(item, dict):
                steps += _walk(child, item, out)
                continue
            steps += 1  # _step, inline: most values are leaves
            buckets = child.buckets
            if buckets:
                kind = type(item)
                found = buckets.get(item if kind is str or kind is int else leaf_key(item))
                if found is not None:
                    out.extend(found)
    else:
        for name, item in value.items():
            found_child = children.get(name)
            if found_child is not None:
                steps += _step(found_child, item, out)
    return steps


def _step(child: IndexNode, item: object, out: list[int]) -> int:
    if isinstance(item, dict):
        return _walk(child, item, out)
    buckets = child.buckets
    if buckets:
        kind = type(item)
        found = buckets.get(item if kind is str or kind is int else leaf_key(item))
        if found is not None:
            out.extend(found)
    return 1


def _lookup(tool: ToolPatterns, inputs: object) -> tuple[Found, int]:
    """The expected classes of ``tool`` that ``inputs`` matches (sorted), and the steps."""
    found = _exact_classes(tool, inputs) if tool.slots else _NONE
    index = tool.index
    if index is None or not isinstance(inputs, dict):
        return found, 0
    candidates: list[int] = []
    steps = _walk(index, inputs, candidates)
    terms_of = tool.terms  # each candidate's indexed term first: the rest confirm it
    if len(candidates) == 1 and found is _NONE:  # the common case: one pattern to confirm
        slot = candidates[0]
        terms = terms_of[slot]
        steps += len(terms)
        if len(terms) == 1 or has_terms(inputs, terms[1:]):
            return slot, steps
        return _NONE, steps
    if not candidates:
        return found, steps
    confirmed = [found] if isinstance(found, int) else list(found)
    for slot in candidates:
        terms = terms_of[slot]
        steps += len(terms)
        if len(terms) == 1 or has_terms(inputs, terms[1:]):
            confirmed.append(slot)
    if len(confirmed) > 1:
        confirmed.sort()
        return tuple(confirmed), steps
    return (confirmed[0] if confirmed else _NONE), steps


def _add_edges(graph: ClassGraph) -> None:
    """The compressed rows of the edges, from each observed class's neighbours."""
    degree = [0] * (len(graph.patterns.left_counts) + 1)
    for found in graph.right_found:
        if isinstance(found, int):
            degree[found + 1] += 1
        else:
            for slot in found:
                degree[slot + 1] += 1
    for slot in range(1, len(degree)):
        degree[slot] += degree[slot - 1]
    graph.start = degree[:]
    targets = graph.targets = [0] * degree[-1]
    for right, found in enumerate(graph.right_found):
        if isinstance(found, int):
            targets[degree[found]] = right
            degree[found] += 1
            continue
        for slot in found:
            targets[degree[slot]] = right
            degree[slot] += 1
    graph.work += len(targets) + len(degree)


def build(patterns: Patterns, observed: Sequence[Call]) -> ClassGraph:
    """Look the ``observed`` calls up against ``patterns`` and join their classes by edges."""
    graph = ClassGraph(patterns, observed, work=patterns.work + 3 * len(observed))
    # A class's key: its one neighbour (an int), its neighbours (a tuple) or, with none, its
    # tool (a str); an expected class belongs to one tool, so the key determines the tool.
    classes: dict[Hashable, int] = {}
    tools, counts, right_of = patterns.tools, graph.right_counts, graph.right_of
    first, neighbours = graph.right_first, graph.right_found
    work = 0
    for position, call in enumerate(observed):
        tool = call.tool
        index = tools.get(tool)
        if index is None:
            found: Found = _NONE
            key: Hashable = tool
        else:
            if index.index is None:  # exact-like classes only
                found = _exact_classes(index, call.inputs)
            else:
                found, steps = _lookup(index, call.inputs)
                work += steps
            key = found if isinstance(found, int) or found else tool
        slot = classes.get(key)
        if slot is None:
            slot = classes[key] = len(counts)
            first.append(position)
            neighbours.append(found)
            counts.append(1)
        else:
            counts[slot] += 1
        right_of.append(slot)
    graph.work += work
    _add_edges(graph)
    return graph


def build_graph(expected: Sequence[ExpectedCall], observed: Sequence[Call]) -> ClassGraph:
    """Group ``expected`` and the ``observed`` calls and join their classes by edges."""
    return build(compile_patterns(expected), observed)
