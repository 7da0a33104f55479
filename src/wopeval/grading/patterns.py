"""The expected side of RFC 0244 §A trajectory grading, compiled once per expectation.

A task's expected calls are the same for every trial, so they are grouped into classes and
indexed once (:func:`compiled`, cached per :class:`~wopeval.suite.models.TrajectoryExpectation`
object) and each trial's observed calls are then looked up against that index without
canonicalising them in the common case.

Classes: per tool, ``argsMatch`` and an identity of the args: the canonical JSON
(:func:`~wopeval.grading.jsonmatch.canonical_json`) for ``exact`` and for a ``subset`` pattern
that is not an object (which is an exact comparison); the set of *terms* for a ``subset``
object pattern: its non-object leaves ``(key path, json_key(leaf))`` and its empty objects
``(key path, OBJECT)`` (two patterns have the same terms exactly when they are JSON-equal, and a
value matches the pattern exactly when it has every term: :func:`has_terms`); one class per tool
for ``ignore``.

Per tool that some class compares arguments of (:class:`ToolPatterns`):

* ``exact`` classes by canonical key (``by_canon``, the ground truth), and the object patterns
  made of exact JSON types also bucketed by the value of one top-level *field* (the one with the
  most distinct values). An observed object is looked up by that field's value and confirmed by
  Python ``==`` against the one candidate plus :func:`guards_hold`, which checks the types at the
  pattern's numeric and boolean leaves (``==`` alone says ``True == 1``). Python ``==`` implies
  JSON equality under those guards; where it cannot decide (several candidates, a miss that a
  tuple or a number subclass could explain, patterns outside the buckets) the observed value is
  canonicalised and looked up in ``by_canon``.
* ``subset`` object patterns in a trie of key paths, each under its *rarest* term among the
  tool's patterns: ``{"region": "eu", "orderId": 7}`` under ``orderId = 7``,
  ``{"filter": {"id": 7}}`` under ``filter.id = 7``. An observed value walks the trie (each level
  the fewer of its keys and the trie's branches) and the patterns found are confirmed on their
  other terms.
"""

from __future__ import annotations

import math
import operator
import weakref
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field

from wopeval.grading.jsonmatch import canonical_json, json_key
from wopeval.suite.models import ArgsMatch, ExpectedCall, TrajectoryExpectation

__all__ = [
    "OBJECT",
    "Patterns",
    "ToolPatterns",
    "compile_patterns",
    "compiled",
    "guards_hold",
    "has_terms",
    "leaf_key",
]

OBJECT: Hashable = object()  # the leaf marker of "an object is here" in a term
_MISSING = object()
_SCALARS = frozenset({str, int, float, bool, type(None)})
_FEW = 4  # at most this many bucket candidates are compared with ``==``

Path = tuple[str, ...]
Term = tuple[Path, Hashable]
Guard = tuple[tuple[str | int, ...], bool]  # (path to a leaf, the leaf must be a bool)


def leaf_key(value: object) -> Hashable:
    """:func:`~wopeval.grading.jsonmatch.json_key`, with str and int as themselves."""
    return value if type(value) is str or type(value) is int else json_key(value)


class IndexNode:
    """A key path of the index trie: the patterns indexed here by a leaf (``buckets``) or by an
    empty object (``objects``), and the longer paths (``children``)."""

    __slots__ = ("buckets", "children", "objects")

    def __init__(self) -> None:
        self.children: dict[str, IndexNode] = {}
        self.buckets: dict[Hashable, list[int]] = {}
        self.objects: list[int] = []


@dataclass
class ToolPatterns:
    """One tool's compared classes, indexed for looking observed inputs up."""

    by_canon: dict[str, list[int]] = field(default_factory=dict)
    pivot: str | None = None
    by_field: dict[Hashable, list[int]] = field(default_factory=dict)
    plain: dict[int, tuple[object, tuple[Guard, ...]]] = field(default_factory=dict)
    rest: bool = False  # an exact-like class outside ``by_field``: observed need canonical keys
    index: IndexNode | None = None
    others: dict[int, list[Term]] = field(default_factory=dict)  # terms besides the indexed one


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
    plain: dict[int, tuple[object, tuple[Guard, ...]]] = field(default_factory=dict)
    work: int = 0

    def same_calls(self, calls: Sequence[ExpectedCall]) -> bool:
        return len(calls) == len(self.calls) and all(map(operator.is_, calls, self.calls))

    def matches(self, slot: int, tool: str, inputs: object) -> bool:
        """RFC 0244 §A call matching of expected class ``slot`` and one observed call."""
        if self.left_tools[slot] != tool:
            return False
        mode = self.left_modes[slot]
        if mode == "ignore":
            return True
        plain = self.plain.get(slot)
        if plain is not None and plain[0] == inputs and guards_hold(inputs, plain[1]):
            return True
        terms = self.left_terms.get(slot)
        if terms is not None:
            return has_terms(inputs, terms)
        return canonical_json(inputs) == self.left_keys[slot]


def guards_hold(value: object, guards: tuple[Guard, ...]) -> bool:
    """After ``pattern == value``: the leaves at the pattern's booleans are booleans and those
    at its numbers exact ints or floats, so Python equality was JSON equality."""
    for path, boolean in guards:
        leaf = value
        for name in path:
            leaf = leaf[name]  # type: ignore[index]  # the structure equals the pattern's
        kind = type(leaf)
        if (kind is not bool) if boolean else (kind is not int and kind is not float):
            return False
    return True


def has_terms(value: object, terms: Sequence[Term]) -> bool:
    """Whether ``value`` holds every term: :func:`~wopeval.grading.jsonmatch.json_subset`."""
    for path, key in terms:
        leaf = value
        for name in path:
            if not isinstance(leaf, dict):
                return False
            leaf = leaf.get(name, _MISSING)
            if leaf is _MISSING:
                return False
        if key is OBJECT:
            if not isinstance(leaf, dict):
                return False
        elif isinstance(leaf, dict) or leaf_key(leaf) != key:
            return False
    return True


def _terms(pattern: dict[str, object], path: Path, out: list[Term]) -> None:
    if not pattern:
        out.append((path, OBJECT))
    for name, item in pattern.items():
        if not isinstance(name, str):
            raise TypeError(f"not a JSON object key: {name!r}")
        if isinstance(item, dict):
            _terms(item, (*path, name), out)
        else:
            out.append(((*path, name), leaf_key(item)))


def _guards(value: object, path: tuple[str | int, ...], out: list[Guard]) -> bool:
    """Collect the guards of a value made of exact JSON types only; False for any other."""
    kind = type(value)
    if kind is dict:
        for name, item in value.items():  # type: ignore[attr-defined]
            if type(name) is not str or not _guards(item, (*path, name), out):
                return False
        return True
    if kind is list:
        return all(_guards(item, (*path, index), out) for index, item in enumerate(value))  # type: ignore[arg-type]
    if kind is str or value is None:
        return True
    if kind is bool or kind is int or (kind is float and math.isfinite(value)):  # type: ignore[arg-type]
        out.append((path, kind is bool))
        return True
    return False


def _group(patterns: Patterns, calls: Sequence[ExpectedCall]) -> None:
    index: dict[tuple[str, Hashable], int] = {}
    counts, left_of = patterns.left_counts, patterns.left_of
    for call in calls:
        mode: ArgsMatch = call.argsMatch or "ignore"
        tool, args = call.tool, call.args
        terms: list[Term] | None = None
        key: str | None = None
        ident: Hashable
        if mode == "ignore":
            ident = "i"
        elif mode == "subset" and isinstance(args, dict):
            terms = []
            _terms(args, (), terms)
            ident = frozenset(terms)
        else:
            key = canonical_json(args)
            ident = ("e" if mode == "exact" else "s") + key
        slot = index.get((tool, ident))
        if slot is None:
            slot = index[tool, ident] = len(counts)
            _new_class(patterns, call, mode, key, terms)
        counts[slot] += 1
        left_of.append(slot)


def _new_class(
    patterns: Patterns, call: ExpectedCall, mode: ArgsMatch, key: str | None, terms: list[Term] | None
) -> None:
    slot = len(patterns.left_counts)
    patterns.left.append(call)
    patterns.left_modes.append(mode)
    patterns.left_tools.append(call.tool)
    patterns.left_keys.append(key)
    patterns.left_counts.append(0)
    if terms is not None:
        patterns.left_terms[slot] = terms
        patterns.work += len(terms)
    if mode == "ignore":
        patterns.ignore_of[call.tool] = slot
    elif mode == "exact" and type(call.args) is dict:
        guards: list[Guard] = []
        if _guards(call.args, (), guards):
            patterns.plain[slot] = (call.args, tuple(guards))
            patterns.work += len(guards)


def _index_exact(patterns: Patterns, tool: ToolPatterns, slots: list[int]) -> None:
    """``by_canon`` for every exact-like class; ``by_field`` for the plain object patterns."""
    distinct: dict[str, set[Hashable]] = {}
    for slot in slots:
        key = patterns.left_keys[slot]
        assert key is not None
        tool.by_canon.setdefault(key, []).append(slot)
        plain = patterns.plain.get(slot)
        if plain is not None:
            tool.plain[slot] = plain
            for name, value in plain[0].items():  # type: ignore[attr-defined]
                if type(value) in _SCALARS:
                    distinct.setdefault(name, set()).add(leaf_key(value))
    tool.pivot = max(distinct, key=lambda name: len(distinct[name]), default=None)
    for slot in slots:
        plain = tool.plain.get(slot)
        value = _MISSING if plain is None else plain[0].get(tool.pivot, _MISSING)  # type: ignore[attr-defined]
        if value is _MISSING or type(value) not in _SCALARS:
            tool.rest = True
            tool.plain.pop(slot, None)
        else:
            tool.by_field.setdefault(leaf_key(value), []).append(slot)
    patterns.work += 2 * len(slots)


def _index_subset(patterns: Patterns, tool: ToolPatterns, slots: list[int]) -> None:
    """Each subset object pattern under its rarest term (a leaf before an empty object)."""
    frequency: dict[Term, int] = {}
    for slot in slots:
        for term in patterns.left_terms[slot]:
            frequency[term] = frequency.get(term, 0) + 1
    root = tool.index = IndexNode()
    for slot in slots:
        terms = patterns.left_terms[slot]
        best = min(
            range(len(terms)), key=lambda i: (frequency[terms[i]], terms[i][1] is OBJECT)
        )
        path, key = terms[best]
        node = root
        for name in path:
            node = node.children.setdefault(name, IndexNode())
        if key is OBJECT:
            node.objects.append(slot)
        else:
            node.buckets.setdefault(key, []).append(slot)
        tool.others[slot] = terms[:best] + terms[best + 1 :]
        patterns.work += 2 * len(terms)


def compile_patterns(calls: Sequence[ExpectedCall]) -> Patterns:
    """Group and index ``calls`` (the expected side of :func:`~wopeval.grading.matching.build`)."""
    patterns = Patterns(calls=tuple(calls))
    _group(patterns, calls)
    exact: dict[str, list[int]] = {}
    subset: dict[str, list[int]] = {}
    for slot, mode in enumerate(patterns.left_modes):
        if mode != "ignore":
            tool = patterns.left_tools[slot]
            patterns.tools.setdefault(tool, ToolPatterns())
            side = subset if slot in patterns.left_terms else exact
            side.setdefault(tool, []).append(slot)
    for name, slots in exact.items():
        _index_exact(patterns, patterns.tools[name], slots)
    for name, slots in subset.items():
        _index_subset(patterns, patterns.tools[name], slots)
    return patterns


_CACHE: dict[int, tuple[weakref.ref[TrajectoryExpectation], Patterns]] = {}


def compiled(expectation: TrajectoryExpectation) -> Patterns:
    """:func:`compile_patterns` of ``expectation.calls``, kept while the expectation lives.

    Suites are frozen models; their calls are checked by identity on every use, so a list
    changed in place is compiled again (args mutated in place inside a call are not seen).
    """
    key = id(expectation)
    entry = _CACHE.get(key)
    calls = expectation.calls
    if entry is not None and entry[0]() is expectation and entry[1].same_calls(calls):
        return entry[1]
    patterns = compile_patterns(calls)

    def forget(ref: weakref.ref[TrajectoryExpectation]) -> None:
        if _CACHE.get(key, (None,))[0] is ref:
            del _CACHE[key]

    _CACHE[key] = (weakref.ref(expectation, forget), patterns)
    return patterns
