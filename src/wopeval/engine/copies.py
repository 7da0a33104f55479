"""Fresh copies of the values every trial of a run shares: a task's input, its fixture responses.

A trial must never change what the next one is given (RFC 0244 §B: each trial is isolated), so
each gets its own copy. Parsing a value's JSON text is cheaper than ``copy.deepcopy`` of it, so
the text is kept per value (one ``dumps`` per value and run, one ``loads`` per copy) whenever it
reproduces the value exactly; any other value (a tuple, a non-JSON object) is deep-copied.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from wopeval.events.tables import dumps_json

__all__ = ["JsonCopies"]

_IMMUTABLE = frozenset({str, int, float, bool, type(None)})  # their own copy


class JsonCopies:
    """Copies of shared values, their JSON texts kept by identity (the values outlive a run).

    A flat object (string keys, immutable scalar values: a typical fixture response) is copied
    by ``dict``, which is a whole copy of it, a tenth of parsing its text."""

    def __init__(self) -> None:
        # id(value) → (value, its JSON text or None, flat); the value is kept so its id stays
        # its own
        self._texts: dict[int, tuple[Any, str | None, bool]] = {}

    def _entry(self, value: Any) -> tuple[Any, str | None, bool]:
        cached = self._texts.get(id(value))
        if cached is None or cached[0] is not value:
            text: str | None = None
            try:
                dumped = dumps_json(value)
                if json.loads(dumped) == value:  # else (tuples, say) keep their types
                    text = dumped
            except (TypeError, ValueError):
                pass
            flat = type(value) is dict and all(
                type(k) is str and type(v) in _IMMUTABLE for k, v in value.items()
            )
            cached = self._texts[id(value)] = (value, text, flat and text is not None)
        return cached

    def text(self, value: Any) -> str | None:
        """The value's JSON text when parsing it gives back an equal value, else None."""
        return self._entry(value)[1]

    def copy(self, value: Any) -> Any:
        """A fresh copy of ``value`` (an immutable scalar is its own)."""
        if type(value) in _IMMUTABLE:
            return value
        _, text, flat = self._entry(value)
        if flat:
            return dict(value)
        return copy.deepcopy(value) if text is None else json.loads(text)
