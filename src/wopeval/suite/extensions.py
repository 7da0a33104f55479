"""wopeval's own suite members (``x-wopeval-…``): the one list that validation, the schema, host
discovery and the refusal of an unadvertised member all read.

A plain RFC 0244 suite uses none of them and is read, run and graded exactly as the RFC says. A
suite that uses one needs a host that implements it: the host advertises the members it
implements under the vendor member ``x-wopeval-extensions`` of its ``agents.evalSuite`` facet,
and refuses a suite using one it does not advertise with ``400 validation_error`` naming the
member (the RFC 0244 §G rule, applied to wopeval's own features). An upstream host, whose suite
schema is closed, refuses such a suite the same way.

Registering an extension is one entry in :data:`EXTENSIONS`: its member name, the closed pydantic
model of its value, where it may appear (``suite``: the suite root; ``task``: each task;
``call``: each expected trajectory call) and its
cross-field rules; plus the model's field, under that alias, on :class:`~wopeval.suite.models.
AgentEvalSuite`, :class:`~wopeval.suite.models.Task` or :class:`~wopeval.suite.models.ExpectedCall`
(a test keeps the two in step).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Literal

from pydantic import BaseModel

from wopeval.suite.adaptive import ADAPTIVE_KEY, AdaptiveTrials
from wopeval.suite.adaptive_rules import adaptive_rules
from wopeval.suite.errors import FieldError
from wopeval.suite.fields import SuiteObject
from wopeval.suite.models import AgentEvalSuite, ExpectedCall, Task
from wopeval.suite.pins import PIN_KEY, TurnPin, pin_rules_of
from wopeval.suite.user import USER_KEY, ScriptedUser, user_rules_of
from wopeval.suite.world import WORLD_KEY, World
from wopeval.suite.world_rules import suite_world_rules

Scope = Literal["suite", "task", "call"]
# The vendor member of ``agents.evalSuite`` that lists the advertised extensions.
ADVERTISEMENT_KEY = "x-wopeval-extensions"
PREFIX = "x-wopeval-"


def _no_rules(suite: AgentEvalSuite) -> list[FieldError]:
    return []


def _user_rules(suite: AgentEvalSuite) -> list[FieldError]:
    errors: list[FieldError] = []
    for index, task in enumerate(suite.tasks):
        if task.x_wopeval_user is not None:
            errors += user_rules_of(f"tasks[{index}].{USER_KEY}", task.x_wopeval_user)
    return errors


def _pin_rules(suite: AgentEvalSuite) -> list[FieldError]:
    errors: list[FieldError] = []
    for index, task in enumerate(suite.tasks):
        trajectory = task.expected.trajectory
        calls = trajectory.calls if trajectory is not None else []
        pins = [(at, call.pin) for at, call in enumerate(calls) if call.pin is not None]
        if pins:
            errors += pin_rules_of(f"tasks[{index}]", pins, task.x_wopeval_user)
    return errors


@dataclass(frozen=True)
class Extension:
    """One of wopeval's own suite members.

    ``summary`` is one plain sentence for ``wopeval schema`` and the docs; ``advertised`` is what
    host discovery says of it under ``x-wopeval-extensions`` (JSON; ``{}`` when nothing more
    than its presence); ``rules`` are its cross-field rules over a schema-valid suite, every
    error at once, each naming its field.
    """

    name: str
    model: type[SuiteObject]
    scopes: tuple[Scope, ...]
    summary: str
    rules: Callable[[AgentEvalSuite], list[FieldError]] = _no_rules
    advertised: Mapping[str, object] = field(default_factory=dict)


EXTENSIONS: tuple[Extension, ...] = (
    Extension(
        name=ADAPTIVE_KEY,
        model=AdaptiveTrials,
        scopes=("suite", "task"),
        summary=(
            "Adaptive trials: a task stops adding trials (up to trials.count) once Wald's "
            "sequential probability ratio test decides whether its pass rate is above or below "
            "a threshold, with error rates alpha and beta. A task's own setting overrides the "
            "suite's. Never for tasks with live tools."
        ),
        rules=adaptive_rules,
        advertised={"rules": ["sprt"]},
    ),
    Extension(
        name=WORLD_KEY,
        model=World,
        scopes=("task",),
        summary=(
            "A stateful world: an initial JSON state and, for each tool, rules saying what a "
            "call does to it (read; set, merge, append, increment, remove at a JSON pointer; "
            "conditioned on the call's arguments; a declared error when a precondition fails). "
            "Each trial gets its own copy, served through the tool gateway after the fixtures; "
            "a call no rule serves is a fail-closed miss. The task's expected may assert the "
            "final state with x-wopeval-finalState (exact or subset). See docs/worlds.md."
        ),
        rules=suite_world_rules,
        advertised={
            "operations": ["read", "set", "merge", "append", "increment", "remove"],
            "finalState": ["exact", "subset"],
        },
    ),
    Extension(
        name=USER_KEY,
        model=ScriptedUser,
        scopes=("task",),
        summary=(
            "A scripted simulated user: each message the agent sends it (ctx.ask_user) is "
            "answered by an unconsumed reply whose literal, regex or JSON pattern matches, "
            "consumed once like a tool fixture (in-order or keyed); a stop reply ends the "
            "conversation; a message no reply matches fails the trial closed (user-miss), "
            "more than maxTurns messages fail it (max-turns)."
        ),
        rules=_user_rules,
        advertised={"kinds": ["scripted"], "order": ["in-order", "keyed"]},
    ),
    Extension(
        name=PIN_KEY,
        model=TurnPin,
        scopes=("call",),
        summary=(
            "An expected trajectory call pinned to an agent turn of a conversation with the "
            "task's x-wopeval-user: turn N is what the agent does after N of its messages to "
            "the user were answered and before its next one (turn 0: before the first). The "
            "trajectory matches only if each pinned call is also made in its turn."
        ),
        rules=_pin_rules,
        advertised={"pins": ["turn"]},
    ),
)


def extension_names() -> tuple[str, ...]:
    """Every registered member name, in registry order."""
    return tuple(ext.name for ext in EXTENSIONS)


@cache
def _attributes(model: type[BaseModel]) -> dict[str, str]:
    """A model's extension members: wire name → Python attribute."""
    return {
        info.alias: attr
        for attr, info in model.model_fields.items()
        if info.alias is not None and info.alias.startswith(PREFIX)
    }


def member(obj: AgentEvalSuite | Task | ExpectedCall, name: str) -> SuiteObject | None:
    """The value of member ``name`` on a suite or task, ``None`` when absent."""
    attr = _attributes(type(obj)).get(name)
    value = getattr(obj, attr) if attr is not None else None
    return value if isinstance(value, SuiteObject) else None


@dataclass(frozen=True)
class ExtensionUse:
    """One use of an extension, at the path a refusal names."""

    name: str
    path: str


def used_extensions(suite: AgentEvalSuite) -> list[ExtensionUse]:
    """Every extension the suite uses: tasks in order (each in registry order, then its expected
    calls'), then the root."""
    uses: list[ExtensionUse] = []
    for index, task in enumerate(suite.tasks):
        uses += [
            ExtensionUse(ext.name, f"tasks[{index}].{ext.name}")
            for ext in EXTENSIONS
            if "task" in ext.scopes and member(task, ext.name) is not None
        ]
        uses += _call_uses(f"tasks[{index}].expected.trajectory", task)
    uses += [
        ExtensionUse(ext.name, ext.name)
        for ext in EXTENSIONS
        if "suite" in ext.scopes and member(suite, ext.name) is not None
    ]
    return uses


def _call_uses(path: str, task: Task) -> list[ExtensionUse]:
    trajectory = task.expected.trajectory
    if trajectory is None:
        return []
    return [
        ExtensionUse(ext.name, f"{path}.calls[{at}].{ext.name}")
        for at, call in enumerate(trajectory.calls)
        for ext in EXTENSIONS
        if "call" in ext.scopes and member(call, ext.name) is not None
    ]


def check_extensions(suite: AgentEvalSuite, advertised: Collection[str]) -> list[FieldError]:
    """One error per use of an extension not in ``advertised`` (the §G refusal, for wopeval's
    own members): the caller answers ``400 validation_error`` naming each path."""
    return [
        FieldError(use.path, f"{use.name} is not advertised by this host")
        for use in used_extensions(suite)
        if use.name not in advertised
    ]


def extension_rules(suite: AgentEvalSuite) -> list[FieldError]:
    """Every registered extension's cross-field rule violations, in registry order."""
    errors: list[FieldError] = []
    for ext in EXTENSIONS:
        errors += ext.rules(suite)
    return errors


def advertisement(names: Collection[str]) -> dict[str, object]:
    """The discovery value of ``x-wopeval-extensions`` for the extensions ``names``."""
    return {ext.name: dict(ext.advertised) for ext in EXTENSIONS if ext.name in names}
