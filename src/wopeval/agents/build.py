"""Turn an agent definition (or ``--model``/``--agent-cmd``) into a registered agent.

:func:`install_agent` registers the agent under an id and returns that id plus the MCP servers
the definition lists (the caller starts them as live tools, as for ``--mcp``).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from wopeval.agents.adapters import adapt, is_framework_agent
from wopeval.agents.adapters.cassette_client import refuse
from wopeval.agents.cassette import active_cassette
from wopeval.agents.definition import AgentDefinition, parse_definition
from wopeval.agents.openai_compat import OpenAICompatAgent
from wopeval.engine.agent import AgentFn
from wopeval.engine.cmd_agent import CommandAgent
from wopeval.engine.registry import Registry, import_object
from wopeval.errors import UserError, require_extra

_NOT_ID = re.compile(r"[^A-Za-z0-9._~:-]")
_OPENAI_DEFAULT = "https://api.openai.com/v1"  # the openai SDK's own default


@dataclass(frozen=True)
class Installed:
    agent_id: str
    mcp: list[str] = field(default_factory=list)
    agent: object = None


def model_definition(model: str, base_url: str | None, api_key_env: str | None) -> AgentDefinition:
    """The definition ``--model NAME --base-url URL`` stands for."""
    doc: dict[str, object] = {"kind": "openai-compatible", "model": model}
    if base_url is not None:
        doc["baseUrl"] = base_url
    if api_key_env is not None:
        doc["apiKeyEnv"] = api_key_env
    return parse_definition(doc, "--model")


def model_server(definition: AgentDefinition) -> str:
    """Where a model is served: ``scheme://host[:port]`` of its base URL (the SDK's default when
    none is given), never the URL's user, password, path or query, which may hold credentials."""
    url = definition.baseUrl or os.environ.get("OPENAI_BASE_URL") or _OPENAI_DEFAULT
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:  # an IPv6 address keeps its brackets
        host = f"[{host}]"
    try:
        port = parts.port
    except ValueError:
        port = None
    return f"{parts.scheme}://{host}" + (f":{port}" if port is not None else "")


def command_definition(command: str) -> AgentDefinition:
    return parse_definition({"kind": "command", "command": command}, "--agent-cmd")


def agent_id_of(definition: AgentDefinition, target: str | None) -> str:
    """The id the run records: the definition's; for a model, the model's name (runs are named
    by what ran, not by what the suite targets); else the suite's target, else one derived."""
    if definition.agentId is not None:
        return definition.agentId
    if definition.kind == "openai-compatible" and definition.model is not None:
        return _NOT_ID.sub("-", definition.model)[:128]
    if target is not None:
        return target
    return _NOT_ID.sub("-", definition.default_agent_id())[:128]


# A framework kind's package and the extra that installs it (checked before the agent is built).
_FRAMEWORK_EXTRAS = {
    "openai-agents": ("agents", "openai-agents"),
    "pydantic-ai": ("pydantic_ai", "pydantic-ai"),
    "langgraph": ("langgraph", "langchain"),
}


def build_agent(
    definition: AgentDefinition, *, timeout_s: float, max_cost_usd: float | None
) -> AgentFn | object:
    """The agent object a definition describes (not yet wrapped by the engine). A missing
    extra is :class:`~wopeval.errors.ExtraMissing`, naming the ``pip install`` to run."""
    if definition.kind in _FRAMEWORK_EXTRAS:
        module, extra = _FRAMEWORK_EXTRAS[definition.kind]
        require_extra(module, extra, f"a {definition.kind} agent")
    if definition.kind == "openai-compatible":
        return OpenAICompatAgent(definition, timeout_s=timeout_s, max_cost_usd=max_cost_usd)
    ceilings = [c for c in (max_cost_usd, definition.maxCostUsd) if c is not None]
    ceiling = min(ceilings) if ceilings else None
    if definition.kind == "command":
        assert definition.command is not None  # the definition's own rule
        return CommandAgent(
            definition.command,
            declared=definition.tool_specs(),
            price=definition.price,
            max_cost_usd=ceiling,
            must_report=definition.maxCostUsd is not None,
        )
    assert definition.agent is not None
    obj = import_object(definition.agent)
    if not is_framework_agent(obj):
        _refuse_cost(definition)
    adapted: object = adapt(obj, price=definition.price, max_cost_usd=ceiling)
    return adapted


async def preflight(agent: object) -> None:
    """The set-up check before any trial: an OpenAI-compatible agent asks its server about its
    model (:meth:`OpenAICompatAgent.preflight`); other agents have none."""
    if isinstance(agent, OpenAICompatAgent):
        await agent.preflight()


def check_cassette(agent: object) -> None:
    """Under ``--record-model``/``--replay-model``, refuse an agent whose model requests would
    not pass through the cassette: a command agent (its process makes its own), or a framework
    agent its adapter refuses (``check_cassette``). A Python agent's own code is its own."""
    cassette = active_cassette()
    if cassette is None:
        return
    if isinstance(agent, CommandAgent):
        raise refuse(cassette, "a command agent (--agent-cmd, kind command)",
                     "its process talks to its model itself")  # fmt: skip
    check = getattr(agent, "check_cassette", None)
    if callable(check):
        check(cassette)


def _refuse_cost(definition: AgentDefinition) -> None:
    """A wopeval agent (not a framework's) reports its own usage and cost: neither a price nor
    a per-trial ceiling can be applied to it."""
    for name in ("maxCostUsd", "price"):
        if getattr(definition, name) is not None:
            raise UserError(
                f"{name}: {definition.agent} is a wopeval agent, not a framework agent: it "
                f"reports its own cost (Usage.cost_usd), so kind {definition.kind!r} cannot "
                f"apply {name} to it"
            )


def install_agent(
    registry: Registry,
    definition: AgentDefinition,
    *,
    target: str | None,
    timeout_s: float,
    max_cost_usd: float | None,
) -> Installed:
    agent = build_agent(definition, timeout_s=timeout_s, max_cost_usd=max_cost_usd)
    agent_id = agent_id_of(definition, target)
    registry.register_agent(agent_id, agent)  # type: ignore[arg-type]
    for spec in definition.tool_specs() or ():
        registry.tool_specs.setdefault(spec.name, spec)
    return Installed(agent_id, list(definition.mcp), agent)
