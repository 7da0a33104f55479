"""JSON deep equality and the RFC 0244 §A ``argsMatch`` rules.

The equality policy (one policy, used by trajectories, fixtures and ``json-match`` outputs):

* **Numbers** compare by value across int and float: ``1 == 1.0`` and ``0 == -0.0``.
* **Booleans are not numbers**: ``True`` never equals ``1``, ``False`` never equals ``0``.
* **Objects** are equal when they have the same keys with pairwise-equal values; key order is
  irrelevant. Keys must be strings.
* **Arrays** are ordered: equal lengths and pairwise-equal items. A tuple counts as an array.
* **Strings** and ``null`` compare by value; a string never equals a number.
* **Only JSON values are accepted.** NaN and the infinities are not JSON: they raise
  ``ValueError`` when reached; any other Python type raises ``TypeError`` when reached. An
  argument never reached (because an earlier difference already decided the answer) is not
  inspected.

``json_subset(expected, actual)`` is RFC 0244 §A ``argsMatch: "subset"``: "every key path in
``args`` is present in ``inputs`` with a JSON-deep-equal value". It recurses through objects
only: when ``expected`` is an object, ``actual`` must be an object holding every key of
``expected`` with a value that is itself a subset match; any other ``expected`` (array,
string, number, boolean, null) must be ``json_equal`` to ``actual``. So ``{}`` matches any
object and nothing else, and arrays are never matched element-wise.

``canonical_json`` gives every JSON value one string, and ``json_key`` one hashable object, such
that two values are ``json_equal`` exactly when their strings (keys) are equal. The trajectory
grader groups and looks calls up by ``canonical_json`` (the C encoder; a value made of exact
JSON types with string keys and no integral float skips the normalising copy), and keys
``subset`` leaves by ``json_key``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Hashable, Iterable
from typing import Any, Protocol, cast

from wopeval.suite.models import ArgsMatch

__all__ = [
    "CallPattern",
    "args_match",
    "canonical_json",
    "json_equal",
    "json_key",
    "json_subset",
    "matches",
]


def _check_float(value: float) -> None:
    if not math.isfinite(value):
        raise ValueError(f"not a JSON value: {value!r} (NaN and infinities are not JSON)")


def _not_json(value: object) -> TypeError:
    return TypeError(f"not a JSON value: {type(value).__name__}")


def _check_keys(obj: dict[object, object]) -> None:
    for key in obj:
        if not isinstance(key, str):
            raise TypeError(f"not a JSON object key: {key!r}")


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def json_equal(a: object, b: object) -> bool:
    """JSON deep equality under the module policy (``1 == 1.0``, ``True != 1``, unordered keys)."""
    if isinstance(a, bool) or isinstance(b, bool):
        _check_scalar(a)
        _check_scalar(b)
        return a is b
    if _is_number(a) or _is_number(b):
        _check_scalar(a)
        _check_scalar(b)
        return _is_number(a) and _is_number(b) and a == b
    if isinstance(a, str):
        _check_scalar(b)
        return isinstance(b, str) and a == b
    if a is None:
        _check_scalar(b)
        return b is None
    if isinstance(a, dict):
        return _dict_equal(a, b)
    if isinstance(a, list | tuple):
        return _array_equal(a, b)
    raise _not_json(a)


def _check_scalar(value: object) -> None:
    """Raise for a non-JSON scalar; containers are checked when they are walked."""
    if isinstance(value, float):
        _check_float(value)
    elif not isinstance(value, str | int | dict | list | tuple) and value is not None:
        raise _not_json(value)


def _dict_equal(a: dict[object, object], b: object) -> bool:
    _check_keys(a)
    if not isinstance(b, dict):
        _check_scalar(b)
        return False
    _check_keys(b)
    if a.keys() != b.keys():
        return False
    return all(json_equal(value, b[key]) for key, value in a.items())


def _array_equal(a: list[object] | tuple[object, ...], b: object) -> bool:
    if not isinstance(b, list | tuple):
        _check_scalar(b)
        return False
    if len(a) != len(b):
        return False
    return all(json_equal(x, y) for x, y in zip(a, b, strict=True))


def json_subset(expected: object, actual: object) -> bool:
    """RFC 0244 §A ``subset``: every key path of ``expected`` is in ``actual`` with an equal value.

    Recursive on objects; any non-object ``expected`` is compared with :func:`json_equal`.
    """
    if not isinstance(expected, dict):
        return json_equal(expected, actual)
    _check_keys(expected)
    if not isinstance(actual, dict):
        _check_scalar(actual)
        return False
    _check_keys(actual)
    return all(key in actual and json_subset(value, actual[key]) for key, value in expected.items())


def args_match(mode: ArgsMatch, expected_args: object, inputs: object) -> bool:
    """RFC 0244 §A call matching on arguments: ``ignore``, ``exact`` or ``subset``."""
    if mode == "ignore":
        return True
    if mode == "exact":
        return json_equal(expected_args, inputs)
    if mode == "subset":
        return json_subset(expected_args, inputs)
    raise ValueError(f"argsMatch must be 'ignore', 'exact' or 'subset', got {mode!r}")


class CallPattern(Protocol):
    """What a call is matched against: an expected trajectory call or a fixture entry (both
    read ``argsMatch`` absent as ``ignore``, RFC 0244 §A and §D)."""

    @property
    def tool(self) -> str: ...

    @property
    def args(self) -> Any: ...

    @property
    def args_match(self) -> ArgsMatch: ...


def matches(pattern: CallPattern, tool: str, inputs: object) -> bool:
    """RFC 0244 §A call matching, the one definition: ``tool`` equals the pattern's and
    ``inputs`` match its ``args`` under its ``argsMatch``.

    The fixture gateway (§D) calls it as it is; trajectory grading reaches the same answer
    through compiled classes and indexes (:mod:`wopeval.grading.patterns`), which a
    differential property test holds to this function in every mode.
    """
    return pattern.tool == tool and args_match(pattern.args_match, pattern.args, inputs)


_PLAIN = frozenset({str, int, bool, type(None)})


def _normalized(value: object) -> object:
    """Rewrite a JSON value so that ``json.dumps`` of it is canonical (integral floats as ints).

    Dispatches on exact types first (the hot path of trajectory grading); subclasses of the
    JSON types take the ``isinstance`` path.
    """
    kind = type(value)
    if kind in _PLAIN:
        return value
    if kind is dict:
        return _normalized_object(cast(dict[object, object], value))
    if kind is list or kind is tuple:
        items = cast(list[object], value)
        return [item if type(item) in _PLAIN else _normalized(item) for item in items]
    if isinstance(value, bool | str | int) or value is None:
        return value
    if isinstance(value, float):
        _check_float(value)
        return int(value) if value.is_integer() else value
    if isinstance(value, dict):
        return _normalized_object(value)
    if isinstance(value, list | tuple):
        return [_normalized(item) for item in value]
    raise _not_json(value)


def _normalized_object(value: dict[object, object]) -> dict[str, object]:
    normalized: dict[str, object] = {}
    for key, item in value.items():
        if not isinstance(key, str):
            raise TypeError(f"not a JSON object key: {key!r}")
        normalized[key] = item if type(item) in _PLAIN else _normalized(item)
    return normalized


def canonical_json(value: object) -> str:
    """One string per equality class: ``json_equal(a, b) ⇔ canonical_json(a) == canonical_json(b)``.

    Sorted keys, compact separators, integral floats written as integers (``1.0`` → ``1``).
    A value that is already canonical for the encoder (:func:`_plain`: exact JSON types, string
    keys, no integral float) is encoded as it is; any other is normalised first,
    which also raises for what is not JSON.
    """
    if _plain(value):
        return _PLAIN_ENCODER.encode(value)
    return _ENCODER.encode(_normalized(value))


_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)
# What _plain accepted is a fresh tree of finite JSON values: no cycle or NaN check needed.
_PLAIN_ENCODER = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, check_circular=False
)
_STRINGS = frozenset({str})
_SCALAR_TYPES = frozenset({str, int, bool, type(None)})


def _plain(value: object) -> bool:
    """Whether ``value`` is made of exact JSON types only, with string keys and no float but
    finite non-integral ones: then its sorted-key encoding is already canonical.

    Key types are checked in C (``frozenset.issuperset`` over ``map(type, …)``); the values
    by one loop on exact types, recursing only into containers.
    """
    items: Iterable[object]
    if type(value) is dict:
        if not _STRINGS.issuperset(map(type, value)):
            return False
        items = value.values()
    elif type(value) is list:
        items = value
    else:
        return _plain_scalar(value)
    for item in items:
        kind = type(item)
        if kind is str or kind is int or kind is bool or item is None:
            continue
        if kind is dict or kind is list:
            if not _plain(item):
                return False
        elif not _plain_scalar(item):
            return False
    return True


def _plain_scalar(value: object) -> bool:
    if type(value) is float:
        return math.isfinite(value) and not value.is_integer()
    return type(value) in _SCALAR_TYPES


class _Tag:
    """A private marker inside :func:`json_key` results; equal only to itself."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"<{self.name}>"


_ARRAY, _OBJECT = _Tag("array"), _Tag("object")
_TRUE, _FALSE, _NULL = _Tag("true"), _Tag("false"), _Tag("null")
_KEY_PLAIN = frozenset({str, int})


def json_key(value: object) -> Hashable:
    """A hashable key per equality class: ``json_equal(a, b) ⇔ json_key(a) == json_key(b)``.

    Numbers stay Python numbers (``1 == 1.0`` and their hashes agree), ``true``, ``false`` and
    ``null`` become private markers (so ``true`` is not ``1`` and a key is never ``None``),
    arrays tagged tuples, objects tagged frozensets of pairs.
    """
    kind = type(value)
    if kind in _KEY_PLAIN:
        return value
    if value is None:
        return _NULL
    if kind is dict:
        return _object_key(cast(dict[object, object], value))
    if kind is list or kind is tuple:
        items = cast(list[object], value)
        return (_ARRAY, *[item if type(item) in _KEY_PLAIN else json_key(item) for item in items])
    if isinstance(value, bool):
        return _TRUE if value else _FALSE
    if isinstance(value, float):
        _check_float(value)
        return float(value)
    if isinstance(value, str | int):
        return str(value) if isinstance(value, str) else int(value)
    if isinstance(value, dict):
        return _object_key(value)
    if isinstance(value, list | tuple):
        return (_ARRAY, *[json_key(item) for item in value])
    raise _not_json(value)


def _object_key(value: dict[object, object]) -> Hashable:
    pairs: list[tuple[str, Hashable]] = []
    for key, item in value.items():
        if not isinstance(key, str):
            raise TypeError(f"not a JSON object key: {key!r}")
        pairs.append((key, item if type(item) in _KEY_PLAIN else json_key(item)))
    return (_OBJECT, frozenset(pairs))
