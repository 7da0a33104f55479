"""pydantic-ai adapter: an ``Agent`` run with its toolsets overridden by a gateway toolset.

The gateway toolset wraps the agent's own toolsets (so the model is offered exactly the tools it
declares, with their schemas), but its ``call_tool`` goes through the trial's gateway instead of
the tool function: fixtures are served, misses fail closed, and the calls are recorded. Usage is
one ``provider.usage`` per model response (its ``RequestUsage``). Needs ``pydantic-ai-slim``
(the ``wopeval[pydantic-ai]`` extra), imported when an adapter is built.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.messages import ModelResponse
from pydantic_ai.toolsets import AbstractToolset, CombinedToolset, WrapperToolset

from wopeval.agents.adapters.common import jsonable_output, prompt_of, untrusted
from wopeval.engine.agent import AgentContext, ToolSpec, Usage

PROVIDER = "pydantic-ai"


@dataclass
class GatewayToolset(WrapperToolset[Any]):
    """The agent's tools, listed as declared, called through the trial's gateway."""

    ctx: AgentContext | None = None

    async def call_tool(self, name: str, tool_args: dict[str, Any], ctx: Any, tool: Any) -> Any:
        assert self.ctx is not None
        return untrusted(await self.ctx.call_tool(name, tool_args))


class PydanticAIAdapter:
    """A wopeval agent running a pydantic-ai ``Agent``'s own loop."""

    def __init__(self, agent: Agent[Any, Any]) -> None:
        self.agent = agent
        self.__name__ = self.__qualname__ = f"pydantic-ai:{agent.name or 'agent'}"

    def declared_tools(self) -> list[ToolSpec] | None:
        return None  # tool definitions are per-run in pydantic-ai; the gateway records them

    async def __call__(self, task_input: Any, ctx: AgentContext) -> Any:
        own: AbstractToolset[Any] = CombinedToolset(list(self.agent.toolsets))
        gateway = GatewayToolset(wrapped=own, ctx=ctx)
        with self.agent.override(toolsets=[gateway], tools=[]):
            result = await self.agent.run(prompt_of(task_input))
        for message in result.all_messages():
            if isinstance(message, ModelResponse):
                usage = message.usage
                model = message.model_name or "unknown"
                await ctx.report_usage(
                    Usage(PROVIDER, model, usage.input_tokens, usage.output_tokens)
                )
        return jsonable_output(result.output)
