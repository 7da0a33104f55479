"""The expected side of RFC 0244 §A trajectory grading, compiled once per expectation.

A task's expected calls are the same for every trial, so they are grouped into classes and
indexed once (:func:`compiled`, cached per :class:`~wopeval.suite.models.TrajectoryExpectation`
object) and each trial's observed calls are then looked up against that index without
canonicalising them in the common case.

Classes: per tool, ``argsMatch`` and an identity of the args: the canonical JSON
(:func:`~wopeval.grading.jsonmatch.canonical_json`) for ``exact`` and for a ``subset`` pattern
that is not an object (which is an exact comparison); the set of *terms* for a ``subset``
object pattern (a lone term stands for its set): its non-object leaves ``(key path,
json_key(leaf))`` and its empty objects ``(key path, OBJECT)`` (two patterns have the same terms
exactly when they are JSON-equal, and a value matches the pattern exactly when it has every
term: :func:`has_terms`); one class per tool for ``ignore``.

Per tool that some class compares arguments of (:class:`ToolPatterns`):

* ``exact`` classes by canonical key (``by_canon``, the ground truth, built on first use), and
  the object patterns also bucketed by the value of one top-level *pivot* field (the one with the
  most distinct scalar values among the first classes). An observed object is looked up by its
  pivot value and confirmed against the candidate by :meth:`ExactPatterns.equals`: Python ``==``
  plus either equal ``marshal`` bytes (the same values of the same types) or the type guards at
  the pattern's numbers and booleans (``==`` alone says ``True == 1``). Where those cannot decide
  (several candidates, a miss that a tuple or an integral float could explain, patterns outside
  the buckets) the observed value is canonicalised and looked up in ``by_canon``.
* ``subset`` object patterns in a trie of key paths, each under its *rarest* term among the
  tool's patterns: ``{"region": "eu", "orderId": 7}`` under ``orderId = 7``,
  ``{"filter": {"id": 7}}`` under ``filter.id = 7``. An observed value walks the trie (each level
  the fewer of its keys and the trie's branches) and the patterns found are confirmed on their
  other terms.
"""

from __future__ import annotations

import functools
import itertools
import marshal
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field

from wopeval.grading.expectation_memo import ExpectationMemo
from wopeval.grading.jsonmatch import canonical_json
from wopeval.grading.pattern_terms import (
    _MISSING,
    OBJECT,
    Guard,
    Path,
    Term,
    _guards,
    _pattern_terms,
    guards_hold,
    has_terms,
    leaf_key,
    uncompiled_matches,
)
from wopeval.suite.models import ArgsMatch, ExpectedCall, TrajectoryExpectation

# The terms and guards (.pattern_terms) and the memo (.expectation_memo) have modules of their
# own; the names other modules used to import from here still resolve.
__all__ = [
    "OBJECT",
    "ExpectationMemo",
    "Patterns",
    "ToolPatterns",
    "cached",
    "compile_patterns",
    "compiled",
    "guards_hold",
    "has_terms",
    "leaf_key",
    "uncompiled_matches",
]

_ALONE = object()  # marks the identity of an exact object pattern alone in its bucket
_SCALARS = frozenset({str, int, float, bool, type(None)})
_FEW = 4  # at most this many bucket candidates are compared with ``==``
_PIVOT_SAMPLE = 256  # classes per tool looked at to choose its lookup field
_PIVOT_CALLS = 1024  # calls looked at to choose each tool's bucket field

Plain = tuple[object, tuple[Guard, ...]]  # an exact object pattern of exact JSON types, guards
Sides = dict[str, list[int]]  # per tool, its classes of one kind in class order


class IndexNode:
    """A key path of the index trie: the patterns indexed here by a leaf (``buckets``) or by an
    empty object (``objects``), and the longer paths (``children``)."""

    __slots__ = ("buckets", "children", "objects")

    def __init__(self) -> None:
        self.children: dict[str, IndexNode] = {}
        self.buckets: dict[Hashable, list[int]] = {}
        self.objects: list[int] = []


class ExactPatterns:
    """The ``exact`` object patterns (``args``: class → its args), for the ``==`` lookups.

    :meth:`equals` is True only when pattern ``slot`` and an observed value are JSON-equal:
    Python ``==`` holds and either the values are identical type for type (equal ``marshal``
    bytes, version 2: no references, so equal values of equal types in equal key order give
    equal bytes) or every leaf at the pattern's numbers and booleans has the right type
    (:func:`guards_hold`; ``==`` alone says ``True == 1``). False leaves it undecided, and so
    does a pattern holding other than exact JSON types (a tuple, a subclass): its canonical key
    decides. The bytes and guards are computed on first use.
    """

    __slots__ = ("args", "guards", "packed")

    def __init__(self) -> None:
        self.args: dict[int, dict[str, object]] = {}
        self.packed: dict[int, bytes] = {}
        self.guards: dict[int, tuple[Guard, ...] | None] = {}  # None: not exact JSON types

    def equals(self, slot: int, inputs: object) -> bool:
        args = self.args[slot]
        if args != inputs:
            return False
        packed = self.packed.get(slot)
        if packed is None:
            try:
                packed = marshal.dumps(args, 2)
            except ValueError:  # a type marshal does not write: never equal bytes
                packed = b""
            self.packed[slot] = packed
        try:
            if marshal.dumps(inputs, 2) == packed:
                return True
        except ValueError:  # a type marshal does not write (a subclass, Decimal, …)
            pass
        if slot not in self.guards:
            found: list[Guard] = []
            self.guards[slot] = tuple(found) if _guards(args, (), found) else None
        guards = self.guards[slot]
        return guards is not None and guards_hold(inputs, guards)


class _Others:
    """A subset pattern's terms after its first (the indexed one), by class."""

    __slots__ = ("_terms",)

    def __init__(self, terms: dict[int, list[Term]]) -> None:
        self._terms = terms

    def __getitem__(self, slot: int) -> list[Term]:
        return self._terms[slot][1:]


@dataclass
class ToolPatterns:
    """One tool's compared classes, indexed for looking observed inputs up."""

    slots: list[int] = field(default_factory=list)  # the exact-like classes
    key: Callable[[int], str] = canonical_json  # a class's canonical key (Patterns.key)
    pivot: str | None = None
    by_field: dict[Hashable, int | list[int]] = field(default_factory=dict)  # value → classes
    plain: ExactPatterns = field(default_factory=ExactPatterns)
    rest: bool = False  # an exact-like class outside ``by_field``: observed need canonical keys
    index: IndexNode | None = None
    terms: dict[int, list[Term]] = field(default_factory=dict)  # Patterns.left_terms

    @property
    def others(self) -> _Others:
        """Each indexed pattern's terms besides the one it is indexed under."""
        return _Others(self.terms)

    _by_canon: dict[str, list[int]] | None = None

    def by_canon(self) -> dict[str, list[int]]:
        """The exact-like classes by canonical key (built on first use: most grades need none)."""
        found = self._by_canon
        if found is None:
            found, key = {}, self.key
            for slot in self.slots:
                found.setdefault(key(slot), []).append(slot)
            self._by_canon = found  # complete before it is seen (grades may share a suite)
        return found


@dataclass
class Patterns:
    """The expected calls grouped into classes (numbered by first appearance) and indexed."""

    calls: tuple[ExpectedCall, ...] = ()
    left: list[ExpectedCall] = field(default_factory=list)
    left_modes: list[ArgsMatch] = field(default_factory=list)
    left_tools: list[str] = field(default_factory=list)
    left_keys: list[str | None] = field(default_factory=list)
    left_terms: dict[int, list[Term]] = field(default_factory=dict)
    left_counts: list[int] = field(default_factory=list)
    left_of: list[int] = field(default_factory=list)
    ignore_of: dict[str, int] = field(default_factory=dict)
    tools: dict[str, ToolPatterns] = field(default_factory=dict)
    plain: ExactPatterns = field(default_factory=ExactPatterns)
    pivots: dict[str, str] = field(default_factory=dict)  # per tool (:func:`_pivots`)
    work: int = 0

    def key(self, slot: int) -> str:
        """The canonical key of exact-like class ``slot`` (computed on first use for an
        ``exact`` object pattern alone in its bucket)."""
        return _class_key(self.left_keys, self.left, slot)

    def matches(self, slot: int, tool: str, inputs: object) -> bool:
        """RFC 0244 §A call matching of expected class ``slot`` and one observed call."""
        if self.left_tools[slot] != tool:
            return False
        mode = self.left_modes[slot]
        if mode == "ignore":
            return True
        if slot in self.plain.args and self.plain.equals(slot, inputs):
            return True
        terms = self.left_terms.get(slot)
        if terms is not None:
            return has_terms(inputs, terms)
        return canonical_json(inputs) == self.key(slot)


def _class_key(keys: list[str | None], left: list[ExpectedCall], slot: int) -> str:
    """:meth:`Patterns.key` over its lists: a tool's ``key`` holds these, not the
    :class:`Patterns` (no reference cycle, so a compiled expectation is freed with it)."""
    key = keys[slot]
    if key is None:
        key = keys[slot] = canonical_json(left[slot].args)
    return key


def _pivots(calls: Sequence[ExpectedCall]) -> dict[str, str]:
    """Per tool, the top-level field with the most distinct scalar values among its ``exact``
    object patterns in the first calls (a tool absent from them has none: its patterns are
    grouped by canonical key, and :func:`_index_exact` chooses its lookup field)."""
    distinct: dict[str, dict[str, set[Hashable]]] = {}
    for call in calls[:_PIVOT_CALLS]:
        args = call.args
        if call.argsMatch == "exact" and type(args) is dict:
            fields = distinct.setdefault(call.tool, {})
            for name, value in args.items():
                if type(value) in _SCALARS:
                    fields.setdefault(name, set()).add(leaf_key(value))
    return {
        tool: max(fields, key=lambda name: len(fields[name]))
        for tool, fields in distinct.items()
        if fields
    }


def _bucket(args: dict[str, object], pivot: str) -> Hashable:
    """An ``exact`` object pattern's bucket: the :func:`leaf_key` of its ``pivot`` value (equal
    for JSON-equal patterns), or ``_MISSING`` where that is absent or no scalar."""
    value = args.get(pivot, _MISSING)
    kind = type(value)
    if kind is str or kind is int:
        return value
    if value is _MISSING or isinstance(value, dict | list | tuple):
        return _MISSING
    return leaf_key(value)


def _group(patterns: Patterns, calls: Sequence[ExpectedCall]) -> tuple[Sides, Sides]:
    """Number the classes and list, per tool, its ``exact``-like and its ``subset`` object
    classes (in class order; the tools in ``patterns.tools`` in order of their first class)."""
    # Identity per tool: the canonical key for exact args and non-object subset patterns (the
    # same comparison, so they may share a class), for subset object patterns the lone term or
    # the hash of the term set (an int, confirmed on the class's terms; a set whose hash an
    # unequal set holds already goes by the set itself), "i" for ignore (no canonical key is
    # the bare letter i). JSON-equal exact object patterns
    # share a pivot bucket (:func:`_bucket`), so a pattern alone in its bucket is its own class
    # with no canonical key yet; once a bucket is shared, its members go by canonical key.
    index: dict[str, dict[Hashable, int]] = {}  # per tool: no key tuple kept per class
    counts, left_of, exact = patterns.left_counts, patterns.left_of, patterns.plain.args
    pivots = patterns.pivots = _pivots(calls)
    alone: dict[str, dict[Hashable, int]] = {tool: {} for tool in pivots}  # -1: shared
    paths: dict[Path, Path] = {}
    top: dict[str, Path] = {}
    last: dict[str, Term] = {}
    exact_of: Sides = {}
    subset_of: Sides = {}
    tools, left_terms, ignore_of = patterns.tools, patterns.left_terms, patterns.ignore_of
    add_call, add_mode, add_slot = patterns.left.append, patterns.left_modes.append, left_of.append
    add_tool, add_key = patterns.left_tools.append, patterns.left_keys.append
    for call in calls:
        mode: ArgsMatch = call.argsMatch or "ignore"
        args, tool = call.args, call.tool
        terms: list[Term] | None = None
        key: str | None = None
        ident: Hashable
        classes = index.get(tool)
        if classes is None:
            classes = index[tool] = {}
        if mode == "ignore":
            ident = "i"
        elif mode == "subset" and isinstance(args, dict):
            terms = _pattern_terms(args, paths, top, last)
            if len(terms) == 1:
                ident = terms[0]  # a tuple: never equal to an int, a set, a str or "i"
            else:
                # No set is kept per class: most patterns are distinct.
                terms_set = frozenset(terms)
                ident = hash(terms_set)
                held = classes.get(ident)
                if held is not None and frozenset(left_terms[held]) != terms_set:
                    ident = terms_set
        else:
            pivot = pivots.get(tool) if mode == "exact" and isinstance(args, dict) else None
            bucket = _MISSING if pivot is None else _bucket(args, pivot)
            first = -1
            if bucket is not _MISSING:
                buckets = alone[tool]
                first = buckets.setdefault(bucket, len(counts))
                if 0 <= first < len(counts):  # the bucket is shared from now on
                    buckets[bucket] = -1
                    index[tool][patterns.key(first)] = first  # made at the first
            # A new bucket's class (first == len(counts)) is found by no identity but that.
            ident = None if first == len(counts) else canonical_json(args)
            key = ident
        slot = classes.get(ident)  # None is never kept: a new bucket's class is new
        if slot is not None:
            counts[slot] += 1
            add_slot(slot)
            continue
        slot = len(counts)
        if ident is not None:
            classes[ident] = slot
        add_call(call)
        add_mode(mode)
        add_tool(tool)
        add_key(key)
        counts.append(1)
        add_slot(slot)
        if mode == "ignore":
            ignore_of[tool] = slot
            continue
        if tool not in tools:
            tools[tool] = ToolPatterns()
        if terms is not None:
            left_terms[slot] = terms  # their count goes to ``work`` in _index_subset
            side = subset_of
        else:
            if mode == "exact" and type(args) is dict:
                exact[slot] = args
            side = exact_of
        listed = side.get(tool)
        if listed is None:
            side[tool] = [slot]
        else:
            listed.append(slot)
    return exact_of, subset_of


def _index_exact(patterns: Patterns, tool: ToolPatterns, slots: list[int]) -> None:
    """``slots`` for ``by_canon``; ``by_field`` for the plain object patterns, bucketed by the
    tool's pivot field (:func:`_pivots`, else the top-level field with the most distinct scalar
    values among the first classes)."""
    tool.slots, tool.key = slots, functools.partial(_class_key, patterns.left_keys, patterns.left)
    plain = patterns.plain.args
    pivot = tool.pivot = patterns.pivots.get(patterns.left_tools[slots[0]])
    if pivot is None:
        distinct: dict[str, set[Hashable]] = {}
        for slot in slots[:_PIVOT_SAMPLE]:
            found = plain.get(slot)
            for name, value in found.items() if found is not None else ():
                if type(value) in _SCALARS:
                    distinct.setdefault(name, set()).add(leaf_key(value))
        pivot = tool.pivot = max(distinct, key=lambda name: len(distinct[name]), default=None)
    tool.plain = patterns.plain  # every bucketed class is in it
    by_field = tool.by_field
    for slot in slots:
        found = plain.get(slot)
        value = _MISSING if found is None else found.get(pivot, _MISSING)  # type: ignore[arg-type]
        kind = type(value)
        if kind is str or kind is int:
            key: Hashable = value
        elif kind in _SCALARS:
            key = leaf_key(value)
        else:
            tool.rest = True
            continue
        bucket = by_field.get(key)
        if bucket is None:
            by_field[key] = slot  # one class: the slot itself (no list to allocate)
        elif isinstance(bucket, int):
            by_field[key] = [bucket, slot]
        else:
            bucket.append(slot)
    patterns.work += 2 * len(slots)


def _index_subset(patterns: Patterns, tool: ToolPatterns, slots: list[int]) -> None:
    """Each subset object pattern under its rarest term (a leaf before an empty object),
    moved to the front of the pattern's terms: a candidate is confirmed on the others."""
    left_terms = tool.terms = patterns.left_terms
    lists = list(map(left_terms.__getitem__, slots))
    # Rank 2 × frequency + (an empty object): the rarer term first, a leaf on a tie, the
    # earlier on a tie of both (``list.index`` finds the first of the smallest).
    count: Counter[Term] = Counter()
    if any(len(terms) > 1 for terms in lists):  # else each pattern goes under its one term
        count = Counter(itertools.chain.from_iterable(lists))
    root = tool.index = IndexNode()
    nodes: dict[Path, IndexNode] = {(): root}  # the node of each key path met
    for slot, terms in zip(slots, lists, strict=True):
        if len(terms) == 2:
            first, second = terms
            if 2 * count[second] + (second[1] is OBJECT) < 2 * count[first] + (first[1] is OBJECT):
                terms.reverse()  # the pattern's own list (_pattern_terms): its set is kept
        elif len(terms) > 2:
            ranks = [2 * count[term] + (term[1] is OBJECT) for term in terms]
            best = ranks.index(min(ranks))
            if best:
                terms.insert(0, terms.pop(best))
        path, key = terms[0]
        node = nodes.get(path)
        if node is None:
            node = nodes[path] = _node(root, path)
        if key is OBJECT:
            node.objects.append(slot)
        else:
            bucket = node.buckets.get(key)
            if bucket is None:
                node.buckets[key] = [slot]
            else:
                bucket.append(slot)
    patterns.work += 3 * sum(map(len, lists))  # each term: made, counted, ranked


def _node(root: IndexNode, path: Path) -> IndexNode:
    """The trie node of ``path`` under ``root``, made with the nodes above it if missing."""
    node = root
    for name in path:
        child = node.children.get(name)
        if child is None:
            child = node.children[name] = IndexNode()
        node = child
    return node


def compile_patterns(calls: Sequence[ExpectedCall]) -> Patterns:
    """Group and index ``calls`` (the expected side of
    :func:`~wopeval.grading.classgraph.build`)."""
    patterns = Patterns(calls=tuple(calls))
    exact, subset = _group(patterns, calls)
    for name, slots in exact.items():
        _index_exact(patterns, patterns.tools[name], slots)
    for name, slots in subset.items():
        _index_subset(patterns, patterns.tools[name], slots)
    return patterns


_PATTERNS: ExpectationMemo[Patterns] = ExpectationMemo(compile_patterns)
_CACHE = _PATTERNS.entries


def cached(expectation: TrajectoryExpectation) -> Patterns | None:
    """:func:`compiled` when ``expectation`` has been compiled already, else None."""
    return _PATTERNS.peek(expectation)


def compiled(expectation: TrajectoryExpectation) -> Patterns:
    """:func:`compile_patterns` of ``expectation.calls``, kept while the expectation lives
    (:class:`ExpectationMemo`: a list changed in place is compiled again)."""
    return _PATTERNS.get(expectation)
