"""Expected calls pinned to an agent turn (wopeval's ``x-wopeval-pin``), graded (pure).

A pin adds one condition to RFC 0244 §A, never changes it: the trajectory matches when the §A
mode matches with the pins ignored, **and** every pinned expected call is made in its turn.
Pinning says when a call happens, so it says that it happens, whatever the mode (``subset``
too). The pinned calls are matched one to one, by calls of the graded trajectory that match
them (:func:`~wopeval.grading.patterns.uncompiled_matches`, the §A call matching) and were made
in their turn (:attr:`ObservedCall.turn`, :mod:`wopeval.suite.pins` numbers the turns); in
``exact`` mode the call at the pinned call's own position must be the one. ``matchedCount``
stays §A's.

A plain expectation costs one kept lookup: its (empty) list of pins is made once per
expectation (:func:`pins_of`).
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from wopeval.grading.patterns import uncompiled_matches
from wopeval.suite.models import ExpectedCall, TrajectoryExpectation
from wopeval.wire.events import FailureReason

__all__ = ["PinMiss", "pin_misses", "pin_reasons", "pins_hold", "pins_of"]


class TurnCall(Protocol):
    """An observed call as pins read it (an ``ObservedCall`` of the trajectory module)."""

    @property
    def tool(self) -> str: ...

    @property
    def inputs(self) -> object: ...

    @property
    def turn(self) -> int: ...


@dataclass(frozen=True)
class PinMiss:
    """A pinned expected call no call made in its turn took: its index among the expected
    calls, its tool, the turn it is pinned to, and the turns in which calls matching it
    (the turn aside) were made, in order (none: it was never made)."""

    index: int
    tool: str
    pinned: int
    made_in: tuple[int, ...]

    def text(self) -> str:
        when = (
            "made in turn " + ", ".join(str(turn) for turn in self.made_in)
            if self.made_in
            else "never made"
        )
        return f"expected call #{self.index} {self.tool} is pinned to turn {self.pinned}, {when}"

    def to_json(self) -> dict[str, object]:
        return {
            "index": self.index,
            "tool": self.tool,
            "pinnedTurn": self.pinned,
            "madeInTurns": list(self.made_in),
        }


Pins = tuple[tuple[int, int], ...]
# id of an expectation -> (a weak reference to it, its calls list then, its length, its pins).
_KEPT: dict[int, tuple[weakref.ref[TrajectoryExpectation], list[ExpectedCall], int, Pins]] = {}


def pins_of(expectation: TrajectoryExpectation) -> Pins:
    """Each pinned expected call: (its index, its turn); empty for a plain expectation.

    Kept per expectation while it lives and while its ``calls`` is the same list of the same
    length (a suite is frozen; ``model_copy`` with new calls gives a new list): every trial of
    a task asks, and a plain one must not pay a scan of its calls each time.
    """
    key, calls = id(expectation), expectation.calls
    entry = _KEPT.get(key)
    if (
        entry is not None
        and entry[0]() is expectation
        and entry[1] is calls
        and entry[2] == len(calls)
    ):
        return entry[3]
    pins = tuple((index, call.pin.turn) for index, call in enumerate(calls) if call.pin)

    def forget(_: weakref.ref[TrajectoryExpectation]) -> None:
        # The entry holds the only strong reference to its weak reference: an entry replaced
        # drops its reference, whose callback then never runs; this one's entry is still here.
        del _KEPT[key]

    _KEPT[key] = (weakref.ref(expectation, forget), calls, len(calls), pins)
    return pins


def pins_hold(expectation: TrajectoryExpectation, calls: Sequence[TurnCall]) -> bool:
    """Whether every pinned call of ``expectation`` was made in its turn (``calls``: the
    trajectory §A grades)."""
    if not pins_of(expectation):
        return True
    return not pin_misses(expectation, calls)


def pin_misses(expectation: TrajectoryExpectation, calls: Sequence[TurnCall]) -> list[PinMiss]:
    """The pinned calls no call made in their turn took, in expected order."""
    pins = pins_of(expectation)
    if not pins:
        return []
    expected = expectation.calls
    if expectation.match == "exact":
        taken = {
            index
            for index, turn in pins
            if index < len(calls)
            and calls[index].turn == turn
            and _same(expected[index], calls[index])
        }
    else:
        taken = _one_to_one(expected, pins, calls)
    return [
        PinMiss(index, expected[index].tool, turn, _made_in(expected[index], calls))
        for index, turn in pins
        if index not in taken
    ]


def _same(want: ExpectedCall, call: TurnCall) -> bool:
    return uncompiled_matches(want, call.tool, call.inputs)


def _made_in(want: ExpectedCall, calls: Sequence[TurnCall]) -> tuple[int, ...]:
    return tuple(call.turn for call in calls if _same(want, call))


def _one_to_one(
    expected: Sequence[ExpectedCall], pins: Sequence[tuple[int, int]], calls: Sequence[TurnCall]
) -> set[int]:
    """The pinned calls in a maximum one-to-one matching with the calls made in their turns
    (augmenting paths over the calls of each pin's turn: a turn holds few calls)."""
    in_turn: dict[int, list[int]] = {}  # turn -> the positions of the calls made in it
    for at, call in enumerate(calls):
        in_turn.setdefault(call.turn, []).append(at)
    options = {
        index: [at for at in in_turn.get(turn, ()) if _same(expected[index], calls[at])]
        for index, turn in pins
    }
    owner: dict[int, int] = {}  # observed position -> pinned expected index

    def augment(index: int, seen: set[int]) -> bool:
        for at in options[index]:
            if at in seen:
                continue
            seen.add(at)
            if at not in owner or augment(owner[at], seen):
                owner[at] = index
                return True
        return False

    for index, _ in pins:
        augment(index, set())
    return set(owner.values())


def pin_reasons(
    expectation: TrajectoryExpectation, calls: Sequence[TurnCall]
) -> list[FailureReason]:
    """The ``trajectory`` reason of the pins that did not hold: each pinned call, the turn it
    was made in against the turn it is pinned to (content: the tool's name; the log only)."""
    misses = pin_misses(expectation, calls)
    if not misses:
        return []
    text = "; ".join(miss.text() for miss in misses[:3])
    more = f" and {len(misses) - 3} more" if len(misses) > 3 else ""
    details = {"pins": [miss.to_json() for miss in misses]}
    message = f"turn pin: {text}{more}"
    return [FailureReason(kind="trajectory", message=message[:300], details=details)]
