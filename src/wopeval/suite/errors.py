"""Suite errors that name the field: the caller's mistake, reported as ``<path>: <message>``.

A path is a JSON path in the grammar ``tasks[2].expected.trajectory.match``: object members
joined by dots, array indices in brackets, ``$`` for the whole document. This module also turns
pydantic's ``ValidationError`` into those errors, rewriting its messages into plain sentences
(``'superset' is not one of exact, in-order, any-order, subset``). RFC 0244 §G asks for a
refusal "naming the field"; these paths are what the CLI prints and what a ``400
validation_error`` carries.
"""

from __future__ import annotations

import json
import math
import re
import types
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails

from wopeval.errors import UserError
from wopeval.wire.vocab import (
    AGENT_ID_PATTERN,
    SEMVER_PATTERN,
    SUITE_ID_PATTERN,
    TASK_ID_PATTERN,
)

Loc = tuple[str | int, ...]

ROOT_PATH = "$"
_PLAIN_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
_MAX_SHOWN = 60

_PATTERN_HINTS: dict[str, str] = {
    SUITE_ID_PATTERN: "a suite id like core.acme.evals.support-resolver",
    SEMVER_PATTERN: "a version like 1.0.0",
    TASK_ID_PATTERN: "a lowercase kebab-case id like refund-approved",
    AGENT_ID_PATTERN: "an agent id like core.acme.support",
}

_TYPE_NAMES: dict[str, str] = {
    "int_type": "an integer",
    "float_type": "a number",
    "bool_type": "a boolean (true or false)",
    "string_type": "a string",
    "list_type": "an array",
    "dict_type": "an object",
    "model_type": "an object",
}


@dataclass(frozen=True)
class FieldError:
    """One problem with a suite, at a JSON path (``$`` for the whole document)."""

    path: str
    message: str

    def __str__(self) -> str:
        return f"{self.path}: {self.message}"


class SuiteError(UserError):
    """A suite that cannot be used, with every problem found (never only the first)."""

    def __init__(self, errors: Sequence[FieldError], source: str = "<suite>") -> None:
        self.errors: list[FieldError] = list(errors)
        self.source = source
        super().__init__(self._render())

    def _render(self) -> str:
        count = len(self.errors)
        noun = "error" if count == 1 else "errors"
        lines = [f"{self.source}: invalid suite ({count} {noun})"]
        lines.extend(f"  {error}" for error in self.errors)
        return "\n".join(lines)


def format_path(loc: Loc) -> str:
    """``("tasks", 2, "expected")`` → ``tasks[2].expected``; the empty location is ``$``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _PLAIN_KEY.match(part):
            out += f".{part}" if out else part
        else:
            out += f"[{json.dumps(part)}]"
    return out or ROOT_PATH


def json_type(value: object) -> str:
    """The JSON Schema type name of a value (``null``, ``boolean``, ``array``, …)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def show(value: object) -> str:
    """A short, quoted rendering of a value the author wrote, for messages."""
    if isinstance(value, str):
        text = repr(value)
    else:
        try:
            text = json.dumps(value, allow_nan=True)
        except (TypeError, ValueError):
            text = repr(value)
    return text if len(text) <= _MAX_SHOWN else text[: _MAX_SHOWN - 1] + "…"


def _number(value: object) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


# --- walking the models by location (for messages) ---------------------------------------


def unwrap(annotation: object) -> object:
    """Strip ``Annotated`` and ``| None`` from a type."""
    current = annotation
    while True:
        origin = get_origin(current)
        if origin is Annotated:
            current = get_args(current)[0]
            continue
        if origin is Union or origin is types.UnionType:
            rest = [member for member in get_args(current) if member is not type(None)]
            if len(rest) == 1:
                current = rest[0]
                continue
        return current


def as_model(annotation: object) -> type[BaseModel] | None:
    """The pydantic model class an (unwrapped) annotation names, if any."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return None


def list_item(annotation: object) -> object | None:
    """The item type of ``list[X]``, or ``None`` when the annotation is not a list."""
    if get_origin(annotation) is not list:
        return None
    item: object = get_args(annotation)[0]
    return item


def wire_fields(model: type[BaseModel]) -> dict[str, FieldInfo]:
    """A model's fields by their wire names (the alias, where a field has one)."""
    return {info.alias or name: info for name, info in model.model_fields.items()}


def type_at(root: type[BaseModel], loc: Loc) -> object | None:
    """The declared type at a location under ``root`` (unwrapped), or ``None`` if unknown."""
    current: object = root
    for part in loc:
        current = unwrap(current)
        if isinstance(part, int):
            current = list_item(current)
        elif get_origin(current) is dict:  # a map keyed by names (a world's tools)
            current = get_args(current)[1]
        else:
            model = as_model(current)
            field = wire_fields(model).get(part) if model else None
            current = field.annotation if field else None
        if current is None:
            return None
    return unwrap(current)


# --- pydantic messages → plain sentences --------------------------------------------------


def _allowed_values(error: ErrorDetails) -> list[str]:
    """The literals pydantic lists (``"'exact', 'in-order' or 'subset'"``); all are strings."""
    expected = str(error.get("ctx", {}).get("expected", ""))
    return re.findall(r"'([^']*)'", expected)


def _unknown_field(root: type[BaseModel], loc: Loc) -> str:
    model = as_model(type_at(root, loc[:-1]))
    if model is None:
        return "unknown field"
    return f"unknown field (allowed: {', '.join(sorted(wire_fields(model)))})"


def _pattern_message(value: object, pattern: str) -> str:
    hint = _PATTERN_HINTS.get(pattern)
    message = f"{show(value)} does not match the pattern {pattern}"
    return f"{message} (expected {hint})" if hint else message


def _length_message(kind: str, ctx: dict[str, Any], value: object) -> str:
    if kind == "string_too_short":
        limit = ctx.get("min_length", 1)
        return "must not be empty" if limit == 1 else f"must be at least {limit} characters"
    if kind == "string_too_long":
        return f"must be at most {ctx.get('max_length')} characters"
    actual = ctx.get("actual_length", len(value) if isinstance(value, list) else "?")
    if kind == "too_short":
        limit = ctx.get("min_length", 1)
        return f"must have at least {limit} item{'s' if limit != 1 else ''} (got {actual})"
    return f"must have at most {ctx.get('max_length')} items (got {actual})"


def _bound_message(kind: str, ctx: dict[str, Any], value: object) -> str:
    shown = _number(value)
    if kind == "greater_than_equal":
        return f"{shown} is less than the minimum {_number(ctx['ge'])}"
    if kind == "greater_than":
        return f"{shown} must be greater than {_number(ctx['gt'])}"
    if kind == "less_than_equal":
        return f"{shown} is greater than the maximum {_number(ctx['le'])}"
    return f"{shown} must be less than {_number(ctx['lt'])}"


def describe(root: type[BaseModel], error: ErrorDetails) -> str:
    """Rewrite one pydantic error as a human message (the path is rendered separately)."""
    kind = error["type"]
    value = error.get("input")
    ctx: dict[str, Any] = dict(error.get("ctx", {}))
    if isinstance(value, float) and not math.isfinite(value):
        return f"{value} is not a JSON number"
    if kind == "missing":
        return "required"
    if kind == "extra_forbidden":
        return _unknown_field(root, tuple(error["loc"]))
    if kind == "literal_error":
        return f"{show(value)} is not one of {', '.join(_allowed_values(error))}"
    if kind == "string_pattern_mismatch":
        return _pattern_message(value, str(ctx.get("pattern", "")))
    if kind in ("greater_than_equal", "greater_than", "less_than_equal", "less_than"):
        return _bound_message(kind, ctx, value)
    if kind in ("too_short", "too_long", "string_too_short", "string_too_long"):
        return _length_message(kind, ctx, value)
    if kind in _TYPE_NAMES:
        exact_number = isinstance(value, float) and kind.startswith("int")
        got = show(value) if exact_number else json_type(value)
        return f"expected {_TYPE_NAMES[kind]}, got {got}"
    message = error["msg"]
    return message[:1].lower() + message[1:]


def _key_error(error: ErrorDetails) -> tuple[Loc, str] | None:
    """A key that is not a string, named at its object: pydantic names the key itself
    (``invalid_key`` in a model, ``[key]`` after it in a ``dict[str, …]``)."""
    loc: Loc = tuple(error["loc"])
    if error["type"] == "invalid_key":
        loc = loc[:-1]
    elif loc[-1:] == ("[key]",):
        loc = loc[:-2]
    else:
        return None
    key = error.get("input")
    return loc, f"object keys must be strings, got {json_type(key)} {key!r}"


def from_validation_error(
    exc: ValidationError, root: type[BaseModel]
) -> list[tuple[Loc, FieldError]]:
    """Every error of a ``ValidationError``, as ``(location, FieldError)`` pairs, in its order."""
    out: list[tuple[Loc, FieldError]] = []
    for error in exc.errors(include_url=False):
        loc: Loc = tuple(error["loc"])
        message = describe(root, error)
        key_error = _key_error(error)
        if key_error is not None:
            loc, message = key_error
        out.append((loc, FieldError(format_path(loc), message)))
    return out
