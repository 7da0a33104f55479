"""OpenAI Agents SDK adapter: an ``agents.Agent`` whose function tools go through the gateway.

Per trial the agent is cloned with every ``FunctionTool``'s ``on_invoke_tool`` replaced by a call
to the trial's gateway (the tool's name, schema and description stay what the model is offered),
then run by the SDK's own ``Runner``. Fixtures are served, misses fail closed, the calls are
recorded; the real tool function is never reached through the adapter. Usage is one
``provider.usage`` per model request (the run's ``request_usage_entries``). Hosted tools and the
tools of handoff agents are left as they are. Needs ``openai-agents`` (``wopeval[openai-agents]``).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Awaitable, Callable
from typing import Any

from agents import Agent, FunctionTool, Runner
from wopeval.agents.adapters.common import jsonable_output, prompt_of, untrusted
from wopeval.engine.agent import AgentContext, ToolSpec, Usage

PROVIDER = "openai-agents"


def _through_gateway(ctx: AgentContext, name: str) -> Callable[[Any, str], Awaitable[Any]]:
    async def invoke(_: Any, arguments: str) -> Any:
        try:
            args = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            return json.dumps({"ok": False, "error": f"arguments are not JSON: {arguments[:200]}"})
        return json.dumps(untrusted(await ctx.call_tool(name, args)), ensure_ascii=False)

    return invoke


class OpenAIAgentsAdapter:
    """A wopeval agent running an OpenAI Agents SDK ``Agent`` with the SDK's ``Runner``."""

    def __init__(self, agent: Agent[Any]) -> None:
        self.agent = agent
        self.__name__ = self.__qualname__ = f"openai-agents:{agent.name}"

    def declared_tools(self) -> list[ToolSpec] | None:
        return [
            ToolSpec(tool.name, tool.description or "", dict(tool.params_json_schema))
            for tool in self.agent.tools
            if isinstance(tool, FunctionTool)
        ]

    def _for_trial(self, ctx: AgentContext) -> Agent[Any]:
        tools = [
            dataclasses.replace(tool, on_invoke_tool=_through_gateway(ctx, tool.name))
            if isinstance(tool, FunctionTool)
            else tool
            for tool in self.agent.tools
        ]
        return self.agent.clone(tools=tools)

    async def __call__(self, task_input: Any, ctx: AgentContext) -> Any:
        result = await Runner.run(self._for_trial(ctx), prompt_of(task_input))
        model = self.agent.model if isinstance(self.agent.model, str) else PROVIDER
        usage = result.context_wrapper.usage
        for entry in usage.request_usage_entries:
            await ctx.report_usage(Usage(PROVIDER, model, entry.input_tokens, entry.output_tokens))
        return jsonable_output(result.final_output)
