"""``x-wopeval-user`` (wopeval's own): a scripted simulated user that fails closed.

A task may carry::

    "x-wopeval-user": {"kind": "scripted", "order": "in-order", "maxTurns": 10, "onMiss": "fail",
                       "replies": [{"when": {"regex": "booking reference"}, "reply": "ABC123"},
                                   {"when": {"literal": "Anything else?"}, "reply": "No, thanks",
                                    "stop": true}]}

Each message the agent sends the user (``ctx.ask_user``) is answered by one unconsumed reply
whose ``when`` matches it, consumed like a tool fixture: ``in-order``, the next unconsumed reply
must match; ``keyed``, the first unconsumed reply in document order that matches. A reply with
``stop: true`` ends the conversation. A message no unconsumed reply matches is a user miss: the
conversation ends, the trial fails with score 0 (``user-miss``). The rules of a conversation
live in :mod:`wopeval.engine.user`; the ones here are checked before any trial runs, every
error at once, each naming its field.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from wopeval.suite.errors import FieldError
from wopeval.suite.fields import Integral, JsonData, Omittable, SuiteObject
from wopeval.suite.user_regex import regex_problem

USER_KEY = "x-wopeval-user"
DEFAULT_MAX_TURNS = 10
MAX_TURNS_LIMIT = 1000
MAX_LITERAL_CHARS = 10_000


class WhenLiteral(SuiteObject):
    """The message equals this text exactly."""

    literal: Annotated[str, Field(min_length=1, max_length=MAX_LITERAL_CHARS)]


class WhenRegex(SuiteObject):
    """The message contains a match of this regular expression (a safe subset of Python's
    syntax: no repeated groups, back-references or look-arounds, a bounded number of choices)."""

    regex: Annotated[str, Field(min_length=1)]


class WhenJson(SuiteObject):
    """The message is JSON (a structured question) matching this pattern under ``argsMatch``
    (``subset`` when absent), the rules of a fixture's ``args``."""

    json_: JsonData = Field(alias="json")
    argsMatch: Omittable[Literal["exact", "subset"]] = None

    @property
    def mode(self) -> Literal["exact", "subset"]:
        return self.argsMatch or "subset"


When = WhenLiteral | WhenRegex | WhenJson


class UserReply(SuiteObject):
    """One scripted reply: sent once, to a message its ``when`` matches."""

    when: Annotated[When, Field(description="What the agent's message must be to get this reply.")]
    reply: Annotated[JsonData, Field(description="The user's answer: a text or any JSON.")]
    stop: Omittable[
        Annotated[bool, Field(description="This reply ends the conversation (absent: false).")]
    ] = None


class ScriptedUser(SuiteObject):
    """``x-wopeval-user`` (wopeval): a scripted simulated user. Each message the agent sends is
    answered by an unconsumed reply whose ``when`` matches it (``in-order``: the next one;
    ``keyed``: the first in document order), consumed once like a tool fixture; a ``stop`` reply
    ends the conversation; a message no reply matches fails the trial closed (``user-miss``);
    past ``maxTurns`` messages the trial fails (``max-turns``)."""

    kind: Annotated[Literal["scripted"], Field(description="The user: scripted.")]
    replies: Annotated[
        list[UserReply], Field(min_length=1, description="The replies, each sent at most once.")
    ]
    order: Omittable[
        Annotated[
            Literal["in-order", "keyed"],
            Field(description="in-order (absent): the next reply must match; keyed: any."),
        ]
    ] = None
    maxTurns: Omittable[
        Annotated[
            int,
            Field(
                ge=1,
                le=MAX_TURNS_LIMIT,
                description="The most messages the agent may send the user (absent: 10).",
            ),
            Integral,
        ]
    ] = None
    onMiss: Omittable[
        Annotated[
            Literal["fail"],
            Field(description="A message no unconsumed reply matches fails the trial (fail)."),
        ]
    ] = None

    @property
    def ordered(self) -> bool:
        return self.order != "keyed"

    @property
    def max_turns(self) -> int:
        return self.maxTurns if self.maxTurns is not None else DEFAULT_MAX_TURNS


def user_rules_of(path: str, user: ScriptedUser) -> list[FieldError]:
    """One user script's rule violations: every error at once, each naming its field."""
    errors: list[FieldError] = []
    last = len(user.replies) - 1
    for index, entry in enumerate(user.replies):
        at = f"{path}.replies[{index}]"
        if isinstance(entry.when, WhenRegex):
            problem = regex_problem(entry.when.regex)
            if problem is not None:
                errors.append(FieldError(f"{at}.when.regex", problem))
        if entry.stop and user.ordered and index != last:
            message = (
                f"a stop reply must be the last under order in-order (it is #{index} of "
                f"{last + 1}): the replies after it could never be sent"
            )
            errors.append(FieldError(f"{at}.stop", message))
    if user.maxTurns is not None and user.maxTurns < len(user.replies) and user.ordered:
        message = (
            f"{user.maxTurns} is below the {len(user.replies)} in-order replies: the script "
            "could never be played to its end"
        )
        errors.append(FieldError(f"{path}.maxTurns", message))
    return errors
