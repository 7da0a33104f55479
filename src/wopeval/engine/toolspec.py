"""Tool specs: where a :class:`~wopeval.engine.agent.ToolSpec` comes from, and the pre-run check.

A spec comes from the agent's definition (inline specs), from an MCP server's ``list_tools``
(its ``inputSchema``), from a Python live tool (its one parameter's annotation: a pydantic model,
a ``TypedDict``, …; its docstring is the description), or, for a tool known only from a suite's
fixtures, a permissive object schema. A fixtured tool the agent declares keeps the declared spec;
its *result* still comes from the fixture (the gateway decides that, not the spec).

:func:`undeclared_fixture_tools` finds the tools a suite's fixtures name that an agent with a
fixed tool list does not declare, so a run is refused before any trial (naming the tool) instead
of every trial failing closed.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Protocol, get_type_hints, runtime_checkable

from pydantic import BaseModel, TypeAdapter

from wopeval.engine.agent import ToolSpec
from wopeval.errors import UserError
from wopeval.suite.models import AgentEvalSuite, Task


class UndeclaredTool(UserError):
    """A suite's fixtures name a tool the agent under test does not declare."""


@runtime_checkable
class DeclaresTools(Protocol):
    """An agent with a fixed tool list (a definition file's agent, a framework adapter)."""

    def declared_tools(self) -> list[ToolSpec] | None: ...


def spec_of_callable(name: str, fn: Callable[..., Any]) -> ToolSpec:
    """The spec of a Python live tool ``async def tool(args: Model) -> ...``.

    A ``tool_spec`` attribute wins (MCP tools carry theirs). Otherwise the schema is that of the
    first parameter's annotation when it has one (``BaseModel``, ``TypedDict``, ``dict[str, int]``
    …), else permissive; the description is the docstring's first paragraph.
    """
    own = getattr(fn, "tool_spec", None)
    if isinstance(own, ToolSpec):
        return own
    description = (inspect.getdoc(fn) or "").split("\n\n", 1)[0].strip()
    annotation = _first_parameter_annotation(fn)
    if annotation is None:
        return ToolSpec(name, description)
    return ToolSpec(name, description, object_schema(TypeAdapter(annotation).json_schema()))


def model_parameter(fn: Callable[..., Any]) -> type[BaseModel] | None:
    """The pydantic model a live tool's one parameter is annotated with, if any."""
    annotation = _first_parameter_annotation(fn)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return None


def _first_parameter_annotation(fn: Callable[..., Any]) -> Any:
    try:
        params = list(inspect.signature(fn).parameters.values())
        hints = get_type_hints(fn)
    except (TypeError, ValueError, NameError):
        return None
    if not params:
        return None
    return hints.get(params[0].name)


def object_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` as a function-parameters schema: chat APIs take only ``type: object``."""
    out = dict(schema)
    if out.get("type") != "object":
        return {"type": "object", "properties": {"value": out}, "required": ["value"]}
    return out


def fixture_tool_names(tasks: Iterable[Task]) -> list[str]:
    """Every tool a task's ``fixtures.toolResponses`` names, in first-seen order."""
    names: dict[str, None] = {}
    for task in tasks:
        for entry in (task.fixtures.toolResponses or []) if task.fixtures else []:
            names.setdefault(entry.tool)
    return list(names)


def merge_specs(known: Iterable[ToolSpec], names: Iterable[str]) -> list[ToolSpec]:
    """``known`` specs, then a permissive spec for every other name in ``names``."""
    specs = {spec.name: spec for spec in known}
    for name in names:
        specs.setdefault(name, ToolSpec(name))
    return list(specs.values())


def undeclared_fixture_tools(suite: AgentEvalSuite, agent: object) -> list[tuple[str, str]]:
    """``(field path, tool)`` for each fixture entry (and each world tool) naming a tool the
    agent does not declare."""
    if not isinstance(agent, DeclaresTools):
        return []
    declared = agent.declared_tools()
    if declared is None:  # the agent takes whatever the trial offers
        return []
    names = {spec.name for spec in declared}
    missing: list[tuple[str, str]] = []
    for t, task in enumerate(suite.tasks):
        entries = (task.fixtures.toolResponses or []) if task.fixtures else []
        for i, entry in enumerate(entries):
            if entry.tool not in names:
                missing.append((f"tasks[{t}].fixtures.toolResponses[{i}].tool", entry.tool))
        for tool in task.world.tools if task.world is not None else ():
            if tool not in names:
                missing.append((f"tasks[{t}].x-wopeval-world.tools", tool))
    return missing


def check_declared_tools(suite: AgentEvalSuite, agent: object) -> None:
    """Raise :class:`UndeclaredTool` naming every fixtured tool the agent does not declare."""
    missing = undeclared_fixture_tools(suite, agent)
    if missing:
        lines = [f"{path}: the agent does not declare tool {tool!r}" for path, tool in missing]
        raise UndeclaredTool("\n".join(lines))
