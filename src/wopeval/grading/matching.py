"""The class graph of RFC 0244 §A trajectory grading and its maximum matching, in linear time.

Calls are grouped into classes with multiplicities, each call's arguments keyed once.
Expected: tool, ``argsMatch`` and an identity of the args: for ``exact`` (and a ``subset``
pattern that is not an object) the canonical JSON (:func:`wopeval.grading.jsonmatch.
canonical_json`: the C encoder with sorted keys, after the equality policy's normalisation
where a value needs it); for a ``subset`` object pattern its set of terms (below; two patterns
have the same set exactly when they are JSON-equal); every ``ignore`` call of a tool is one
class. Observed: tool and the canonical inputs, or the tool alone when no expected call of that
tool compares arguments.

Edges join an expected class to the observed classes its calls match:

* ``exact``: one hash lookup of the canonical args among the tool's observed classes.
* ``subset``: a pattern's *terms* are its non-object leaves ``(key path, json_key(leaf))`` and
  its empty objects ``(key path, OBJECT)``; it matches an observed class exactly when the class
  has every term (a leaf equal at that path, an object at that path), which is
  :func:`~wopeval.grading.jsonmatch.json_subset`. The key paths of a tool's patterns form a
  trie, and each observed class of the tool is indexed along the trie only (each level walks
  the fewer of the object's keys and the trie's branches, so no more than the inputs' size).
  A pattern's candidates are the *rarest* posting list among its terms, each confirmed against
  the other terms. ``{"region": "eu", "orderId": 7}`` looks up ``orderId = 7``,
  ``{"filter": {"id": 7}}`` looks up ``filter.id = 7``. A pattern that is not an object is an
  ``exact`` lookup.
* ``ignore``: no edges. Classes of different tools never share an edge, so the matching splits
  by tool, and within a tool an ``ignore`` class takes any call the other classes leave: the
  tool's total ``min(used + ignored, observed)`` only grows with ``used``, so a maximum flow
  among the other classes followed by ``ignore`` taking the leftovers is a maximum matching.

The flow (:mod:`wopeval.grading.flow`) is a first-fit pass, then Dinic's augmenting paths only
inside the connected components of the graph where first fit saturates neither side.

Linear in the calls' size, with one caveat no index avoids: the edges are the matching
(pattern class, observed class) pairs, and distinct ``subset`` patterns can be built to share
large posting lists (a set-containment join). ``ClassGraph.work`` counts the elementary steps
(terms, index steps, candidates confirmed, edges, the flow's edge visits): the structural
measure of linearity the tests check, independent of the machine's speed.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from wopeval.grading.jsonmatch import canonical_json, json_key
from wopeval.suite.models import ArgsMatch, ExpectedCall

__all__ = ["Call", "ClassGraph", "build_graph"]

_OBJECT = object()  # the leaf marker of "an object is here" in the term index


class _Node:
    """A key path some ``subset`` pattern of a tool uses, with the observed classes there.

    ``leaf``: a pattern holds a non-object value here; ``object``: an empty object. Observed
    classes are indexed only along these paths: ``by_key`` (leaf key → classes), ``key_of``
    (class → its leaf key), ``objects`` (classes holding an object here).
    """

    __slots__ = ("by_key", "children", "key_of", "leaf", "object", "object_set", "objects")

    def __init__(self) -> None:
        self.children: dict[str, _Node] = {}
        self.leaf = False
        self.object = False
        self.by_key: dict[Hashable, list[int]] = {}
        self.key_of: dict[int, Hashable] = {}
        self.objects: list[int] = []
        self.object_set: set[int] = set()


Term = tuple[_Node, Hashable]  # (path, leaf key) or (path, _OBJECT)


@dataclass
class _ToolIndex:
    """Observed classes of one tool, with lookups for ``exact`` and ``subset`` candidates."""

    classes: list[int] = field(default_factory=list)
    by_key: dict[str | None, int] = field(default_factory=dict)


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
    left_terms: dict[int, list[Term]] = field(default_factory=dict)  # subset object patterns
    paths: dict[str, _Node] = field(default_factory=dict)  # tool → its patterns' key paths
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
    # Per tool, classes by an identity: mode tag + canonical args for ``exact`` (and a
    # non-object ``subset`` pattern), the pattern's term set for a ``subset`` object pattern
    # (equal exactly when the patterns are JSON-equal), the tag alone for ``ignore``.
    index: dict[str, dict[Hashable, int]] = {}
    counts, left_of = graph.left_counts, graph.left_of
    for call in expected:
        mode: ArgsMatch = call.argsMatch or "ignore"
        tool, args = call.tool, call.args
        terms: list[Term] | None = None
        key: str | None = None
        ident: Hashable
        if mode == "ignore":
            ident = "i"
        elif mode == "subset" and isinstance(args, dict):
            root = graph.paths.get(tool)
            if root is None:
                root = graph.paths[tool] = _Node()
            terms = []
            _pattern_terms(root, args, terms)
            ident = frozenset(terms)
        else:
            key = canonical_json(args)
            ident = _MODE_TAG[mode] + key
        by_ident = index.get(tool)
        if by_ident is None:
            by_ident = index[tool] = {}
        slot = by_ident.get(ident)
        if slot is None:
            slot = by_ident[ident] = len(counts)
            graph.left.append(call)
            graph.left_modes.append(mode)
            graph.left_keys.append(key)
            counts.append(0)
            if terms is not None:
                graph.left_terms[slot] = terms
                graph.work += len(terms)
            if mode == "ignore":
                graph.ignore_of[tool] = slot
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


def _leaf_key(value: object) -> Hashable:
    return value if type(value) is str or type(value) is int else json_key(value)


def _pattern_terms(node: _Node, pattern: dict[str, object], out: list[Term]) -> None:
    """Add ``pattern``'s paths under ``node`` and append its terms: every non-object leaf and
    every empty object (what :func:`~wopeval.grading.jsonmatch.json_subset` requires)."""
    if not pattern:
        node.object = True
        out.append((node, _OBJECT))
    for name, item in pattern.items():
        if type(name) is not str and not isinstance(name, str):
            raise TypeError(f"not a JSON object key: {name!r}")
        child = node.children.get(name)
        if child is None:
            child = node.children[name] = _Node()
        if isinstance(item, dict):
            _pattern_terms(child, item, out)
        else:
            child.leaf = True
            out.append((child, _leaf_key(item)))


def _index_observed(node: _Node, value: object, slot: int) -> int:
    """Index observed class ``slot`` (``value`` is at ``node``'s path) along the patterns'
    paths; each level walks the fewer of its keys and the paths. Returns the steps taken."""
    if not isinstance(value, dict):
        if node.leaf:
            key = _leaf_key(value)
            node.by_key.setdefault(key, []).append(slot)
            node.key_of[slot] = key
        return 1
    if node.object:
        node.objects.append(slot)
        node.object_set.add(slot)
    steps = 1
    children = node.children
    if len(children) < len(value):
        for name, child in children.items():
            if name in value:
                steps += _index_observed(child, value[name], slot)
    else:
        for name, item in value.items():
            found = children.get(name)
            if found is not None:
                steps += _index_observed(found, item, slot)
    return steps


def _subset_candidates(graph: ClassGraph, terms: list[Term]) -> list[int]:
    """Observed classes holding every term: the rarest posting, confirmed term by term."""
    rarest: list[int] | None = None
    chosen = 0
    for index, (node, key) in enumerate(terms):
        posting = node.objects if key is _OBJECT else node.by_key.get(key)
        if not posting:
            return []
        if rarest is None or len(posting) < len(rarest):
            rarest, chosen = posting, index
    assert rarest is not None  # a dict pattern has at least one term
    graph.work += len(terms) + len(rarest)
    if len(terms) == 1:
        return list(rarest)
    others = terms[:chosen] + terms[chosen + 1 :]
    found: list[int] = []
    for slot in rarest:
        for node, key in others:
            if key is _OBJECT:
                if slot not in node.object_set:
                    break
            elif node.key_of.get(slot, _OBJECT) != key:
                break
        else:
            found.append(slot)
    graph.work += len(rarest) * len(others)
    return found


def _index_subset_paths(graph: ClassGraph) -> None:
    """Index the observed classes of every tool with ``subset`` object patterns."""
    for tool, root in graph.paths.items():
        tool_index = graph.tools.get(tool)
        for observed in tool_index.classes if tool_index is not None else ():
            graph.work += _index_observed(root, graph.right_inputs[observed], observed)


def _add_edges(graph: ClassGraph) -> None:
    targets, start = graph.targets, graph.start
    _index_subset_paths(graph)
    for slot, mode in enumerate(graph.left_modes):
        tool_index = graph.tools.get(graph.left[slot].tool)
        if tool_index is not None and mode != "ignore":
            terms = graph.left_terms.get(slot)
            if terms is None:
                found = tool_index.by_key.get(graph.left_keys[slot])
                if found is not None:
                    targets.append(found)
            else:
                targets.extend(_subset_candidates(graph, terms))
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
