"""Where a call's arguments differ from an expected call's (pure): key paths and both values.

The walk follows the RFC 0244 §A ``argsMatch`` rules of :mod:`wopeval.grading.jsonmatch`, so a
difference is reported exactly where the matcher decides "no": ``exact`` compares objects key by
key (a key on one side only is a difference) and arrays of equal length item by item;
``subset`` looks only at the expected keys and compares any non-object whole; ``ignore`` never
differs. Values compare under the same JSON policy (``1 == 1.0``, ``"1" != 1``, ``True != 1``).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from wopeval.grading.jsonmatch import json_equal
from wopeval.suite.models import ArgsMatch

__all__ = ["ABSENT", "ArgDifference", "arg_differences", "shown"]

_PLAIN_KEY = re.compile(r"[A-Za-z_$][A-Za-z0-9_$-]*\Z")


class _Absent:
    """The value on a side that has no such key."""

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT = _Absent()


@dataclass(frozen=True)
class ArgDifference:
    """One key path where the arguments differ; a side without the key holds :data:`ABSENT`."""

    path: str  # "" for the arguments as a whole
    expected: object
    observed: object

    def text(self) -> str:
        """``amountMinor: expected 4200, got "4200"``."""
        where = self.path or "arguments"
        return f"{where}: expected {shown(self.expected)}, got {shown(self.observed)}"

    @classmethod
    def of_json(cls, row: dict[str, object]) -> ArgDifference:
        """The difference :meth:`to_json` wrote."""
        return cls(str(row["path"]), row.get("expected", ABSENT), row.get("observed", ABSENT))

    def to_json(self) -> dict[str, object]:
        row: dict[str, object] = {"path": self.path}
        if self.expected is not ABSENT:
            row["expected"] = self.expected
        if self.observed is not ABSENT:
            row["observed"] = self.observed
        return row


def arg_differences(mode: ArgsMatch, expected: object, observed: object) -> list[ArgDifference]:
    """Every key path where ``observed`` fails ``expected`` under ``mode``, in expected key
    order (then, for ``exact``, the observed keys not expected)."""
    if mode == "ignore":
        return []
    found: list[ArgDifference] = []
    _walk(mode == "exact", expected, observed, "", found)
    return found


def _walk(exact: bool, want: object, got: object, path: str, found: list[ArgDifference]) -> None:
    if _equal(want, got):
        return
    if isinstance(want, dict) and isinstance(got, dict):
        for key, value in want.items():
            inner = _join(path, key)
            if key in got:
                _walk(exact, value, got[key], inner, found)
            else:
                found.append(ArgDifference(inner, value, ABSENT))
        if exact:
            found.extend(
                ArgDifference(_join(path, key), ABSENT, value)
                for key, value in got.items()
                if key not in want
            )
        return
    items = _side_by_side(want, got) if exact else None
    if items is None:
        found.append(ArgDifference(path, want, got))
        return
    for index, (item, other) in enumerate(items):
        _walk(exact, item, other, f"{path}[{index}]", found)


def _side_by_side(want: object, got: object) -> list[tuple[object, object]] | None:
    """The items of two arrays of one length, pair by pair (else they differ as wholes)."""
    if isinstance(want, list | tuple) and isinstance(got, list | tuple) and len(want) == len(got):
        return list(zip(want, got, strict=True))
    return None


def _equal(want: object, got: object) -> bool:
    try:
        return json_equal(want, got)
    except (TypeError, ValueError):  # not JSON on one side: different from any JSON value
        return False


def _join(path: str, key: object) -> str:
    name = str(key)
    if not _PLAIN_KEY.match(name):
        name = json.dumps(name, ensure_ascii=False)
        return f"{path}[{name}]"
    return f"{path}.{name}" if path else name


def shown(value: object, limit: int = 60) -> str:
    """A value as JSON text, shortened to ``limit`` characters; ``nothing`` when absent."""
    if value is ABSENT:
        return "nothing"
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
