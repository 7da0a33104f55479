"""The building blocks every suite model uses: the closed base and the document's field types.

A suite read from a document (:func:`wopeval.suite.models.validate_document`) is validated in the
context :data:`DOCUMENT`, in which:

- :data:`Omittable`: an optional member is omitted, never ``null`` (the schema has no ``null``);
- :data:`Integral`: JSON Schema's ``integer`` is any number with a zero fraction (``5.0``).

The RFC models (:mod:`wopeval.suite.models`) and wopeval's own ``x-wopeval-`` extension models
(:mod:`wopeval.suite.extensions`) are built from these, so both read a document the same way.
"""

from __future__ import annotations

import math
from typing import Annotated, Any, Final, TypeVar

from pydantic import AfterValidator, BeforeValidator, ConfigDict, ValidationError, ValidationInfo
from pydantic_core import InitErrorDetails, PydanticCustomError

from wopeval.suite.errors import json_type
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


def _json_data(value: Any, info: ValidationInfo) -> Any:
    """In a document, ``value`` if it is JSON data, else every member that is not, each at its
    location. A model built in code may hold any value (graders take tuples, for one)."""
    problems = _not_json(value) if info.context is DOCUMENT else []
    if problems:
        raise ValidationError.from_exception_data("JsonData", problems)
    return value


def _problem(loc: tuple[str | int, ...], code: str, message: str, **ctx: str) -> InitErrorDetails:
    return InitErrorDetails(type=PydanticCustomError(code, message, ctx), loc=loc, input=None)


def _not_json(value: Any) -> list[InitErrorDetails]:
    """Keys that are not strings, numbers that are not finite, values of no JSON type: in
    document order, an object's keys before its members (iterative: no depth limit)."""
    problems: list[InitErrorDetails] = []
    stack: list[tuple[Any, tuple[str | int, ...]]] = [(value, ())]
    while stack:
        item, loc = stack.pop()
        if isinstance(item, dict):
            members = []
            for key, member in item.items():
                if isinstance(key, str):
                    members.append((member, (*loc, key)))
                else:
                    message = "object keys must be strings, got {type} {key}"
                    problems.append(
                        _problem(loc, "json_key", message, type=json_type(key), key=repr(key))
                    )
            stack.extend(reversed(members))
        elif isinstance(item, list):
            stack.extend(reversed([(member, (*loc, i)) for i, member in enumerate(item)]))
        elif isinstance(item, float) and not math.isfinite(item):
            problems.append(
                _problem(loc, "json_number", "{value} is not a JSON number", value=str(item))
            )
        elif item is not None and not isinstance(item, bool | int | float | str):
            message = "not a JSON value ({type})"
            problems.append(_problem(loc, "json_value", message, type=type(item).__name__))
    return problems


# Opaque content (``input``, ``value``, ``args``, ``response``, ``memorySeed`` entries): any JSON
# value, ``null`` too. Pydantic's own ``JsonValue`` names its union tags in error locations
# (``input.dict.n.float``); this names the field path only.
JsonData = Annotated[Any, AfterValidator(_json_data)]
