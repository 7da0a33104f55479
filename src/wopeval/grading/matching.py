"""The class graph of RFC 0244 §A trajectory grading and its maximum matching, in linear time.

Calls are grouped into classes with multiplicities. Expected: tool, ``argsMatch`` and the JSON
key of the args (every ``ignore`` call of a tool is one class). Observed: tool and the JSON key
of the inputs, computed once per call, or the tool alone when no expected call of that tool
compares arguments (:func:`wopeval.grading.jsonmatch.json_key`).

Edges join an expected class to the observed classes its calls match:

* ``exact``: one hash lookup of the args' key among the tool's observed classes.
* ``subset``: the observed classes of a tool are indexed by *terms* ``(key path, leaf)``: for
  every object reached through objects at ``path`` the term ``(path, OBJECT)``, for every other
  value ``(path, json_key(value))``. A pattern matches an observed class exactly when all its
  own terms (its non-object leaves, and its empty objects as ``OBJECT``) are terms of the
  class (that is :func:`~wopeval.grading.jsonmatch.json_subset`), so its candidates are the
  *rarest* posting list among its terms, each confirmed against the class's term set.
  ``{"region": "eu", "orderId": 7}`` looks up ``orderId = 7``,
  ``{"filter": {"id": 7}}`` looks up ``filter.id = 7``.
* ``ignore``: no edges. Classes of different tools never share an edge, so the matching splits
  by tool, and within a tool an ``ignore`` class takes any call the other classes leave: the
  tool's total ``min(used + ignored, observed)`` only grows with ``used``, so a maximum flow
  among the other classes followed by ``ignore`` taking the leftovers is a maximum matching.

The flow is a first-fit pass, then Dinic's augmenting paths only inside the connected
components of the graph where first fit saturates neither side (the classes that still compete).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

from wopeval.grading.jsonmatch import json_key, json_subset
from wopeval.suite.models import ExpectedCall

__all__ = ["ClassGraph", "ObservedClass", "build_graph"]

_OBJECT = object()  # the leaf marker of "an object is here" in the term index
Term = tuple[tuple[str, ...], Hashable]


@dataclass
class ObservedClass:
    tool: str
    inputs: object
    key: Hashable | None
    count: int = 0


@dataclass
class _ToolIndex:
    """Observed classes of one tool, with lookups for ``exact`` and ``subset`` candidates."""

    classes: list[int] = field(default_factory=list)
    by_inputs: dict[Hashable, int] = field(default_factory=dict)
    by_term: dict[Term, list[int]] | None = None
    terms_of: dict[int, frozenset[Term]] = field(default_factory=dict)


@dataclass
class ClassGraph:
    """Expected classes (left) and observed classes (right) with multiplicities and edges."""

    left: list[ExpectedCall] = field(default_factory=list)
    left_keys: list[Hashable | None] = field(default_factory=list)
    left_counts: list[int] = field(default_factory=list)
    right: list[ObservedClass] = field(default_factory=list)
    edges: list[list[int]] = field(default_factory=list)
    left_of: list[int] = field(default_factory=list)
    right_of: list[int] = field(default_factory=list)
    ignore_of: dict[str, int] = field(default_factory=dict)  # tool → its ``ignore`` class
    tools: dict[str, _ToolIndex] = field(default_factory=dict)

    def pair_matches(self, left: int, right: int) -> bool:
        """Call matching on two classes, reusing the JSON keys already computed."""
        want, got = self.left[left], self.right[right]
        if want.tool != got.tool:
            return False
        mode = want.args_match
        if mode == "ignore":
            return True
        if mode == "exact":
            return self.left_keys[left] == got.key
        return json_subset(want.args, got.inputs)

    def matchable_right(self) -> int:
        """How many observed classes some expected class can take."""
        reached = {slot for neighbours in self.edges for slot in neighbours}
        for tool in self.ignore_of:
            reached.update(self.tools[tool].classes if tool in self.tools else ())
        return len(reached)


def _group_expected(graph: ClassGraph, expected: Sequence[ExpectedCall]) -> None:
    index: dict[tuple[str, str, Hashable | None], int] = {}
    for call in expected:
        mode = call.args_match
        key = (call.tool, mode, None if mode == "ignore" else json_key(call.args))
        slot = index.get(key)
        if slot is None:
            slot = index[key] = len(graph.left)
            graph.left.append(call)
            graph.left_keys.append(key[2])
            graph.left_counts.append(0)
            if mode == "ignore":
                graph.ignore_of[call.tool] = slot
        graph.left_counts[slot] += 1
        graph.left_of.append(slot)


def _group_observed(
    graph: ClassGraph, observed: Sequence[tuple[str, object]], compared: frozenset[str]
) -> None:
    index: dict[tuple[str, Hashable | None], int] = {}
    for tool, inputs in observed:
        key = (tool, json_key(inputs) if tool in compared else None)
        slot = index.get(key)
        if slot is None:
            slot = index[key] = len(graph.right)
            graph.right.append(ObservedClass(tool, inputs, key[1]))
            tool_index = graph.tools.setdefault(tool, _ToolIndex())
            tool_index.classes.append(slot)
            if key[1] is not None:
                tool_index.by_inputs[key[1]] = slot
        graph.right[slot].count += 1
        graph.right_of.append(slot)


def _terms(value: object, path: tuple[str, ...], pattern: bool, out: list[Term]) -> None:
    """Append the terms of a value (``pattern``: only leaves and empty objects)."""
    if type(value) is dict or isinstance(value, dict):
        if not pattern or not value:
            out.append((path, _OBJECT))
        for name, item in value.items():
            if type(item) in _LEAF:
                out.append(((*path, name), item))
            else:
                _terms(item, (*path, name), pattern, out)
    else:
        out.append((path, json_key(value)))


_LEAF = frozenset({str, int})  # their own JSON key (see json_key)


def _term_index(graph: ClassGraph, tool_index: _ToolIndex) -> dict[Term, list[int]]:
    if tool_index.by_term is None:
        found: dict[Term, list[int]] = {}
        owned: dict[int, frozenset[Term]] = {}
        for slot in tool_index.classes:
            terms: list[Term] = []
            _terms(graph.right[slot].inputs, (), False, terms)
            owned[slot] = frozenset(terms)
            for term in terms:
                found.setdefault(term, []).append(slot)
        tool_index.by_term, tool_index.terms_of = found, owned
    return tool_index.by_term


def _subset_candidates(graph: ClassGraph, tool_index: _ToolIndex, args: object) -> list[int]:
    """Observed classes holding every term of ``args``, from its rarest posting list."""
    if not isinstance(args, dict):
        slot = tool_index.by_inputs.get(json_key(args))
        return [] if slot is None else [slot]
    by_term = _term_index(graph, tool_index)
    terms: list[Term] = []
    _terms(args, (), True, terms)
    rarest: list[int] | None = None
    for term in terms:
        posting = by_term.get(term)
        if posting is None:
            return []
        if rarest is None or len(posting) < len(rarest):
            rarest = posting
    assert rarest is not None  # a dict pattern has at least one term
    if len(terms) == 1:
        return list(rarest)
    owned = tool_index.terms_of
    return [slot for slot in rarest if owned[slot].issuperset(terms)]


def _neighbours(graph: ClassGraph, slot: int) -> list[int]:
    call = graph.left[slot]
    tool_index = graph.tools.get(call.tool)
    if tool_index is None or call.args_match == "ignore":
        return []
    key = graph.left_keys[slot]
    if call.args_match == "exact":
        found = None if key is None else tool_index.by_inputs.get(key)
        return [] if found is None else [found]
    return _subset_candidates(graph, tool_index, call.args)


def build_graph(
    expected: Sequence[ExpectedCall], observed: Sequence[tuple[str, object]]
) -> ClassGraph:
    """Group ``expected`` and the observed ``(tool, inputs)`` pairs and join them by edges."""
    graph = ClassGraph()
    _group_expected(graph, expected)
    compared = frozenset(call.tool for call in graph.left if call.args_match != "ignore")
    _group_observed(graph, observed, compared)
    graph.edges = [_neighbours(graph, slot) for slot in range(len(graph.left))]
    return graph
