"""The JSON a trial records of what its agent gave, and the size limits on it.

A trial's :class:`~wopeval.wire.request.TrialLimits` bound its tool results, its output and its
failure reason: :func:`sized_json` measures a value's JSON text only when it may be over its cap
(a small value is never encoded only to be measured), and :func:`clip_reason` shortens a reason
to its cap.
"""

from __future__ import annotations

import json
import math
from typing import Any

from wopeval.events.tables import dumps_json
from wopeval.wire.events import TrialFailed

__all__ = ["clip_reason", "jsonable", "over_limit", "plain", "sized_json", "utf8"]


def plain(value: Any) -> bool:
    """A JSON scalar that is its own round trip (not a subclass: ``IntEnum`` becomes ``int``)."""
    cls = type(value)
    if cls is str:
        return value.isascii() or utf8(value)
    if cls is int or cls is bool or value is None:
        return True
    return cls is float and math.isfinite(value)


def utf8(text: str) -> bool:
    """True; a text with a lone surrogate, which no UTF-8 store or file can hold, raises
    ``UnicodeEncodeError`` (a ``ValueError``: the value is not JSON, the trial fails)."""
    text.encode("utf-8")
    return True


def jsonable(value: Any) -> Any:
    """Round-trip through JSON (a JSON-normal copy); raises TypeError/ValueError for non-JSON
    values. A plain scalar is its own round trip, and a flat object of them (string keys) is a
    new dict of the same items; other containers go through the C encoder."""
    if plain(value):
        return value
    if type(value) is dict and all(type(k) is str and plain(k) and plain(v)
                                   for k, v in value.items()):  # fmt: skip
        return dict(value)
    text = dumps_json(value)
    if not text.isascii():
        utf8(text)
    return json.loads(text)


def sized_json(value: Any, cap: int) -> tuple[Any, int]:
    """:func:`jsonable` of ``value`` and the size of its JSON text in UTF-8 bytes, exact when
    it may exceed ``cap`` (0 when it cannot: no value is encoded only to be measured); over the
    cap, None instead of the value."""
    cls = type(value)
    if cls is str:
        if not value.isascii():
            utf8(value)
        if 6 * len(value) + 2 <= cap:  # a character is at most 6 bytes of JSON ("\u001f")
            return value, 0
        size = len(dumps_json(value).encode("utf-8"))
        return (None if size > cap else value), size
    if plain(value):
        return value, 0
    if cls is dict and all(type(k) is str and plain(k) and plain(v) for k, v in value.items()):
        rough = sum(6 * len(k) + (6 * len(v) if type(v) is str else 32) + 6
                    for k, v in value.items())  # fmt: skip
        if rough + 2 <= cap:
            return dict(value), 0
    text = dumps_json(value)
    if not text.isascii():
        utf8(text)
    size = len(text.encode("utf-8")) if 4 * len(text) > cap else 0
    if size > cap:
        return None, size  # never parsed back: the caller refuses it
    return json.loads(text), size


def over_limit(what: str, size: int, name: str, cap: int) -> str:
    return f"{what} is {size} bytes of JSON, over the trial limit {name} = {cap}"


def clip_reason(reason: TrialFailed, limit: int) -> TrialFailed:
    """``reason`` with its strings and lists shortened until its JSON text is at most ``limit``
    characters (as it was when it already fits)."""
    doc = reason.model_dump(mode="json", by_alias=True, exclude_none=True)
    if len(dumps_json(doc)) <= limit:
        return reason
    each = limit // 4
    clipped = doc
    while each > 16:
        clipped = {**doc, **_clip_texts(doc, each)}
        if "reasons" in doc:
            clipped["reasons"] = [{**item, **_clip_texts(item, each)} for item in doc["reasons"]]
        if len(dumps_json(clipped)) <= limit:
            break
        each //= 2
    return TrialFailed.model_validate(clipped)


def _clip_texts(doc: dict[str, Any], each: int) -> dict[str, Any]:
    """A reason's ``message`` and ``details`` clipped (its ids and kind are kept)."""
    return {"message": _clip(doc["message"], each), "details": _clip(doc.get("details", {}), each)}


def _clip(value: Any, each: int) -> Any:
    """Every string cut to ``each`` characters and every list to ``each // 16`` items (at
    least 2: ``reasons`` needs them)."""
    if isinstance(value, str):
        return value if len(value) <= each else value[: each - 10] + " [clipped]"
    if isinstance(value, list):
        return [_clip(item, each) for item in value[: max(2, each // 16)]]
    if isinstance(value, dict):
        return {key: _clip(item, each) for key, item in value.items()}
    return value
