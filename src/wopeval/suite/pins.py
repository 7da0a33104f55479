"""``x-wopeval-pin`` (wopeval's own): an expected trajectory call pinned to an agent turn.

On a task with a scripted user (``x-wopeval-user``) an expected call may carry::

    {"tool": "shop:refund", "args": {"order": "A1"}, "argsMatch": "subset",
     "x-wopeval-pin": {"turn": 2}}

**Turns.** The agent's turn ``N`` is what it does after its first ``N`` messages to the user
were answered and before its next one: turn 0 runs before the first message, and turn ``N``
ends with the message the log records as ``wopeval.user-turn`` with ``turn: N``. A message sent
after the conversation ended (``kind: ended``) opens no turn, so the calls after a stop reply
made at message ``N`` are in turn ``N + 1``, the agent's last. With at most ``maxTurns``
messages, the turns are ``0 … maxTurns``.

The pin is graded in :mod:`wopeval.grading.turn_pins`; the rules here are checked before any
trial runs, every error at once, each naming its field: a pin needs the task's user, and its
turn is at most the user's ``maxTurns`` (a negative turn is refused by the model).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from wopeval.suite.errors import FieldError
from wopeval.suite.fields import Integral, SuiteObject
from wopeval.suite.user import USER_KEY, ScriptedUser

__all__ = ["PIN_KEY", "TurnPin", "pin_rules_of"]

PIN_KEY = "x-wopeval-pin"


class TurnPin(SuiteObject):
    """``x-wopeval-pin`` (wopeval): the agent turn an expected call must be made in (turn 0:
    before the agent's first message to the user; turn N: after N of its messages were
    answered, before the next one)."""

    turn: Annotated[
        int,
        Field(ge=0, description="The agent turn the call must be made in (0: before any message)."),
        Integral,
    ]


def pin_rules_of(
    path: str, pins: list[tuple[int, TurnPin]], user: ScriptedUser | None
) -> list[FieldError]:
    """The rule violations of one task's pins (``pins``: each pinned call's index in
    ``expected.trajectory.calls``; ``path``: the task's path)."""
    errors: list[FieldError] = []
    for index, pin in pins:
        at = f"{path}.expected.trajectory.calls[{index}].{PIN_KEY}"
        if user is None:
            errors.append(FieldError(at, f"needs the task's {USER_KEY} (there are no turns)"))
        elif pin.turn > user.max_turns:
            message = (
                f"turn {pin.turn} is above maxTurns = {user.max_turns} (the agent's turns are "
                f"0 to {user.max_turns})"
            )
            errors.append(FieldError(f"{at}.turn", message))
    return errors
