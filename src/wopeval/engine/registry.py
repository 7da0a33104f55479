"""Resolve agents (by registered id or ``package.module:attr`` import path) and live tools."""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, cast

from wopeval.engine.agent import AgentFn, ToolSpec
from wopeval.engine.gateway import LiveTool
from wopeval.engine.syncagent import as_async_agent
from wopeval.engine.toolspec import model_parameter, spec_of_callable
from wopeval.errors import NotFoundError, extra_hint
from wopeval.suite.models import AGENT_ID_PATTERN

SCRIPTED_AGENT_ID = "core.conformance.agents.scripted"


class AgentNotFound(NotFoundError):
    """The caller named an agent that is neither registered nor importable."""


AGENT_ENTRY_POINTS = "wopeval.agents"
# wopeval's own agents: its ``wopeval.agents`` entry points (a test keeps the two equal), found
# without reading the metadata of every installed distribution (the scripted agent and the
# bundled example are what most runs start with).
BUILTIN_AGENTS: Mapping[str, str] = MappingProxyType({
    SCRIPTED_AGENT_ID: "wopeval.agents.scripted:scripted_agent",
    "wopeval.examples.support": "wopeval.agents.example:support_agent",
})  # fmt: skip


def _builtin_agent(agent_id: str) -> AgentFn | None:
    """One of :data:`BUILTIN_AGENTS`, imported as its entry point would load it."""
    ref = BUILTIN_AGENTS.get(agent_id)
    if ref is None:
        return None
    module_name, _, attr = ref.partition(":")
    return cast(AgentFn, getattr(importlib.import_module(module_name), attr))


@functools.cache
def _entry_point_agents() -> Mapping[str, AgentFn]:
    """Every agent registered under the ``wopeval.agents`` entry-point group, by id; looked up
    once a process, and only for an id that is neither registered on the registry itself nor
    built in (``--agent module:fn`` never needs it): the look-up reads the metadata of every
    installed distribution (5-20 ms, by how many there are)."""
    return MappingProxyType(
        {
            entry.name: cast(AgentFn, entry.load())
            for entry in importlib.metadata.entry_points(group=AGENT_ENTRY_POINTS)
        }
    )


def _own(agent: object) -> bool:
    """wopeval's own agent (the scripted one, the LLM and command agents): trusted code."""
    module = getattr(agent, "__module__", None) or type(agent).__module__
    return module == "wopeval" or module.startswith("wopeval.")


@dataclass
class Registry:
    """Agents and live tools available to a run. Built-ins (:data:`BUILTIN_AGENTS`) and the
    ``wopeval.agents`` entry points are always present; an agent registered here under the same
    id takes their place, and a built-in takes an entry point's."""

    agents: dict[str, AgentFn] = field(default_factory=dict)  # registered here
    live_tools: dict[str, LiveTool] = field(default_factory=dict)
    tool_specs: dict[str, ToolSpec] = field(default_factory=dict)
    # Agents that are not wopeval's own run off the trials' event loop (syncagent.off_loop)
    off_loop: bool = False
    _engine_agents: dict[int, AgentFn] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    _imported: dict[str, AgentFn] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def register_agent(self, agent_id: str, agent: AgentFn) -> None:
        self.agents[agent_id] = agent

    def register_tool(self, name: str, tool: LiveTool, spec: ToolSpec | None = None) -> None:
        """A live tool and its spec (given, the tool's own ``tool_spec``, or its signature).

        A tool whose one parameter is a pydantic model receives the validated model."""
        self.tool_specs[name] = spec or spec_of_callable(name, tool)
        model = model_parameter(tool)
        self.live_tools[name] = _validating(tool, model) if model is not None else tool

    def agent_object(self, ref: str) -> object:
        """The agent object as registered or imported (before the engine wraps it)."""
        return self._find(ref)

    def resolve(self, ref: str) -> AgentFn:
        """An agent by id; ``<scripted-id>.<suffix>`` aliases the scripted agent (delegates).

        The agent is returned as the engine calls it (:func:`wopeval.engine.syncagent.
        as_async_agent`): a plain function runs in a worker thread, so the trial timeout holds.
        """
        agent = self._find(ref)
        engine_agent = self._engine_agents.get(id(agent))  # one wrapper per agent: stable identity
        if engine_agent is None:
            off_loop = self.off_loop and not _own(agent)
            engine_agent = as_async_agent(agent, off_loop=off_loop)
            self._engine_agents[id(agent)] = engine_agent
        return engine_agent

    def knows(self, agent_id: str) -> bool:
        """``agent_id`` is registered (here or as an entry point), or aliases the scripted
        agent; an import path is not known."""
        return (
            agent_id in self.agents
            or agent_id in BUILTIN_AGENTS
            or agent_id.startswith(SCRIPTED_AGENT_ID + ".")
            or agent_id in _entry_point_agents()
        )

    def _find(self, ref: str) -> AgentFn:
        """Registered here, then built in, then an import path ``package.module:attr``
        (``--agent``: no entry-point look-up on the way to its first trial), then the entry
        points (an id that has a colon but imports nothing is looked up there too)."""
        found = self.agents.get(ref) or _builtin_agent(ref)
        if found is not None:
            return found
        if ":" in ref:
            agent = self._imported.get(ref)
            if agent is not None:
                return agent
            try:
                agent = self._imported[ref] = _import_agent(ref)
            except AgentNotFound:
                if ref not in _entry_point_agents():
                    raise
            else:
                return agent
        builtin = _entry_point_agents().get(ref)
        if builtin is not None:
            return builtin
        if ref.startswith(SCRIPTED_AGENT_ID + "."):
            return self._find(SCRIPTED_AGENT_ID)
        raise AgentNotFound(
            f"agent {ref!r} is not registered and is not an import path 'package.module:attr'"
        )

    def tools(self) -> Mapping[str, LiveTool]:
        return self.live_tools


def _search_working_directory() -> None:
    """Put the working directory first on ``sys.path`` as ``python -m`` does, so ``wopeval run
    --agent mypackage.agents:my_agent`` finds ``./mypackage`` from the console script too."""
    cwd = os.getcwd()
    if not any(entry in ("", ".", cwd) for entry in sys.path):
        sys.path.insert(0, cwd)


def import_object(ref: str) -> Any:
    """Import ``package.module:attr`` (the working directory is searched first, as by
    ``python -m``); raises :class:`AgentNotFound` with a clear message."""
    module_name, sep, attr = ref.partition(":")
    if not sep or not module_name or not attr:
        raise AgentNotFound(f"{ref!r} is not an import path 'package.module:attr'")
    _search_working_directory()
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise AgentNotFound(
            f"cannot import module {module_name!r} ({ref!r}): {exc}{extra_hint(exc)}"
        ) from exc
    target = getattr(module, attr, None)
    if target is None:
        raise AgentNotFound(f"module {module_name!r} has no attribute {attr!r}")
    return target


def _validating(tool: LiveTool, model: type[Any]) -> LiveTool:
    async def validated(args: Any) -> Any:
        return await tool(model.model_validate(args or {}))

    validated.__doc__ = tool.__doc__
    validated.__name__ = validated.__qualname__ = getattr(tool, "__name__", "tool")
    return validated


def _import_agent(ref: str) -> AgentFn:
    if not re.fullmatch(AGENT_ID_PATTERN, ref):
        raise AgentNotFound(f"agent reference {ref!r} is not a valid agentId")
    agent = import_object(ref)
    from wopeval.agents.adapters import adapt  # the framework hook: lazily, only for imports

    agent = adapt(agent)
    if not callable(agent):
        raise AgentNotFound(f"{ref!r} is not callable")
    return cast(AgentFn, agent)
