"""OpenAI Agents SDK adapter: an ``agents.Agent`` whose function tools go through the gateway.

Per trial the agent is cloned with every ``FunctionTool``'s ``on_invoke_tool`` replaced by a call
to the trial's gateway (the tool's name, schema and description stay what the model is offered),
then run by the SDK's own ``Runner``. Fixtures are served, misses fail closed, the calls are
recorded; the real tool function is never reached through the adapter. Argument text that is not
a JSON object is recorded as the attempted call, marked malformed, and answered with an error.
Usage is one ``provider.usage`` per model response, reported as it arrives (run hooks) and
priced with the definition's ``price``; before each model call the cost ceilings are checked.
Hosted tools and the tools of handoff agents are left as they are. Needs ``openai-agents``
(``wopeval[openai-agents]``).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Awaitable, Callable
from typing import Any

from agents import Agent, FunctionTool, ModelResponse, RunContextWrapper, RunHooks, Runner
from wopeval.agents.adapters.common import (
    TrialSpend,
    call_with_text,
    jsonable_output,
    prompt_of,
    untrusted,
)
from wopeval.agents.definition import Price
from wopeval.engine.agent import AgentContext, ToolSpec

PROVIDER = "openai-agents"


def _through_gateway(ctx: AgentContext, name: str) -> Callable[[Any, str], Awaitable[Any]]:
    async def invoke(_: Any, arguments: str) -> Any:
        result = await call_with_text(ctx, name, arguments)
        return json.dumps(untrusted(result), ensure_ascii=False)

    return invoke


def model_name(agent: Agent[Any]) -> str:
    """The model an agent runs on: its name, or its model object's ``model``."""
    model = agent.model
    if isinstance(model, str):
        return model
    named = getattr(model, "model", None)
    return named if isinstance(named, str) and named else PROVIDER


class _Metered(RunHooks[Any]):
    """Each model response's usage as it arrives; the ceilings before each model call."""

    def __init__(self, spend: TrialSpend) -> None:
        self.spend = spend

    async def on_llm_start(
        self, context: RunContextWrapper[Any], agent: Agent[Any], *_: Any
    ) -> None:
        self.spend.check()

    async def on_llm_end(
        self, context: RunContextWrapper[Any], agent: Agent[Any], response: ModelResponse
    ) -> None:
        usage = response.usage
        await self.spend.report(model_name(agent), usage.input_tokens, usage.output_tokens)


class OpenAIAgentsAdapter:
    """A wopeval agent running an OpenAI Agents SDK ``Agent`` with the SDK's ``Runner``."""

    def __init__(
        self, agent: Agent[Any], *, price: Price | None = None, max_cost_usd: float | None = None
    ) -> None:
        self.agent = agent
        self.price = price
        self.max_cost_usd = max_cost_usd
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
        spend = TrialSpend(ctx, PROVIDER, self.price, self.max_cost_usd)
        hooks = _Metered(spend)
        result = await Runner.run(self._for_trial(ctx), prompt_of(task_input), hooks=hooks)
        return jsonable_output(result.final_output)
