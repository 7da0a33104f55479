"""The class graph of RFC 0244 §A trajectory grading and its maximum matching, in linear time.

Calls are grouped into classes with multiplicities, each call's arguments canonicalised once
(:func:`wopeval.grading.jsonmatch.canonical_json`: the C encoder with sorted keys, after the
equality policy's normalisation where a value needs it). Expected: tool, ``argsMatch`` and the
canonical args (every ``ignore`` call of a tool is one class). Observed: tool and the canonical
inputs, or the tool alone when no expected call of that tool compares arguments.

Edges join an expected class to the observed classes its calls match:

* ``exact``: one hash lookup of the canonical args among the tool's observed classes.
* ``subset``: the observed classes of a tool are indexed by *terms* ``(key path, leaf)``: for
  every object reached through objects at ``path`` the term ``(path, OBJECT)``, for every other
  value ``(path, json_key(value))``. A pattern matches an observed class exactly when all its
  own terms (its non-object leaves, and its empty objects as ``OBJECT``) are terms of the
  class (that is :func:`~wopeval.grading.jsonmatch.json_subset`), so its candidates are the
  *rarest* posting list among its terms, each confirmed against the class's term set.
  ``{"region": "eu", "orderId": 7}`` looks up ``orderId = 7``,
  ``{"filter": {"id": 7}}`` looks up ``filter.id = 7``. A pattern that is not an object is
  an ``exact`` lookup.
* ``ignore``: no edges. Classes of different tools never share an edge, so the matching splits
  by tool, and within a tool an ``ignore`` class takes any call the other classes leave: the
  tool's total ``min(used + ignored, observed)`` only grows with ``used``, so a maximum flow
  among the other classes followed by ``ignore`` taking the leftovers is a maximum matching.

The flow (:mod:`wopeval.grading.flow`) is a first-fit pass, then Dinic's augmenting paths only
inside the connected components of the graph where first fit saturates neither side.

``ClassGraph.work`` counts the elementary steps spent on edges (terms looked up, candidates
confirmed, edges made, and the flow's edge visits): the structural measure of linearity the
tests check, independent of the machine's speed.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from wopeval.grading.jsonmatch import canonical_json, json_key
from wopeval.suite.models import ArgsMatch, ExpectedCall

__all__ = ["Call", "ClassGraph", "build_graph"]

_OBJECT = object()  # the leaf marker of "an object is here" in the term index
Term = tuple[tuple[str, ...], Hashable]


@dataclass
class _ToolIndex:
    """Observed classes of one tool, with lookups for ``exact`` and ``subset`` candidates."""

    classes: list[int] = field(default_factory=list)
    by_key: dict[str | None, int] = field(default_factory=dict)
    by_term: dict[Term, list[int]] | None = None
    terms_of: dict[int, frozenset[Term]] = field(default_factory=dict)


class Call(Protocol):
    """An observed call as the graph reads it (an ``ObservedCall`` of the trajectory module)."""

    @property
    def tool(self) -> str: ...

    @property
    def inputs(self) -> object: ...


@dataclass
class ClassGraph:
    """Expected classes (left) and observed classes (right) with multiplicities and edges.

    Classes are numbered in order of first appearance; ``left_of`` / ``right_of`` give each
    call's class. Keys are canonical JSON (``None``: arguments not compared). The edges are
    flat (compressed rows): the neighbours of expected class ``i`` are
    ``targets[start[i]:start[i + 1]]``, so a graph of ``n`` calls allocates no per-class
    containers.
    """

    left: list[ExpectedCall] = field(default_factory=list)
    left_modes: list[ArgsMatch] = field(default_factory=list)
    left_keys: list[str | None] = field(default_factory=list)
    left_counts: list[int] = field(default_factory=list)
    right_tools: list[str] = field(default_factory=list)
    right_inputs: list[object] = field(default_factory=list)
    right_keys: list[str | None] = field(default_factory=list)
    right_counts: list[int] = field(default_factory=list)
    start: list[int] = field(default_factory=lambda: [0])
    targets: list[int] = field(default_factory=list)
    left_of: list[int] = field(default_factory=list)
    right_of: list[int] = field(default_factory=list)
    ignore_of: dict[str, int] = field(default_factory=dict)  # tool → its ``ignore`` class
    tools: dict[str, _ToolIndex] = field(default_factory=dict)
    work: int = 0
    _edge_sets: dict[int, frozenset[int]] = field(default_factory=dict)

    def neighbours(self, left: int) -> list[int]:
        """The observed classes expected class ``left`` matches."""
        return self.targets[self.start[left] : self.start[left + 1]]

    def pair_matches(self, left: int, right: int) -> bool:
        """Call matching on two classes, from the edges already computed (``ignore``: the tool)."""
        first, end = self.start[left], self.start[left + 1]
        if end == first + 1:
            return self.targets[first] == right
        if first == end:
            return (
                self.left_modes[left] == "ignore"
                and self.left[left].tool == self.right_tools[right]
            )
        found = self._edge_sets.get(left)
        if found is None:
            found = self._edge_sets[left] = frozenset(self.neighbours(left))
        return right in found

    def matchable_right(self) -> int:
        """How many observed classes some expected class can take."""
        reached = set(self.targets)
        for tool in self.ignore_of:
            reached.update(self.tools[tool].classes if tool in self.tools else ())
        return len(reached)


_MODE_TAG: dict[ArgsMatch, str] = {"exact": "e", "subset": "s", "ignore": "i"}


def _group_expected(graph: ClassGraph, expected: Sequence[ExpectedCall]) -> None:
    # Per tool, classes by mode tag + canonical args: strings, not tuples, as keys.
    index: dict[str, dict[str, int]] = {}
    counts, left_of = graph.left_counts, graph.left_of
    for call in expected:
        mode: ArgsMatch = call.argsMatch or "ignore"
        key = None if mode == "ignore" else canonical_json(call.args)
        by_ident = index.get(call.tool)
        if by_ident is None:
            by_ident = index[call.tool] = {}
        ident = _MODE_TAG[mode] if key is None else _MODE_TAG[mode] + key
        slot = by_ident.get(ident)
        if slot is None:
            slot = by_ident[ident] = len(counts)
            graph.left.append(call)
            graph.left_modes.append(mode)
            graph.left_keys.append(key)
            counts.append(0)
            if mode == "ignore":
                graph.ignore_of[call.tool] = slot
        counts[slot] += 1
        left_of.append(slot)


def _group_observed(graph: ClassGraph, observed: Sequence[Call], compared: frozenset[str]) -> None:
    tools, counts, right_of = graph.tools, graph.right_counts, graph.right_of
    for call in observed:
        tool = call.tool
        tool_index = tools.get(tool)
        if tool_index is None:
            tool_index = tools[tool] = _ToolIndex()
        key = canonical_json(call.inputs) if tool in compared else None
        slot = tool_index.by_key.get(key)
        if slot is None:
            slot = tool_index.by_key[key] = len(counts)
            tool_index.classes.append(slot)
            graph.right_tools.append(tool)
            graph.right_inputs.append(call.inputs)
            graph.right_keys.append(key)
            counts.append(0)
        counts[slot] += 1
        right_of.append(slot)


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
            _terms(graph.right_inputs[slot], (), False, terms)
            owned[slot] = frozenset(terms)
            for term in terms:
                found.setdefault(term, []).append(slot)
            graph.work += len(terms)
        tool_index.by_term, tool_index.terms_of = found, owned
    return tool_index.by_term


def _subset_candidates(graph: ClassGraph, tool_index: _ToolIndex, args: object) -> list[int]:
    """Observed classes holding every term of the object ``args``, from its rarest posting."""
    by_term = _term_index(graph, tool_index)
    terms: list[Term] = []
    _terms(args, (), True, terms)
    graph.work += len(terms)
    rarest: list[int] | None = None
    for term in terms:
        posting = by_term.get(term)
        if posting is None:
            return []
        if rarest is None or len(posting) < len(rarest):
            rarest = posting
    assert rarest is not None  # a dict pattern has at least one term
    graph.work += len(rarest)
    if len(terms) == 1:
        return list(rarest)
    owned = tool_index.terms_of
    return [slot for slot in rarest if owned[slot].issuperset(terms)]


def _add_edges(graph: ClassGraph) -> None:
    targets, start = graph.targets, graph.start
    for slot, mode in enumerate(graph.left_modes):
        call = graph.left[slot]
        tool_index = graph.tools.get(call.tool)
        if tool_index is not None and mode != "ignore":
            if mode == "exact" or not isinstance(call.args, dict):
                found = tool_index.by_key.get(graph.left_keys[slot])
                if found is not None:
                    targets.append(found)
            else:
                targets.extend(_subset_candidates(graph, tool_index, call.args))
        start.append(len(targets))
    graph.work += len(targets)


def build_graph(expected: Sequence[ExpectedCall], observed: Sequence[Call]) -> ClassGraph:
    """Group ``expected`` and the ``observed`` calls and join their classes by edges."""
    graph = ClassGraph()
    _group_expected(graph, expected)
    compared = frozenset(
        call.tool
        for call, mode in zip(graph.left, graph.left_modes, strict=True)
        if mode != "ignore"
    )
    _group_observed(graph, observed, compared)
    _add_edges(graph)
    return graph
