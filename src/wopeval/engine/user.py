"""A scripted simulated user's side of one trial's conversation (``x-wopeval-user``), pure.

One :class:`Conversation` per trial, like the tool gateway's fixture cursor: its replies are
consumed in that trial only (RFC 0244 §B isolation). Each message the agent sends is answered
by :meth:`Conversation.answer`:

1. once the conversation has ended (a stop, a miss, ``maxTurns``), ``ended``: no reply, ever;
2. past ``maxTurns`` messages, ``max-turns``: the conversation ends (the agent did not finish
   in time, an agent failure);
3. the first unconsumed reply whose ``when`` matches (``in-order``: only the next unconsumed
   one may), consumed; ``stop`` when it is a stop reply (the conversation ends), else ``reply``;
4. none matches: ``miss`` (``onMiss: fail``): the conversation ends, the trial fails closed.

A ``when`` matches a message (a text, or any JSON for a structured question) as follows:
``literal``, the message is that text; ``regex``, the message is a text of at most
:data:`~wopeval.suite.user_regex.MAX_SUBJECT_CHARS` characters in which the pattern is found;
``json``, the message (a text is parsed as JSON first) matches the pattern under ``argsMatch``,
the rules of a fixture's ``args``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Protocol

from wopeval.engine.copies import JsonCopies
from wopeval.grading.jsonmatch import args_match
from wopeval.suite.user import ScriptedUser, WhenJson, WhenLiteral, WhenRegex
from wopeval.suite.user_regex import MAX_SUBJECT_CHARS
from wopeval.wire.events import UserErrorCause, UserTurnKind

__all__ = ["Answer", "Conversation", "UserSide", "when_matches"]

_NOT_JSON = object()


@dataclass(frozen=True)
class Answer:
    """How one message was answered: its ``kind``, the turn it was (from 0), the reply entry
    and a copy of its ``reply`` (``None`` unless ``reply`` or ``stop``); for an ``error`` (an
    LLM user's failure, :mod:`wopeval.engine.user_llm`), its ``cause`` and ``error``."""

    kind: UserTurnKind
    turn: int
    index: int | None = None
    reply: Any = None
    cause: UserErrorCause | None = None
    error: str | None = None


class UserSide(Protocol):
    """A simulated user's side of one trial: scripted (:class:`Conversation`) or played by a
    model (:class:`~wopeval.engine.user_llm.LlmConversation`)."""

    @property
    def ended(self) -> UserTurnKind | None: ...

    async def respond(self, message: Any) -> Answer: ...


class Conversation:
    """The user's side of one trial. Not shared between trials: its cursor is trial state."""

    def __init__(self, script: ScriptedUser, copies: JsonCopies | None = None) -> None:
        self._script = script
        self._copies = copies if copies is not None else JsonCopies()
        self._consumed = [False] * len(script.replies)
        self.turns = 0
        self.ended: UserTurnKind | None = None

    @property
    def left(self) -> list[int]:
        """The reply entries not consumed yet, in document order."""
        return [index for index, used in enumerate(self._consumed) if not used]

    async def respond(self, message: Any) -> Answer:
        """:meth:`answer`, as every simulated user answers (an LLM user awaits its model)."""
        return self.answer(message)

    def answer(self, message: Any) -> Answer:
        """Answer the agent's next message (see the module)."""
        if self.ended is not None:
            return Answer("ended", self.turns)
        turn = self.turns
        self.turns += 1
        if turn >= self._script.max_turns:
            self.ended = "max-turns"
            return Answer("max-turns", turn)
        index = self._select(message)
        if index is None:
            self.ended = "miss"
            return Answer("miss", turn)
        self._consumed[index] = True
        entry = self._script.replies[index]
        kind: UserTurnKind = "stop" if entry.stop else "reply"
        if entry.stop:
            self.ended = "stop"
        return Answer(kind, turn, index, self._copies.copy(entry.reply))

    def _select(self, message: Any) -> int | None:
        for index in self.left:
            if when_matches(self._script.replies[index].when, message):
                return index
            if self._script.ordered:
                return None
        return None


def when_matches(when: WhenLiteral | WhenRegex | WhenJson, message: Any) -> bool:
    """Whether ``message`` is what ``when`` waits for (see the module)."""
    if isinstance(when, WhenLiteral):
        return isinstance(message, str) and message == when.literal
    if isinstance(when, WhenRegex):
        if not isinstance(message, str) or len(message) > MAX_SUBJECT_CHARS:
            return False
        return re.search(when.regex, message) is not None
    value = _parsed(message) if isinstance(message, str) else message
    if value is _NOT_JSON:
        return False
    try:
        return args_match(when.mode, when.json_, value)
    except (TypeError, ValueError):  # not JSON data: it matches no pattern
        return False


def _parsed(text: str) -> Any:
    try:
        return json.loads(text, parse_constant=_refuse)
    except ValueError:
        return _NOT_JSON


def _refuse(name: str) -> Any:
    raise ValueError(f"not JSON: {name}")
