"""Duplicate keys in a suite file are an error, never "the last one wins".

JSON and YAML parsers keep the last of two equal keys, so a task pasted twice under one key, or
a second ``expected`` further down a long task, would silently replace the first. While parsing,
an object with a repeated key is marked (JSON: :class:`MarkedObject`; YAML: the loader's
``repeated_keys``, with the line of the repeat, :mod:`wopeval.suite.yaml_doc`); afterwards
:func:`duplicate_key_errors` names each repeated key by its JSON path, as every suite error is.
"""

from __future__ import annotations

from typing import Any

from wopeval.suite.errors import FieldError, Loc, format_path, show


class MarkedObject(dict[Any, Any]):
    """A parsed object that had repeated keys: ``(key, line or None)`` for each repeat."""

    duplicates: list[tuple[Any, int | None]]


def _marked(members: dict[Any, Any], duplicates: list[tuple[Any, int | None]]) -> dict[Any, Any]:
    if not duplicates:
        return members
    marked = MarkedObject(members)
    marked.duplicates = duplicates
    return marked


def json_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json.loads(..., object_pairs_hook=json_object)``: marks repeated keys."""
    members: dict[str, Any] = {}
    duplicates: list[tuple[Any, int | None]] = []
    for key, value in pairs:
        if key in members:
            duplicates.append((key, None))
        members[key] = value
    return _marked(members, duplicates)


def _name(key: object) -> str:
    return key if isinstance(key, str) else str(key)


def duplicate_key_errors(
    data: object, marks: dict[int, list[tuple[Any, int | None]]] | None = None
) -> list[FieldError]:
    """One error per repeated key, at its path; by line when known (YAML ``marks``)."""
    found: list[tuple[int, FieldError]] = []
    _collect(data, (), marks or {}, found)
    return [error for _, error in sorted(found, key=lambda pair: pair[0])]


def _collect(
    data: object,
    loc: Loc,
    marks: dict[int, list[tuple[Any, int | None]]],
    found: list[tuple[int, FieldError]],
) -> None:
    if isinstance(data, dict):
        for key, line in getattr(data, "duplicates", None) or marks.get(id(data), []):
            where = f" (again at line {line})" if line is not None else ""
            message = f"duplicate key {show(key)}{where}; each key may appear once"
            found.append((line or 0, FieldError(format_path((*loc, _name(key))), message)))
        for key, value in data.items():
            _collect(value, (*loc, _name(key)), marks, found)
    elif isinstance(data, list):
        for index, item in enumerate(data):
            _collect(item, (*loc, index), marks, found)


__all__ = ["MarkedObject", "duplicate_key_errors", "json_object"]
