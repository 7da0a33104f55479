"""The terms and guards trajectory patterns are compared by (RFC 0244 §A ``argsMatch``).

A ``subset`` object pattern is the set of its *terms*: its non-object leaves ``(key path,
leaf_key(leaf))`` and its empty objects ``(key path, OBJECT)``; a value matches the pattern
exactly when it holds every term (:func:`has_terms`). After Python ``==`` says an ``exact``
pattern equals a value, its *guards* (:func:`guards_hold`) confirm that the leaves at the
pattern's numbers and booleans have JSON's types (``==`` alone says ``True == 1``).
:func:`uncompiled_matches` compares one expected call by these means without compiling the
expectation (:mod:`wopeval.grading.patterns` compiles and indexes them).
"""

from __future__ import annotations

import marshal
import math
from collections.abc import Hashable, Sequence
from typing import Any

from wopeval.grading.jsonmatch import canonical_json, json_key
from wopeval.suite.models import ExpectedCall

__all__ = [
    "OBJECT",
    "Guard",
    "Path",
    "Term",
    "guards_hold",
    "has_terms",
    "leaf_key",
    "uncompiled_matches",
]

OBJECT: Hashable = object()  # the leaf marker of "an object is here" in a term
_MISSING = object()

Path = tuple[str, ...]
Term = tuple[Path, Hashable]
Guard = tuple[tuple[str | int, ...], bool]  # (path to a leaf, the leaf must be a bool)


def leaf_key(value: object) -> Hashable:
    """:func:`~wopeval.grading.jsonmatch.json_key`, with str and int as themselves."""
    return value if type(value) is str or type(value) is int else json_key(value)


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
        kind = type(leaf)
        if kind is str or kind is int:  # its own leaf_key; never equal to OBJECT
            if leaf != key:
                return False
        elif key is OBJECT:
            if not isinstance(leaf, dict):
                return False
        elif isinstance(leaf, dict) or leaf_key(leaf) != key:
            return False
    return True


def _terms(
    pattern: dict[str, object], path: Path, out: list[Term], paths: dict[Path, Path] | None = None
) -> None:
    """Append the terms of ``pattern`` under ``path``; with ``paths``, equal key paths are one
    tuple (kept there), so many patterns of one shape hold few objects."""
    if not pattern:
        out.append((path, OBJECT))
    for name, item in pattern.items():
        if type(name) is not str and not isinstance(name, str):
            raise TypeError(f"not a JSON object key: {name!r}")
        inner = (*path, name)
        if paths is not None:
            inner = paths.setdefault(inner, inner)
        kind = type(item)
        if kind is str or kind is int:
            out.append((inner, item))
        elif kind is dict and not item:
            out.append((inner, OBJECT))  # what the call below would append
        elif kind is dict or isinstance(item, dict):
            _terms(item, inner, out, paths)  # type: ignore[arg-type]
        else:
            out.append((inner, json_key(item)))


def _pattern_terms(
    pattern: dict[str, object],
    paths: dict[Path, Path],
    top: dict[str, Path],
    last: dict[str, Term],
) -> list[Term]:
    """The terms of a whole pattern, as :func:`_terms` appends them; ``top`` keeps the key
    path of each top-level name met (no tuple is built for a name seen before) and ``last``
    the latest str, int or empty-object term made at it, taken again when the next pattern
    has the same leaf there (a field every pattern shares holds one term, not one each)."""
    if not pattern:
        return [((), OBJECT)]
    out: list[Term] = []
    for name, item in pattern.items():
        kind = type(item)
        if kind is str or kind is int:
            term = last.get(name)
            if term is None or term[1] != item:  # OBJECT and a str never equal an int
                inner = top.get(name)
                if inner is None:
                    inner = _top_path(name, paths, top)
                term = last[name] = (inner, item)
            out.append(term)
            continue
        inner = top.get(name)
        if inner is None:
            inner = _top_path(name, paths, top)
        if kind is dict and not item:
            term = last.get(name)
            if term is None or term[1] is not OBJECT:
                term = last[name] = (inner, OBJECT)
            out.append(term)
        elif kind is dict or isinstance(item, dict):
            _terms(item, inner, out, paths)  # type: ignore[arg-type]
        else:
            out.append((inner, json_key(item)))
    return out


def _top_path(name: object, paths: dict[Path, Path], top: dict[str, Path]) -> Path:
    """The key path of top-level ``name``, kept in ``top`` (it must be a JSON object key)."""
    if not isinstance(name, str):
        raise TypeError(f"not a JSON object key: {name!r}")
    inner = top[name] = paths.setdefault((name,), (name,))
    return inner


def _guards(value: Any, path: tuple[str | int, ...], out: list[Guard]) -> bool:
    """Collect the guards of a container made of exact JSON types with string keys (False:
    some other type or key, so no guards vouch for it)."""
    keyed = type(value) is dict
    for name, item in value.items() if keyed else enumerate(value):
        if keyed and type(name) is not str:
            return False
        kind = type(item)
        if kind is str or item is None:
            continue
        if kind is int or kind is bool:
            out.append(((*path, name), kind is bool))
        elif kind is float:
            if not math.isfinite(item):
                return False
            out.append(((*path, name), False))
        elif kind is dict or kind is list:
            if not _guards(item, (*path, name), out):
                return False
        else:
            return False
    return True


def uncompiled_matches(want: ExpectedCall, tool: str, inputs: object) -> bool:
    """:func:`~wopeval.grading.jsonmatch.matches` for one expected call, by the compiled
    path's means without compiling anything: ``==`` and equal ``marshal`` bytes, else the
    canonical keys (``exact``) or the terms (``subset``). Only the trajectory grader's first
    pass over an expectation uses it; a differential test holds it to ``matches``."""
    if want.tool != tool:
        return False
    mode, args = want.argsMatch, want.args
    if mode is None or mode == "ignore":
        return True
    if mode == "subset" and isinstance(args, dict):
        terms: list[Term] = []
        _terms(args, (), terms)
        return has_terms(inputs, terms)
    if mode == "exact" and type(args) is dict and args == inputs:
        try:
            if marshal.dumps(args, 2) == marshal.dumps(inputs, 2):
                return True
        except ValueError:  # a type marshal does not write: the canonical keys decide
            pass
    return canonical_json(args) == canonical_json(inputs)
