"""Strict JSON request bodies: a body that parses must also be storable and answerable.

Python's ``json`` accepts documents the store (``dumps_json``: UTF-8, ``allow_nan=False``) and the
wire cannot carry: ``NaN`` and ``Infinity``, numbers that overflow to infinity (``1e999``),
integer literals beyond ``int``'s digit limit, lone surrogate escapes (``"\\ud800"``, not
encodable as UTF-8; a raw one in the bytes decodes the same way), and nesting deep enough to
exhaust the stack. Python also lets the last of two equal member names win (``{"tenantId":
"beta", "tenantId": "acme"}``) and reads UTF-16, UTF-32 and a byte-order mark: a body is UTF-8
without a BOM (RFC 8259 §8.1) and names each member once (§4, "SHOULD be unique"), anything
else is refused. Each is the caller's mistake: ``400 validation_error`` naming the member
(``metadata.a``, ``tags[0]``), or ``$`` for the body as a whole. A non-empty body must be sent
as ``Content-Type: application/json`` (or a ``+json`` type): ``415 unsupported_media_type``
naming ``Content-Type`` otherwise (:func:`check_media_type`).
"""

from __future__ import annotations

import json
import math
from typing import Any

from wopeval.host.errors import HostError, invalid

# Containers nested deeper than this are refused; create and cancel bodies need a handful.
MAX_DEPTH = 64
_SHOWN = 40
NOT_A_NUMBER = "is not a JSON number (NaN and infinities are not)"


class _Duplicated(dict[str, Any]):
    """An object in which ``key`` appeared more than once (refused by :func:`check_storable`)."""

    duplicate: str = ""


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            found = _Duplicated(pairs)
            found.duplicate = key
            return found
        seen[key] = value
    return seen


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
        if isinstance(value, _Duplicated):
            raise invalid(_member(path, value.duplicate), "appears twice; a member may appear once")
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
    if raw.startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")) or b"\x00" in raw[:4]:
        raise invalid("$", "the body must be UTF-8 JSON (no byte-order mark, not UTF-16/32)")
    try:
        text = raw.decode("utf-8", "surrogatepass")  # a raw lone surrogate: refused below
        document = json.loads(
            text,
            object_pairs_hook=_pairs,
            parse_constant=_Unrepresentable,
            parse_float=_parse_float,
            parse_int=_parse_int,
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


JSON_MEDIA_TYPES = ("application/json",)


def check_media_type(content_type: str | None) -> None:
    """A body is JSON: ``application/json`` or ``application/*+json`` (parameters such as
    ``charset=utf-8`` allowed), else ``415 unsupported_media_type`` naming ``Content-Type``."""
    media = (content_type or "").split(";", 1)[0].strip().lower()
    if media in JSON_MEDIA_TYPES or (media.startswith("application/") and media.endswith("+json")):
        return
    shown = _shown(content_type) if content_type is not None else "none"
    raise HostError(
        "unsupported_media_type",
        f"Content-Type: a body must be sent as application/json (got {shown})",
        {"field": "Content-Type"},
    )


__all__ = ["MAX_DEPTH", "check_media_type", "check_storable", "loads_strict"]
