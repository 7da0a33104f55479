"""The building blocks every suite model uses: the closed base and the document's field types.

A suite read from a document (:func:`wopeval.suite.models.validate_document`) is validated in the
context :data:`DOCUMENT`, in which:

- :data:`Omittable`: an optional member is omitted, never ``null`` (the schema has no ``null``);
- :data:`Integral`: JSON Schema's ``integer`` is any number with a zero fraction (``5.0``).

The RFC models (:mod:`wopeval.suite.models`) and wopeval's own ``x-wopeval-`` extension models
(:mod:`wopeval.suite.extensions`) are built from these, so both read a document the same way.
"""

from __future__ import annotations

from typing import Annotated, Final, TypeVar

from pydantic import BeforeValidator, ConfigDict, ValidationInfo
from pydantic_core import PydanticCustomError

from wopeval.wire.vocab import Closed

T = TypeVar("T")

# The validation context of a suite read from a document.
DOCUMENT: Final = {"wopeval": "document"}


def _refuse_null(value: object, info: ValidationInfo) -> object:
    # A document spells an absent member two ways, omitted or null, and the wire allows only
    # the first; Python spells both None, so a model built in code may pass None.
    if value is None and info.context is DOCUMENT:
        raise PydanticCustomError(
            "null_not_allowed", "null is not allowed (omit the field instead)"
        )
    return value


def _integral(value: object) -> object:
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


# An optional member: omitted when absent, never ``null`` in a document.
Omittable = Annotated[T | None, BeforeValidator(_refuse_null)]
# JSON Schema's ``integer`` (``Annotated[int, <constraints>, Integral]``, after the constraints so
# the schema keeps them): ``5.0`` is ``5``; ``5.5`` stays a number, which strict mode refuses.
Integral = BeforeValidator(_integral)


class SuiteObject(Closed):
    """Base of every suite object: closed, frozen, and JSON's numbers only."""

    model_config = ConfigDict(allow_inf_nan=False)
