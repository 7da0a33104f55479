"""The v2 ``AgentEvalSuite`` (RFC 0081 §A) with every RFC 0244 addition, as pydantic models.

Field names are exactly the wire names. Every object is closed (``extra="forbid"``), matching
``additionalProperties: false`` upstream. Cross-field suite rules that are not schema conditionals
(RFC 0244 §A, §B) live in :mod:`wopeval.suite.rules`, not here, so the generated JSON Schema stays
a superset of the upstream schema.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

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
    "ModelClass",
    "SemVer",
    "SuiteId",
    "TaskId",
    "TrajectoryMode",
    "UnitFloat",
]


class Thresholds(Closed):
    passScore: UnitFloat | None = None
    maxCostUsd: Annotated[float, Field(ge=0)] | None = None
    maxP95LatencyMs: Annotated[int, Field(ge=0)] | None = None


class OutputMatch(Closed):
    """RFC 0081 ``golden`` expectation. ``value`` is required but may be any JSON, ``null`` too."""

    strategy: OutputStrategy
    value: Any


class RubricCriterion(Closed):
    criterion: Annotated[str, Field(min_length=1)]
    weight: UnitFloat


class ExpectedCall(Closed):
    """One expected tool call (RFC 0244 §A). ``argsMatch`` absent means ``ignore``."""

    tool: Annotated[str, Field(min_length=1)]
    args: Any = None
    argsMatch: ArgsMatch | None = None

    @property
    def args_match(self) -> ArgsMatch:
        return self.argsMatch or "ignore"


class TrajectoryExpectation(Closed):
    """``expected.trajectory`` (RFC 0244 §A)."""

    match: TrajectoryMode
    calls: list[ExpectedCall]
    forbidden: list[Annotated[str, Field(min_length=1)]] | None = None
    includeDelegates: bool | None = None

    @property
    def forbidden_tools(self) -> frozenset[str]:
        return frozenset(self.forbidden or ())

    @property
    def include_delegates(self) -> bool:
        return bool(self.includeDelegates)


class Expected(Closed):
    kind: Literal["golden", "rubric", "trajectory"]
    match: OutputMatch | None = None
    rubric: Annotated[list[RubricCriterion], Field(min_length=1)] | None = None
    trajectory: TrajectoryExpectation | None = None


class ToolResponse(Closed):
    """A canned tool result (RFC 0081 §A) with RFC 0244 §D ``args``/``argsMatch``."""

    tool: Annotated[str, Field(min_length=1)]
    response: Any = None
    args: Any = None
    argsMatch: ArgsMatch | None = None

    @property
    def args_match(self) -> ArgsMatch:
        return self.argsMatch or "ignore"


class Fixtures(Closed):
    toolResponses: list[ToolResponse] | None = None
    memorySeed: list[dict[str, Any]] | None = None
    onMiss: OnMiss | None = None

    @property
    def fixtured(self) -> bool:
        """Whether calls are served from these fixtures (RFC 0244 §D): ``toolResponses`` or
        ``onMiss`` is given. ``memorySeed`` alone leaves every call to the live tools."""
        return self.toolResponses is not None or self.onMiss is not None


class Task(Closed):
    taskId: TaskId
    input: Any
    expected: Expected
    fixtures: Fixtures | None = None


class Trials(Closed):
    """Suite ``trials`` (RFC 0244 §B). ``count`` absent ⇒ 1, ``k`` ⇒ ``count``, rule ⇒ ``all``."""

    count: Annotated[int, Field(ge=1)] | None = None
    k: Annotated[int, Field(ge=1)] | None = None
    passRule: PassRule | None = None

    @property
    def effective_count(self) -> int:
        return self.count if self.count is not None else 1

    @property
    def effective_k(self) -> int:
        return self.k if self.k is not None else self.effective_count

    @property
    def effective_pass_rule(self) -> PassRule:
        return self.passRule or "all"


class AgentEvalSuite(Closed):
    """The whole suite. Use :func:`wopeval.suite.load_suite` to load one with every rule checked."""

    suiteId: SuiteId
    version: SemVer
    targetAgentId: AgentId | None = None
    modes: Annotated[list[EvalMode], Field(min_length=1)]
    allowedModels: list[ModelClass] | None = None
    thresholds: Thresholds | None = None
    tasks: Annotated[list[Task], Field(min_length=1)]
    trials: Trials | None = None

    @property
    def trial_plan(self) -> Trials:
        return self.trials or Trials()

    def task(self, task_id: str) -> Task:
        for task in self.tasks:
            if task.taskId == task_id:
                return task
        raise KeyError(task_id)
