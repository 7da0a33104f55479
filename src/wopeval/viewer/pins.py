"""The turn pins (``x-wopeval-pin``) of a trial page's expected calls (pure).

Beside each pinned expected call the trajectory diff shows the turn it is pinned to, and, when
the pin did not hold, the turns calls matching it were made in, or that none was: the same
:func:`~wopeval.grading.turn_pins.pin_misses` grading's reason reads, over the same calls
(the trajectory §A grades), so the page and the reason never disagree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from wopeval.grading.trajectory import ObservedCall, observed_trajectory
from wopeval.grading.turn_pins import pin_misses, pins_of
from wopeval.suite.models import TrajectoryExpectation

__all__ = ["PinView", "graded_turns", "pin_views"]


@dataclass(frozen=True)
class PinView:
    """One pinned expected call on the page: its turn, whether a call made in that turn took
    it, and (when not) the turns calls matching it were made in (none: never made)."""

    turn: int
    held: bool
    made_in: tuple[int, ...] = ()

    @property
    def text(self) -> str:
        return f"turn {self.turn}"

    @property
    def miss_text(self) -> str:
        if self.held:
            return ""
        if not self.made_in:
            return "never made"
        return "made in turn " + ", ".join(str(turn) for turn in self.made_in)


def pin_views(
    expectation: TrajectoryExpectation, calls: Sequence[ObservedCall], target_agent_id: str
) -> dict[int, PinView]:
    """Each pinned expected call's view, by its index among the expected calls (empty when
    none is pinned)."""
    pins = pins_of(expectation)
    if not pins:
        return {}
    graded = observed_trajectory(expectation, calls, target_agent_id)
    misses = {miss.index: miss for miss in pin_misses(expectation, graded)}
    return {
        index: PinView(turn, index not in misses, misses[index].made_in if index in misses else ())
        for index, turn in pins
    }


def graded_turns(
    expectation: TrajectoryExpectation, calls: Sequence[ObservedCall], target_agent_id: str
) -> list[int]:
    """The turn each call of the diff's observed side was made in (the calls §A grades)."""
    return [call.turn for call in observed_trajectory(expectation, calls, target_agent_id)]
