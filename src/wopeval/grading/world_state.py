"""Final-state grading (pure): does a trial's recorded world state hold what
``expected["x-wopeval-finalState"]`` asserts, and where does it first differ.

The comparison is RFC 0244 §A's ``argsMatch`` policy (:mod:`wopeval.grading.jsonmatch`):
``exact`` is JSON-deep equality, ``subset`` asks every key path of the asserted ``state`` to be
in the final state with an equal value (objects recursively; anything else compared whole).
Numbers compare by value (``1 == 1.0``), a boolean is never a number, ``"1"`` is never ``1``.
A trial that recorded no final state (its agent failed before the world could be read, or an
imported log without the event) does not match: fail closed.

:func:`state_differences` walks the same rules and names each difference by its JSON Pointer
(RFC 6901), the first of them in document order of the asserted state; it reports a difference
exactly where the matcher says "no" (a property test holds the two together).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from wopeval.grading.argdiff import ABSENT, shown
from wopeval.grading.jsonmatch import args_match, json_equal
from wopeval.grading.views import TrialView
from wopeval.suite.models import Task
from wopeval.suite.pointers import pointer_text
from wopeval.suite.world import FinalState

__all__ = [
    "MAX_DIFFERENCES",
    "StateDifference",
    "final_state_matched",
    "state_differences",
    "state_matches",
]

# How many differences a reason lists (the message names the first).
MAX_DIFFERENCES = 20


@dataclass(frozen=True)
class StateDifference:
    """One JSON Pointer where the final state differs; a side without it holds ``ABSENT``."""

    pointer: str  # "" for the whole state
    expected: object
    observed: object

    def text(self) -> str:
        """``/bookings/ABC/status: expected "cancelled", got "confirmed"``."""
        where = self.pointer or "(the whole state)"
        return f"{where}: expected {shown(self.expected)}, got {shown(self.observed)}"

    def to_json(self) -> dict[str, object]:
        row: dict[str, object] = {"pointer": self.pointer}
        if self.expected is not ABSENT:
            row["expected"] = self.expected
        if self.observed is not ABSENT:
            row["observed"] = self.observed
        return row


def state_matches(final: FinalState, state: Any) -> bool:
    """Whether ``state`` holds what ``final`` asserts (a value that is not JSON never does)."""
    try:
        return args_match(final.match, final.state, state)
    except (TypeError, ValueError):
        return False


def final_state_matched(task: Task, view: TrialView) -> bool | None:
    """None when the task asserts no final state; else whether the trial's recorded state
    holds it (False when none was recorded)."""
    final = task.expected.final_state
    if final is None:
        return None
    return view.has_world_state and state_matches(final, view.world_state)


def state_differences(
    final: FinalState, state: Any, limit: int = MAX_DIFFERENCES
) -> list[StateDifference]:
    """The first ``limit`` pointers where ``state`` fails ``final``, in the asserted state's
    key order (then, for ``exact``, the state's keys not asserted)."""
    found: list[StateDifference] = []
    _walk(final.match == "exact", final.state, state, (), found, limit)
    return found


def _walk(
    exact: bool,
    want: object,
    got: object,
    at: tuple[str, ...],
    found: list[StateDifference],
    limit: int,
) -> None:
    if len(found) >= limit or _equal(want, got):
        return
    if isinstance(want, dict) and isinstance(got, dict):
        for key, value in want.items():
            inner = (*at, str(key))
            if key in got:
                _walk(exact, value, got[key], inner, found, limit)
            else:
                found.append(StateDifference(pointer_text(inner), value, ABSENT))
        if exact:
            found.extend(
                StateDifference(pointer_text((*at, str(key))), ABSENT, value)
                for key, value in got.items()
                if key not in want
            )
        del found[limit:]
        return
    if exact and isinstance(want, list) and isinstance(got, list) and len(want) == len(got):
        for index, (item, other) in enumerate(zip(want, got, strict=True)):
            _walk(exact, item, other, (*at, str(index)), found, limit)
        return
    found.append(StateDifference(pointer_text(at), want, got))


def _equal(want: object, got: object) -> bool:
    try:
        return json_equal(want, got)
    except (TypeError, ValueError):  # not JSON on one side: different from any JSON value
        return False
