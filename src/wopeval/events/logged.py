"""A stored event as grading reads it: the columns the fold needs, its payload decoded on demand.

Re-grading reads every event of a run; building each as a :class:`~wopeval.wire.events.RunEvent`
(every column, the payload parsed into Python values, then validated again from those values)
cost more than the fold itself. A :class:`LoggedEvent` holds the stored payload text and
validates it straight from that text into its type's model the first time :attr:`typed` is
read (pydantic-core's JSON validator: no intermediate Python values), so an event type the
fold never reads is never decoded. Validation is the same model's as ``RunEvent.typed``: a
malformed stored payload is refused on read, never trusted because the writer checked it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from wopeval.errors import StoreError
from wopeval.events.tables import events, loads_json
from wopeval.wire.events import PAYLOAD_MODELS, Payload

__all__ = ["LOGGED_COLUMNS", "LoggedEvent", "MalformedEventError"]

# The columns a LoggedEvent is built from, in its constructor's order.
LOGGED_COLUMNS: Final = (
    events.c.sequence,
    events.c.event_id,
    events.c.type,
    events.c.payload,
    events.c.timestamp,
    events.c.causation_id,
)
_UNREAD: Final[Any] = object()
# Each typed event type's JSON validator, looked up once per event instead of through its model.
_VALIDATE_JSON: Final[dict[str, Callable[[str], Payload]]] = {
    type_: model.__pydantic_validator__.validate_json for type_, model in PAYLOAD_MODELS.items()
}


class MalformedEventError(StoreError):
    """A stored event's payload breaks its type's model: the log cannot be graded."""


class LoggedEvent:
    """One stored event: ``sequence``, ``eventId``, ``type``, ``timestamp``, ``causationId``
    (the envelope members grading reads) and its payload, decoded when first read."""

    __slots__ = (
        "_payload",
        "_text",
        "_typed",
        "causationId",
        "eventId",
        "sequence",
        "timestamp",
        "type",
    )

    def __init__(
        self,
        sequence: int,
        event_id: str,
        type_: str,
        text: str,
        timestamp: str,
        causation_id: str | None,
    ) -> None:
        self.sequence = sequence
        self.eventId = event_id
        self.type = type_
        self._text = text
        self.timestamp = timestamp
        self.causationId = causation_id
        self._typed: Payload | None = _UNREAD
        self._payload: Any = _UNREAD

    @property
    def typed(self) -> Payload | None:
        """The payload as its type's model (None for a type without one); validated from the
        stored text once. Raises :class:`MalformedEventError` for a payload its model refuses."""
        typed = self._typed
        if typed is _UNREAD:
            validate = _VALIDATE_JSON.get(self.type)
            if validate is None:
                typed = None
            else:
                try:
                    typed = validate(self._text)
                except ValueError:
                    typed = self._revalidate(PAYLOAD_MODELS[self.type])
            self._typed = typed
        return typed

    @property
    def payload(self) -> Any:
        """The payload as recorded (plain JSON values)."""
        payload = self._payload
        if payload is _UNREAD:
            payload = self._payload = loads_json(self._text)
        return payload

    def _revalidate(self, model: type[Payload]) -> Payload:
        """The payload that model's JSON validator refused: read by the json module when
        pydantic-core's parser cannot (a lone surrogate's escape) and validated from those
        values, as ``RunEvent.typed`` would; else refused naming the event."""
        validator = model.__pydantic_validator__
        try:
            try:
                return validator.validate_json(self._text)  # type: ignore[no-any-return]
            except ValidationError as exc:
                if not _unparsed(exc.errors()):
                    raise
            return validator.validate_python(self.payload)  # type: ignore[no-any-return]
        except ValueError as exc:  # a ValidationError, or text that is no JSON at all
            raise MalformedEventError(
                f"event {self.sequence} ({self.type}) of the stored log breaks its payload "
                f"model {model.__name__}: {exc}"
            ) from exc

    def __repr__(self) -> str:
        return f"LoggedEvent({self.sequence}, {self.type!r}, {self.eventId!r})"


def _unparsed(errors: list[ErrorDetails]) -> bool:
    return any(error["type"] == "json_invalid" for error in errors)
