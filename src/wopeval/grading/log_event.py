"""What grading reads of one event of the log: a structural type both event shapes meet.

A live run's fold is fed the :class:`~wopeval.wire.events.RunEvent` each event was written as; a
re-grade reads :class:`~wopeval.events.logged.LoggedEvent` rows, which decode a payload only
when it is read. Grading reads nothing else of either (invariant 1: one fold for both).
"""

from __future__ import annotations

from typing import Any, Protocol

from wopeval.wire.events import Payload

__all__ = ["LogEvent"]


class LogEvent(Protocol):
    """The envelope members and payload forms the fold reads."""

    @property
    def type(self) -> str: ...
    @property
    def eventId(self) -> str: ...
    @property
    def sequence(self) -> int: ...
    @property
    def timestamp(self) -> str: ...
    @property
    def causationId(self) -> str | None: ...
    @property
    def typed(self) -> Payload | None:
        """The payload as its type's model, None for a type without one."""

    @property
    def payload(self) -> Any:
        """The payload as recorded (plain JSON values)."""
