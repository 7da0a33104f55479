"""A trial's simulated-user turns read back from wopeval's OTLP export (pure).

The export writes each ``wopeval.user-turn`` as a ``wopeval.user_turn`` span event on the
trial's agent span, content-free: its number, how it was answered (``reply``, ``stop``,
``miss``, ``max-turns``, ``ended``, ``error``), the reply entry's index, an ``error`` turn's
cause (a label: ``model-error``, ``format``, …; its detail is content and stays behind), and
how many of the trial's tool calls came before it. :class:`TurnsBack` puts each back among the
imported tool calls at that count, so a conversation's log reads as the source's, without the
messages: a user miss still fails its trial closed and counts on the user side, a user error
names its cause; what was said is not in the trace.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, get_args

from wopeval.service.otlp_read import OtlpEvent, OtlpSpan
from wopeval.wire.events import Payload, RunEvent, UserErrorCause, UserTurn, UserTurnKind
from wopeval.wire.vocab import (
    OTEL_USER_CALLS_BEFORE,
    OTEL_USER_CAUSE,
    OTEL_USER_KIND,
    OTEL_USER_REPLY_INDEX,
    OTEL_USER_TURN,
    OTEL_USER_TURN_EVENT,
    TOOL_CALLED,
)

__all__ = ["TurnsBack"]

_KINDS = frozenset(get_args(UserTurnKind))
_CAUSES = frozenset(get_args(UserErrorCause))


@dataclass(frozen=True)
class _Turn:
    calls_before: int
    time_ns: int
    payload: UserTurn


def _index(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _label(value: object, labels: frozenset[str]) -> Any:
    """``value`` when it is one of ``labels`` (a trace may hold any value: a list, a map)."""
    return value if isinstance(value, str) and value in labels else None


def _turn(event: OtlpEvent, agent_id: str) -> _Turn | None:
    """The turn a span event says, or None when it is not one wopeval wrote."""
    attrs = event.attributes
    kind, turn = _label(attrs.get(OTEL_USER_KIND), _KINDS), _index(attrs.get(OTEL_USER_TURN))
    if event.name != OTEL_USER_TURN_EVENT or kind is None or turn is None:
        return None
    payload = UserTurn(
        agentId=agent_id,
        turn=turn,
        kind=kind,
        replyIndex=_index(attrs.get(OTEL_USER_REPLY_INDEX)),
        cause=_label(attrs.get(OTEL_USER_CAUSE), _CAUSES),
    )
    return _Turn(_index(attrs.get(OTEL_USER_CALLS_BEFORE)) or 0, event.time_ns, payload)


class TurnsBack:
    """The root span's turns, added to the trial's events as its tool calls reach each one's
    place: :meth:`due` before each span is converted, :meth:`rest` before the output."""

    def __init__(self, root: OtlpSpan | None, agent_id: str) -> None:
        found = [_turn(event, agent_id) for event in (root.events if root else ())]
        turns = [t for t in found if t is not None]
        self._pending = sorted(turns, key=lambda t: (t.calls_before, t.payload.turn))
        self._called = 0
        self._seen = 0

    def due(self, events: list[RunEvent], add: Callable[[Payload, int], object]) -> None:
        """Add the turns whose calls before them have all been added to ``events``."""
        if not self._pending:
            return
        self._called += sum(1 for e in events[self._seen :] if e.type == TOOL_CALLED)
        self._seen = len(events)
        while self._pending and self._pending[0].calls_before <= self._called:
            turn = self._pending.pop(0)
            add(turn.payload, turn.time_ns)
        self._seen = len(events)

    def rest(self, add: Callable[[Payload, int], object]) -> None:
        """Add the turns left (a trace that holds fewer calls than the export counted)."""
        for turn in self._pending:
            add(turn.payload, turn.time_ns)
        self._pending = []
