"""``configurable`` of a create-run body: closed at every level (runs.md §Run options).

The sections mirror upstream ``configurable.schema.json`` (RFC 0171 §D.1) and its ``budget``,
``budget-policy.schema.json`` (RFC 0084 §A): every section closed, every member typed. An
unknown, dotted or wrongly typed member is ``400 validation_error`` naming it
(``configurable.ai.temprature``), never silently dropped. Only ``extensions.<org>`` objects and
``ai.mockProvider`` are open, as upstream. Integers are JSON integers (``1.0`` and ``true`` are
refused, as for ``version``); ``null`` is no member's value.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    ValidationError,
)

from wopeval.host.errors import HostError, invalid
from wopeval.suite.errors import format_path

SECTIONS = frozenset({"version", "run", "ai", "distillation", "budget", "extensions"})
_ORG_PATTERN = r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$"


def _unique(items: list[str]) -> list[str]:
    if len(set(items)) != len(items):
        raise ValueError("items must be unique")
    return items


_UniqueStrings = Annotated[list[str], AfterValidator(_unique)]
_Org = Annotated[str, StringConstraints(pattern=_ORG_PATTERN)]


class _Section(BaseModel):
    # None stands for a member left out: check_configurable refuses a member sent as null.
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class RunSection(_Section):
    recursionLimit: Annotated[int, Field(ge=1)] | None = None
    runTimeoutMs: Annotated[int, Field(ge=1)] | None = None
    maxLoopIterations: Annotated[int, Field(ge=1)] | None = None
    escalationThreshold: Annotated[int, Field(ge=0)] | None = None


class AiSection(_Section):
    provider: str | None = None
    model: str | None = None
    temperature: Annotated[float, Field(ge=0, le=2)] | None = None
    maxTokens: Annotated[int, Field(ge=1)] | None = None
    credentialRef: str | None = None
    promptOverrides: dict[str, str] | None = None
    mockProvider: dict[str, Any] | None = None
    reasoningVerbosity: Literal["none", "summary", "full"] | None = None
    maxRefusals: Annotated[int, Field(ge=0)] | None = None


class DistillationSection(_Section):
    tokenBudget: Annotated[int, Field(ge=1)] | None = None


class BudgetSection(_Section):
    maxTokens: Annotated[int, Field(ge=1)] | None = None
    maxCostUsd: Annotated[float, Field(ge=0)] | None = None
    maxToolCalls: Annotated[int, Field(ge=1)] | None = None
    maxRetries: Annotated[int, Field(ge=0)] | None = None
    modelAllow: _UniqueStrings | None = None
    modelDeny: _UniqueStrings | None = None
    thresholdPercent: Annotated[float, Field(ge=0, le=100)] | None = None
    onExhaustion: Literal["fail", "interrupt"] | None = None


class Configurable(_Section):
    version: Literal[1]
    run: RunSection | None = None
    ai: AiSection | None = None
    distillation: DistillationSection | None = None
    budget: BudgetSection | None = None
    extensions: dict[_Org, dict[str, Any]] | None = None


def check_configurable(value: dict[str, Any]) -> None:
    """Refuse ``value`` unless it is a valid ``configurable``; the first problem is named."""
    for key in value:
        if key not in SECTIONS:
            raise invalid(format_path(("configurable", key)), "unknown member of configurable")
    version = value.get("version")
    if type(version) is not int or version != 1:  # True == 1 and 1.0 == 1 in Python
        raise invalid("configurable.version", "must be the integer 1")
    for key, section in value.items():
        if key == "version":
            continue
        if not isinstance(section, dict):
            raise invalid(format_path(("configurable", key)), "must be an object")
        nulls = [member for member, item in section.items() if item is None]
        if nulls:
            raise invalid(format_path(("configurable", key, nulls[0])), "must not be null")
    try:
        Configurable.model_validate(value)
    except ValidationError as exc:
        raise _refusal(exc) from None


def _refusal(exc: ValidationError) -> HostError:
    error = exc.errors(include_url=False, include_input=False)[0]
    loc = ("configurable", *error["loc"])
    if error["type"] == "extra_forbidden":
        return invalid(format_path(loc), f"unknown member of {format_path(loc[:-1])}")
    if loc[1] == "extensions" and error["type"] == "string_pattern_mismatch":
        # the key itself breaks the pattern (pydantic places it at "[key]" under the key)
        return invalid(format_path(loc[:3]), f"an extension is keyed by its org ({_ORG_PATTERN})")
    return invalid(format_path(loc), str(error["msg"]))
