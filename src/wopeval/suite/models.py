"""The v2 ``AgentEvalSuite`` (RFC 0081 §A) with every RFC 0244 addition, as pydantic models.

Field names are exactly the wire names. Every object is closed (``extra="forbid"``), matching
``additionalProperties: false`` upstream. Cross-field suite rules that are not schema conditionals
(RFC 0244 §A, §B) live in :mod:`wopeval.suite.rules`, not here, so the generated JSON Schema stays
a superset of the upstream schema.

These models are the suite's one validator. :func:`validate_document` reads a parsed JSON or YAML
document with them as JSON Schema reads JSON: strict types (``"5"`` is not a count, ``true`` not
a number), and three types that act in that document's validation context:

- :data:`Omittable`: an optional member is omitted, never ``null`` (the schema has no ``null``);
- :data:`JsonData`: opaque content is any *JSON* value (pydantic's ``Any`` is any object);
- :data:`Integral`: JSON Schema's ``integer`` is any number with a zero fraction (``5.0``).

The closed base and the first and third types live in :mod:`wopeval.suite.fields`, which
wopeval's own ``x-wopeval-`` extension models share (:mod:`wopeval.suite.extensions`).

A model built in code keeps Python's spellings (``None`` for absent, tuples in ``args``).
Non-finite numbers are refused everywhere (``allow_inf_nan=False``): JSON has none.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field

from wopeval.suite.adaptive import ADAPTIVE_KEY, AdaptiveTrials
from wopeval.suite.fields import DOCUMENT, Integral, JsonData, Omittable, SuiteObject
from wopeval.suite.pins import PIN_KEY, TurnPin
from wopeval.suite.user import USER_KEY, ScriptedUser
from wopeval.suite.world import FINAL_STATE_KEY, WORLD_KEY, FinalState, World
from wopeval.wire.vocab import (
    AGENT_ID_PATTERN,
    SEMVER_PATTERN,
    SUITE_ID_PATTERN,
    TASK_ID_PATTERN,
    AgentId,
    Closed,
    EvalMode,
    ModelClass,
    SemVer,
    SuiteId,
    TaskId,
    TrajectoryMode,
    UnitFloat,
)

ArgsMatch = Literal["ignore", "exact", "subset"]
PassRule = Literal["all", "any", "mean"]
OnMiss = Literal["fail", "live"]
OutputStrategy = Literal["exact", "contains", "json-match"]

__all__ = [
    "AGENT_ID_PATTERN",
    "SEMVER_PATTERN",
    "SUITE_ID_PATTERN",
    "TASK_ID_PATTERN",
    "AgentId",
    "Closed",
    "EvalMode",
    "Integral",
    "JsonData",
    "ModelClass",
    "Omittable",
    "SemVer",
    "SuiteId",
    "SuiteObject",
    "TaskId",
    "TrajectoryMode",
    "UnitFloat",
]


class Thresholds(SuiteObject):
    passScore: Omittable[UnitFloat] = None
    maxCostUsd: Omittable[Annotated[float, Field(ge=0)]] = None
    maxP95LatencyMs: Omittable[Annotated[int, Field(ge=0), Integral]] = None


class OutputMatch(SuiteObject):
    """RFC 0081 ``golden`` expectation. ``value`` is required but may be any JSON, ``null`` too."""

    strategy: OutputStrategy
    value: JsonData


class RubricCriterion(SuiteObject):
    criterion: Annotated[str, Field(min_length=1)]
    weight: UnitFloat


class ExpectedCall(SuiteObject):
    """One expected tool call (RFC 0244 §A). ``argsMatch`` absent means ``ignore``;
    ``x-wopeval-pin`` is wopeval's: the agent turn it must be made in (:mod:`wopeval.suite.pins`).
    """

    model_config = ConfigDict(serialize_by_alias=True)

    tool: Annotated[str, Field(min_length=1)]
    args: JsonData = None
    argsMatch: Omittable[ArgsMatch] = None
    # wopeval's own member (:mod:`wopeval.suite.extensions` lists it, with its scope).
    pin: Omittable[TurnPin] = Field(None, alias=PIN_KEY)

    @property
    def args_match(self) -> ArgsMatch:
        return self.argsMatch or "ignore"


class TrajectoryExpectation(SuiteObject):
    """``expected.trajectory`` (RFC 0244 §A)."""

    match: TrajectoryMode
    calls: list[ExpectedCall]
    forbidden: Omittable[list[Annotated[str, Field(min_length=1)]]] = None
    includeDelegates: Omittable[bool] = None

    @property
    def forbidden_tools(self) -> frozenset[str]:
        return frozenset(self.forbidden or ())

    @property
    def include_delegates(self) -> bool:
        return bool(self.includeDelegates)


class Expected(SuiteObject):
    """What a trial is graded against; ``x-wopeval-finalState`` is wopeval's (a world's state)."""

    model_config = ConfigDict(serialize_by_alias=True)

    kind: Literal["golden", "rubric", "trajectory"]
    match: Omittable[OutputMatch] = None
    rubric: Omittable[Annotated[list[RubricCriterion], Field(min_length=1)]] = None
    trajectory: Omittable[TrajectoryExpectation] = None
    final_state: Omittable[FinalState] = Field(None, alias=FINAL_STATE_KEY)


class ToolResponse(SuiteObject):
    """A canned tool result (RFC 0081 §A) with RFC 0244 §D ``args``/``argsMatch``."""

    tool: Annotated[str, Field(min_length=1)]
    response: JsonData = None
    args: JsonData = None
    argsMatch: Omittable[ArgsMatch] = None

    @property
    def args_match(self) -> ArgsMatch:
        return self.argsMatch or "ignore"


class Fixtures(SuiteObject):
    toolResponses: Omittable[list[ToolResponse]] = None
    memorySeed: Omittable[list[dict[str, JsonData]]] = None
    onMiss: Omittable[OnMiss] = None

    @property
    def fixtured(self) -> bool:
        """Whether calls are served from these fixtures (RFC 0244 §D): ``toolResponses`` or
        ``onMiss`` is given. ``memorySeed`` alone leaves every call to the live tools."""
        return self.toolResponses is not None or self.onMiss is not None


class Task(SuiteObject):
    """One task; ``x-wopeval-world`` is wopeval's (its stateful tools, docs/worlds.md)."""

    model_config = ConfigDict(serialize_by_alias=True)

    taskId: TaskId
    input: JsonData
    expected: Expected
    fixtures: Omittable[Fixtures] = None
    # wopeval's own members (:mod:`wopeval.suite.extensions` lists them, with their scopes).
    x_wopeval_adaptive: Omittable[AdaptiveTrials] = Field(None, alias=ADAPTIVE_KEY)
    world: Omittable[World] = Field(None, alias=WORLD_KEY)
    x_wopeval_user: Omittable[ScriptedUser] = Field(None, alias=USER_KEY)


class Trials(SuiteObject):
    """Suite ``trials`` (RFC 0244 §B). ``count`` absent ⇒ 1, ``k`` ⇒ ``count``, rule ⇒ ``all``."""

    count: Omittable[Annotated[int, Field(ge=1), Integral]] = None
    k: Omittable[Annotated[int, Field(ge=1), Integral]] = None
    passRule: Omittable[PassRule] = None

    @property
    def effective_count(self) -> int:
        return self.count if self.count is not None else 1

    @property
    def effective_k(self) -> int:
        return self.k if self.k is not None else self.effective_count

    @property
    def effective_pass_rule(self) -> PassRule:
        return self.passRule or "all"


class AgentEvalSuite(SuiteObject):
    """The whole suite. Use :func:`wopeval.suite.load_suite` to load one with every rule checked."""

    suiteId: SuiteId
    version: SemVer
    targetAgentId: Omittable[AgentId] = None
    modes: Annotated[list[EvalMode], Field(min_length=1)]
    allowedModels: Omittable[list[ModelClass]] = None
    thresholds: Omittable[Thresholds] = None
    tasks: Annotated[list[Task], Field(min_length=1)]
    trials: Omittable[Trials] = None
    # wopeval's own members (:mod:`wopeval.suite.extensions` lists them, with their scopes).
    x_wopeval_adaptive: Omittable[AdaptiveTrials] = Field(None, alias=ADAPTIVE_KEY)

    @property
    def trial_plan(self) -> Trials:
        return self.trials or Trials()

    def task(self, task_id: str) -> Task:
        for task in self.tasks:
            if task.taskId == task_id:
                return task
        raise KeyError(task_id)


def validate_document(data: object) -> AgentEvalSuite:
    """``data``, a parsed JSON or YAML document, as a suite: strict types, no ``null`` for an
    optional member. Raises pydantic's ``ValidationError`` with every shape error."""
    return AgentEvalSuite.model_validate(data, strict=True, context=DOCUMENT)
