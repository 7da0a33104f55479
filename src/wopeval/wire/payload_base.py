"""The base of every payload model: closed, with the v2 vendor hatch, and its wire form.

Each payload def upstream is closed but for vendor keys matching ``^(openwop-|x-|vendor\\.)``
(:data:`~wopeval.wire.vocab.VENDOR_KEY_PATTERN`); :class:`Payload` keeps that rule and writes
the wire dict and JSON text the store keeps. :class:`ClosedPayload` is a def with no hatch.
:class:`ErrorObject` is the ``_errorObject`` several families share.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, ClassVar, Self, cast

from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from pydantic_core import PydanticSerializationError

from wopeval.wire.vocab import VENDOR_KEY_PATTERN

__all__ = ["ClosedPayload", "ErrorObject", "Payload"]

_VENDOR_KEY = re.compile(VENDOR_KEY_PATTERN)


def _vendor_key(key: str) -> str:
    if not _VENDOR_KEY.match(key):
        raise ValueError(
            f"{key!r} is not a member of this payload (closed: only vendor keys, "
            "'openwop-', 'x-' or 'vendor.' ones, may be added)"
        )
    return key


class Payload(BaseModel):
    """A closed payload with the v2 vendor hatch: extra keys must match the vendor pattern.

    The extra keys are checked by their own validator, run for each extra key only: a model
    validator ran in Python for every payload (a sixth of the time building one took)."""

    model_config = ConfigDict(extra="allow", frozen=True, populate_by_name=True)
    event_type: ClassVar[str]
    __pydantic_extra__: dict[Annotated[str, AfterValidator(_vendor_key)], Any] = Field(init=False)

    @classmethod
    def build(cls, **fields: Any) -> Self:
        """``cls(**fields)``, validated the same, without ``BaseModel.__init__``'s Python
        wrapper (the engine builds several payloads per trial)."""
        return cast(Self, cls.__pydantic_validator__.validate_python(fields))

    def to_wire(self) -> dict[str, Any]:
        """The wire dict: ``model_dump(mode="json", exclude_none=True, by_alias=True)``, from
        the serializer directly (``model_dump``'s Python wrapper costs as much again), with
        the members :meth:`_null_kept` names written as ``null`` when absent (at the end)."""
        doc: dict[str, Any] = type(self).__pydantic_serializer__.to_python(
            self, mode="json", exclude_none=True, by_alias=True
        )
        for key in self._null_kept():
            doc.setdefault(key, None)
        return doc

    def wire_and_text(self) -> tuple[dict[str, Any], str | None]:
        """:meth:`to_wire` and its JSON text (as ``dumps_json`` writes it but for the digits of
        some floats: ``1e-7`` for ``1e-07``, the same number), or None for the text when the
        caller must encode the dict itself: the serializer wrote a ``null``, which may stand
        for a float JSON has no number for (``NaN``, ``±inf``: ``dumps_json`` refuses them),
        or could not write it.
        One pass of the serializer for the text instead of the ``json`` module's: the engine
        queues several payloads a trial (5% of a trial's CPU)."""
        serializer = type(self).__pydantic_serializer__
        doc: dict[str, Any] = serializer.to_python(
            self, mode="json", exclude_none=True, by_alias=True
        )
        try:
            raw = serializer.to_json(self, exclude_none=True, by_alias=True).decode()
        except PydanticSerializationError:  # a lone surrogate, say: the caller's encoder decides
            raw = "null"
        text = None if "null" in raw else raw
        for key in self._null_kept() if self._NULL_KEPT else ():
            if key not in doc:  # absent from the serializer's text as from its dict
                doc[key] = None
                if text is not None:
                    text = f'{text[:-1]},"{key}":null}}'
        return doc, text

    # The members a payload of this type may write as ``null`` (``_null_kept``: which do)
    _NULL_KEPT: ClassVar[tuple[str, ...]] = ()

    def _null_kept(self) -> tuple[str, ...]:
        """Members written as ``null`` when absent (``exclude_none`` drops every other)."""
        return self._NULL_KEPT


class ClosedPayload(Payload):
    """A payload def with no vendor hatch (``providerUsage``)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class ErrorObject(BaseModel):
    """``_errorObject``: ``{code, message, details?, retryable?}`` (+ vendor keys)."""

    model_config = ConfigDict(extra="allow", frozen=True)

    code: Annotated[str, Field(min_length=1)]
    message: str
    details: dict[str, Any] | None = None
    retryable: bool | None = None
