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

On a task with a simulated user the agent converses (:mod:`wopeval.agents.conversing`): one
``Runner.run`` per model turn, each continuing the last one's ``to_input_list()`` with the
user's reply, on its ``last_agent``; the clone gets the ``final_answer`` tool, and a turn whose
calls gave it ends the run (its own ``tool_use_behavior`` is kept otherwise).

Under a model cassette, the run is given a ``RunConfig`` whose model provider is the SDK's own
``OpenAIProvider`` over a client wopeval makes (:mod:`~wopeval.agents.adapters.cassette_client`):
every agent the run can reach must name its model (or leave it to the SDK's default), so the
provider serves it; an agent with a ``Model`` object of its own is refused before any trial. The
provider never uses the Responses websocket (it would bypass the HTTP transport), and the SDK's
tracing is off (its exporter sends to OpenAI's platform, outside the cassette).
"""

from __future__ import annotations

import dataclasses
import inspect
import json
from collections.abc import Awaitable, Callable
from typing import Any, cast

from agents import (
    Agent,
    FunctionTool,
    FunctionToolResult,
    ModelResponse,
    OpenAIProvider,
    RunConfig,
    RunContextWrapper,
    RunHooks,
    Runner,
    ToolsToFinalOutputFunction,
    ToolsToFinalOutputResult,
    TResponseInputItem,
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
from wopeval.agents.conversing import (
    FINAL_ANSWER_DESCRIPTION,
    FINAL_ANSWER_PARAMETERS,
    FINAL_ANSWER_TOOL,
    FinalAnswer,
    converses,
    offers_final_answer,
    user_reply,
)
from wopeval.agents.definition import Price
from wopeval.engine.agent import AgentContext, ToolSpec

PROVIDER = "openai-agents"
# What the model is told of its final answer, and of a call after it (it never reads either:
# the run ends with the final answer).
ANSWER_TAKEN = "final answer taken"
NOT_MADE = '{"error": "not made: the conversation ended with the final answer"}'


def _through_gateway(
    ctx: AgentContext, name: str, final: FinalAnswer | None = None
) -> Callable[[Any, str], Awaitable[Any]]:
    async def invoke(_: Any, arguments: str) -> Any:
        if final is not None and final.given:  # after the final answer: not made
            return NOT_MADE
        result = await call_with_text(ctx, name, arguments)
        return json.dumps(untrusted(result), ensure_ascii=False)

    return invoke


def _final_answer_tool(final: FinalAnswer) -> FunctionTool:
    """:data:`FINAL_ANSWER_TOOL` as an SDK tool: its call takes the answer (never a task call)."""

    async def invoke(_: Any, arguments: str) -> Any:
        try:
            args = json.loads(arguments or "{}")
        except ValueError:
            args = {}
        final.give(args)
        return ANSWER_TAKEN

    return FunctionTool(
        name=FINAL_ANSWER_TOOL,
        description=FINAL_ANSWER_DESCRIPTION,
        params_json_schema=FINAL_ANSWER_PARAMETERS,
        on_invoke_tool=invoke,
        strict_json_schema=False,
    )


def _stopping(behavior: Any, final: FinalAnswer) -> ToolsToFinalOutputFunction[Any]:
    """The agent's ``tool_use_behavior``, except that a turn whose calls gave the final answer
    ends the run (with it); the SDK's four documented behaviours are kept otherwise."""

    async def decide(
        context: RunContextWrapper[Any], results: list[FunctionToolResult]
    ) -> ToolsToFinalOutputResult:
        if final.given:
            return ToolsToFinalOutputResult(is_final_output=True, final_output=final.value)
        if not results or behavior == "run_llm_again":
            return ToolsToFinalOutputResult(is_final_output=False)
        if behavior == "stop_on_first_tool":
            return ToolsToFinalOutputResult(is_final_output=True, final_output=results[0].output)
        if isinstance(behavior, dict):
            names = behavior.get("stop_at_tool_names", [])
            for result in results:
                if result.tool.name in names:
                    return ToolsToFinalOutputResult(
                        is_final_output=True, final_output=result.output
                    )
            return ToolsToFinalOutputResult(is_final_output=False)
        decided = behavior(context, results)
        return cast(
            ToolsToFinalOutputResult, await decided if inspect.isawaitable(decided) else decided
        )

    return decide


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

    def _for_trial(self, ctx: AgentContext, final: FinalAnswer | None = None) -> Agent[Any]:
        tools = [
            dataclasses.replace(tool, on_invoke_tool=_through_gateway(ctx, tool.name, final))
            if isinstance(tool, FunctionTool)
            else tool
            for tool in self.agent.tools
        ]
        if final is None or not offers_final_answer(ctx, (t.name for t in tools)):
            return self.agent.clone(tools=tools)
        behavior = _stopping(self.agent.tool_use_behavior, final)
        return self.agent.clone(
            tools=[*tools, _final_answer_tool(final)], tool_use_behavior=behavior
        )

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
        if active_cassette() is None:
            return await self._run(task_input, ctx, {})
        async with cassette_http(environment_base_url()) as http:
            provider = OpenAIProvider(
                openai_client=openai_client(http), use_responses_websocket=False
            )
            config = RunConfig(model_provider=provider, tracing_disabled=True)
            return await self._run(task_input, ctx, {"run_config": config})

    async def _run(self, task_input: Any, ctx: AgentContext, options: dict[str, Any]) -> Any:
        """One ``Runner.run`` on a single-turn task; on a conversational one, one per model turn
        with the user, each continuing the last's ``to_input_list()`` with the user's reply
        (:mod:`wopeval.agents.conversing`)."""
        spend = TrialSpend(ctx, PROVIDER, self.price, self.max_cost_usd)
        options = {**options, "hooks": _Metered(spend)}
        final = FinalAnswer() if converses(ctx) else None
        agent, prompt = self._for_trial(ctx, final), prompt_of(task_input)
        result = await Runner.run(agent, prompt, **options)
        if final is None:
            return jsonable_output(result.final_output)
        while not final.given:
            said = jsonable_output(result.final_output)
            answered = await user_reply(ctx, said)
            if answered is None:
                return said
            reply: TResponseInputItem = {"role": "user", "content": answered.text}
            history = [*result.to_input_list(), reply]
            result = await Runner.run(result.last_agent, history, **options)
        return final.value
