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

Under a model cassette, the run is given a ``RunConfig`` whose model provider is the SDK's own
``OpenAIProvider`` over a client wopeval makes (:mod:`~wopeval.agents.adapters.cassette_client`):
every agent the run can reach must name its model (or leave it to the SDK's default), so the
provider serves it; an agent with a ``Model`` object of its own is refused before any trial. The
provider never uses the Responses websocket (it would bypass the HTTP transport), and the SDK's
tracing is off (its exporter sends to OpenAI's platform, outside the cassette).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Awaitable, Callable
from typing import Any

from agents import (
    Agent,
    FunctionTool,
    ModelResponse,
    OpenAIProvider,
    RunConfig,
    RunContextWrapper,
    RunHooks,
    Runner,
)
from wopeval.agents.adapters.cassette_client import (
    cassette_http,
    environment_base_url,
    openai_client,
    refuse,
)
from wopeval.agents.adapters.common import (
    TrialSpend,
    call_with_text,
    jsonable_output,
    prompt_of,
    untrusted,
)
from wopeval.agents.cassette import Cassette, active_cassette
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

    def check_cassette(self, cassette: Cassette) -> None:
        """Refuse a model cassette unless every agent the run can reach names its model."""
        seen: set[int] = set()
        waiting: list[Any] = [self.agent]
        while waiting:
            agent = waiting.pop()
            if id(agent) in seen:
                continue
            seen.add(id(agent))
            if not isinstance(agent, Agent):  # a Handoff object: its agent is not visible
                why = f"handoff {getattr(agent, 'agent_name', '?')!r} hides its agent's model"
                raise refuse(cassette, self.__name__, why)
            if agent.model is not None and not isinstance(agent.model, str):
                why = (
                    f"agent {agent.name!r} runs on its own {type(agent.model).__name__} object; "
                    "name its model instead (model='…', served from OPENAI_BASE_URL)"
                )
                raise refuse(cassette, self.__name__, why)
            waiting.extend(agent.handoffs)

    async def __call__(self, task_input: Any, ctx: AgentContext) -> Any:
        spend = TrialSpend(ctx, PROVIDER, self.price, self.max_cost_usd)
        hooks = _Metered(spend)
        agent, prompt = self._for_trial(ctx), prompt_of(task_input)
        if active_cassette() is None:
            result = await Runner.run(agent, prompt, hooks=hooks)
            return jsonable_output(result.final_output)
        async with cassette_http(environment_base_url()) as http:
            provider = OpenAIProvider(
                openai_client=openai_client(http), use_responses_websocket=False
            )
            config = RunConfig(model_provider=provider, tracing_disabled=True)
            result = await Runner.run(agent, prompt, hooks=hooks, run_config=config)
        return jsonable_output(result.final_output)
