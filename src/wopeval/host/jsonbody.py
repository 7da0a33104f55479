"""Strict JSON request bodies: a body that parses must also be storable and answerable.

Python's ``json`` accepts documents the store (``dumps_json``: UTF-8, ``allow_nan=False``) and the
wire cannot carry: ``NaN`` and ``Infinity``, numbers that overflow to infinity (``1e999``),
integer literals beyond ``int``'s digit limit, lone surrogate escapes (``"\\ud800"``, not
encodable as UTF-8; a raw one in the bytes decodes the same way), and nesting deep enough to
exhaust the stack. Each is the caller's mistake: ``400 validation_error`` naming the member
(``metadata.a``, ``tags[0]``), or ``$`` for the body as a whole.
"""

from __future__ import annotations

import json
import math
from typing import Any

from wopeval.host.errors import invalid

# Containers nested deeper than this are refused; create and cancel bodies need a handful.
MAX_DEPTH = 64
_SHOWN = 40
NOT_A_NUMBER = "is not a JSON number (NaN and infinities are not)"


class _Unrepresentable:
    """Left in the parsed document where a number has no finite, storable value."""

    __slots__ = ("reason", "text")

    def __init__(self, text: str, reason: str = NOT_A_NUMBER) -> None:
        self.text = text
        self.reason = reason


def _parse_float(text: str) -> float | _Unrepresentable:
    value = float(text)
    if math.isfinite(value):
        return value
    return _Unrepresentable(text, "is out of the range of a double-precision number")


def _parse_int(text: str) -> int | _Unrepresentable:
    try:
        return int(text)
    except ValueError:  # more digits than sys.get_int_max_str_digits()
        return _Unrepresentable(text, "has more digits than an integer here may have")


def _shown(text: str) -> str:
    return text if len(text) <= _SHOWN else f"{text[:_SHOWN]}… ({len(text)} characters)"


def _encodable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _member(path: str, key: str) -> str:
    """The field name of ``key`` under ``path``; a lone surrogate in it is shown escaped."""
    name = key if _encodable(key) else key.encode("utf-8", "backslashreplace").decode()
    return name if path == "$" else f"{path}.{name}"


def _check_key(path: str, key: str) -> None:
    if not _encodable(key):
        raise invalid(_member(path, key), "the member name is not valid Unicode (a lone surrogate)")


def check_storable(document: Any) -> None:
    """Refuse the first unrepresentable number, non-Unicode string or too-deep container, in
    document order (iteratively: the depth that is refused must not exhaust the stack)."""
    stack: list[tuple[Any, str, int, str]] = [(document, "$", 0, "$")]
    while stack:
        value, path, depth, top = stack.pop()
        if isinstance(value, _Unrepresentable):
            raise invalid(path, f"{_shown(value.text)} {value.reason}")
        if isinstance(value, str) and not _encodable(value):
            raise invalid(path, "is not valid Unicode (a lone surrogate)")
        if not isinstance(value, dict | list):
            continue
        if depth >= MAX_DEPTH:
            raise invalid(top, f"nests deeper than {MAX_DEPTH} levels")
        if isinstance(value, dict):
            for key in value:
                _check_key(path, key)
            children = [(item, _member(path, key)) for key, item in value.items()]
        else:
            children = [
                (item, f"{'' if path == '$' else path}[{i}]") for i, item in enumerate(value)
            ]
        for item, child in reversed(children):
            stack.append((item, child, depth + 1, child if top == "$" else top))


def loads_strict(raw: bytes) -> Any:
    """Parse a request body; ``None`` for an empty one. Raises ``HostError`` (``400``)."""
    if not raw.strip():
        return None
    try:
        document = json.loads(
            raw, parse_constant=_Unrepresentable, parse_float=_parse_float, parse_int=_parse_int
        )
    except RecursionError:
        raise invalid("$", f"the body nests deeper than {MAX_DEPTH} levels") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise invalid("$", f"the body is not JSON ({exc})") from exc
    check_storable(document)
    try:  # what the store will do with it (dumps_json); check_storable makes this succeed
        json.dumps(document, ensure_ascii=False, allow_nan=False).encode("utf-8")
    except (ValueError, RecursionError) as exc:
        raise invalid("$", f"the body cannot be stored as JSON ({exc})") from exc
    return document


__all__ = ["MAX_DEPTH", "check_storable", "loads_strict"]
