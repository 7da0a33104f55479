"""A task's stateful world (``x-wopeval-world``) and its final-state expectation, as models and
rules (docs/worlds.md).

A world is an ``initial`` JSON document and, for each tool, the rules saying what a call does:
the first rule whose ``when`` matches the call's arguments serves it. A rule checks its
``require`` preconditions (the first that fails is the tool error it declares), applies its
``effects`` in order (all or none), and answers the ``result`` template or the value it
``read``\\s. A call no rule serves is a miss, failed closed like a fixture miss (RFC 0244 §D).

``expected["x-wopeval-finalState"]`` asserts the trial's final state: ``exact`` (JSON-deep equal)
or ``subset`` (every key path of ``state`` holds an equal value), the ``argsMatch`` policy.

The models give the shape; :func:`world_rules` and :func:`final_state_rules` the rules a schema
cannot say (a pointer's syntax, which members an ``op`` takes, template references), each error
naming its field.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from wopeval.suite.errors import FieldError, format_path, json_type
from wopeval.suite.fields import JsonData, Omittable, SuiteObject
from wopeval.suite.pointers import PointerSyntaxError, parse_pointer, template_problems

__all__ = [
    "WORLD_KEY",
    "Effect",
    "FinalState",
    "Requirement",
    "RuleError",
    "World",
    "WorldRule",
    "WorldWhen",
    "final_state_rules",
    "world_rules",
]

WORLD_KEY = "x-wopeval-world"
FINAL_STATE_KEY = "x-wopeval-finalState"
ERROR_CODE_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$"

EffectOp = Literal["set", "merge", "append", "increment", "remove"]
StateMatch = Literal["exact", "subset"]


class WorldWhen(SuiteObject):
    """Which calls a rule serves: their arguments match ``args`` under ``argsMatch``."""

    args: JsonData
    argsMatch: StateMatch


class RuleError(SuiteObject):
    """The tool error a failed precondition answers: its ``code`` and agent-visible ``message``."""

    code: Annotated[str, Field(pattern=ERROR_CODE_PATTERN)]
    message: str


class Requirement(SuiteObject):
    """A precondition at ``pointer``: it ``exists``, is ``absent``, or ``equals`` a template."""

    pointer: str
    equals: JsonData = None
    exists: Omittable[bool] = None
    absent: Omittable[bool] = None
    error: RuleError


class Effect(SuiteObject):
    """One change to the state at ``pointer``; ``value`` is a template (``$arg`` references)."""

    op: EffectOp
    pointer: str
    value: JsonData = None


class WorldRule(SuiteObject):
    when: Omittable[WorldWhen] = None
    require: Omittable[list[Requirement]] = None
    effects: Omittable[list[Effect]] = None
    read: Omittable[str] = None
    result: JsonData = None


class World(SuiteObject):
    initial: JsonData = None
    tools: Annotated[
        dict[str, Annotated[list[WorldRule], Field(min_length=1)]], Field(min_length=1)
    ]

    @property
    def initial_state(self) -> Any:
        """``initial``, an empty object when it is not given."""
        return {} if "initial" not in self.model_fields_set else self.initial


class FinalState(SuiteObject):
    match: StateMatch
    state: JsonData


# --- rules -------------------------------------------------------------------------------------

_VALUE_OPS = {"set", "merge", "append", "increment"}


def world_rules(path: str, world: World) -> list[FieldError]:
    """Every rule a schema-valid world breaks, in document order."""
    errors: list[FieldError] = []
    for tool, rules in world.tools.items():
        if not tool:
            errors.append(FieldError(f"{path}.tools", "a tool name must not be empty"))
        for index, rule in enumerate(rules):
            errors += _rule(_join(f"{path}.tools", (tool, index)), rule)
    return errors


def _rule(path: str, rule: WorldRule) -> list[FieldError]:
    errors: list[FieldError] = []
    when = rule.when
    if when is not None and when.argsMatch == "subset" and not isinstance(when.args, dict):
        got = json_type(when.args)
        why = f"must be an object when argsMatch is 'subset' (got {got})"
        errors.append(FieldError(f"{path}.when.args", why))
    for j, requirement in enumerate(rule.require or []):
        errors += _requirement(f"{path}.require[{j}]", requirement)
    for j, effect in enumerate(rule.effects or []):
        errors += _effect(f"{path}.effects[{j}]", effect)
    if rule.read is not None:
        if "result" in rule.model_fields_set:
            errors.append(FieldError(f"{path}.read", "give read or result, not both"))
        errors += _pointer(f"{path}.read", rule.read)
    errors += _template(f"{path}.result", rule.result, state=True)
    return errors


def _requirement(path: str, requirement: Requirement) -> list[FieldError]:
    errors = _pointer(f"{path}.pointer", requirement.pointer)
    for name in ("exists", "absent"):
        if getattr(requirement, name) is False:
            errors.append(FieldError(f"{path}.{name}", "must be true (or omitted)"))
    given = [k for k in ("equals", "exists", "absent") if k in requirement.model_fields_set]
    if len(given) != 1:
        what = "none" if not given else " and ".join(given)
        errors.append(FieldError(path, f"give exactly one of equals, exists, absent (got {what})"))
    errors += _template(f"{path}.equals", requirement.equals, state=False)
    return errors


def _effect(path: str, effect: Effect) -> list[FieldError]:
    errors = _pointer(f"{path}.pointer", effect.pointer)
    has_value = "value" in effect.model_fields_set
    if effect.op == "remove" and has_value:
        errors.append(FieldError(f"{path}.value", "not allowed when op is 'remove'"))
    elif effect.op in _VALUE_OPS - {"increment"} and not has_value:
        errors.append(FieldError(f"{path}.value", f"required when op is {effect.op!r}"))
    if effect.op == "remove" and effect.pointer == "":
        errors.append(FieldError(f"{path}.pointer", "the whole state cannot be removed"))
    if effect.op == "increment" and has_value and not _number_or_reference(effect.value):
        got = json_type(effect.value)
        why = f"must be a number or an $arg reference (got {got})"
        errors.append(FieldError(f"{path}.value", why))
    if effect.op == "merge" and has_value and not isinstance(effect.value, dict):  # $arg: a dict
        got = json_type(effect.value)
        why = f"must be an object or an $arg reference when op is 'merge' (got {got})"
        errors.append(FieldError(f"{path}.value", why))
    errors += _template(f"{path}.value", effect.value, state=False)
    return errors


def _number_or_reference(value: Any) -> bool:
    if isinstance(value, dict):
        return set(value) == {"$arg"}
    return isinstance(value, int | float) and not isinstance(value, bool)


def _pointer(path: str, text: str) -> list[FieldError]:
    try:
        parse_pointer(text, placeholders=True)
    except PointerSyntaxError as exc:
        return [FieldError(path, f"not a JSON Pointer: {exc}")]
    return []


def _template(path: str, value: Any, *, state: bool) -> list[FieldError]:
    found = template_problems(value, state=state)
    return [FieldError(_join(path, loc) if loc else path, message) for loc, message in found]


def _join(path: str, loc: tuple[str | int, ...]) -> str:
    inner = format_path(loc)
    return f"{path}{inner}" if inner.startswith("[") else f"{path}.{inner}"


def final_state_rules(path: str, final: FinalState, world: World | None) -> list[FieldError]:
    """``x-wopeval-finalState`` needs the task's world, and a ``subset`` needs an object."""
    errors: list[FieldError] = []
    if world is None:
        why = f"needs the task's {WORLD_KEY} (there is no state to assert)"
        errors.append(FieldError(path, why))
    if final.match == "subset" and not isinstance(final.state, dict):
        got = json_type(final.state)
        why = f"must be an object when match is 'subset' (got {got})"
        errors.append(FieldError(f"{path}.state", why))
    return errors
