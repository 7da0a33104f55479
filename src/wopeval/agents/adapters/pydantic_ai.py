"""pydantic-ai adapter: an ``Agent`` run with its toolsets overridden by a gateway toolset.

The gateway toolset wraps the agent's own toolsets (so the model is offered exactly the tools it
declares, with their schemas), but its ``call_tool`` goes through the trial's gateway instead of
the tool function: fixtures are served, misses fail closed, and the calls are recorded. Argument
text that is not a JSON object reaches the gateway toolset as a marked value instead of a
validation retry, so the attempted call is recorded (marked malformed, never executed) and the
model is answered with an error. The run is stepped through (``agent.iter``): each model
response is one ``provider.usage`` as it arrives (its ``RequestUsage``, priced with the
definition's ``price``), and the cost ceilings are checked before each model request. Needs
``pydantic-ai-slim`` (the ``wopeval[pydantic-ai]`` extra), imported when an adapter is built.

On a task with a simulated user the agent converses (:mod:`wopeval.agents.conversing`): one
run per model turn, the reply as its prompt and the last run's ``all_messages()`` as its
``message_history``; the gateway toolset lists ``final_answer`` as a barrier tool
(``sequential``), and a run in which it was called stops before its next model request.

Under a model cassette the agent's model is overridden by the same OpenAI model over a client
whose HTTP transport is the cassette's (:mod:`~wopeval.agents.adapters.cassette_client`): a model
named ``openai:…`` (``openai-chat:``, ``openai-responses:``) gets a client made from the
environment, an ``OpenAIChatModel`` or ``OpenAIResponsesModel`` object a copy of its own client
(its base URL and key). Any other model is refused before any trial.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from pydantic_ai import Agent, RunContext
from pydantic_ai.tools import ToolDefinition
from pydantic_ai.toolsets import AbstractToolset, CombinedToolset, ToolsetTool, WrapperToolset
from pydantic_core import SchemaValidator, core_schema

from wopeval.agents.adapters.cassette_client import (
    cassette_http,
    environment_base_url,
    openai_client,
    refuse,
)
from wopeval.agents.adapters.common import (
    TrialSpend,
    jsonable_output,
    prompt_of,
    refuse_malformed,
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
from wopeval.agents.openai_compat import InvalidToolArguments, parse_arguments
from wopeval.engine.agent import MALFORMED_ARGUMENTS, AgentContext, ToolSpec

PROVIDER = "pydantic-ai"
OPENAI_PREFIXES = ("openai", "openai-chat", "openai-responses")  # a model named "<prefix>:…"
# What the model is told of its final answer, and of a call after it (it never reads either:
# the run stops before its next request).
ANSWER_TAKEN = "final answer taken"
NOT_MADE = {"error": "not made: the conversation ended with the final answer"}


def _marked(args: Any) -> str | None:
    """The raw text of arguments marked malformed, or None."""
    if isinstance(args, dict) and set(args) == {MALFORMED_ARGUMENTS}:
        text = args[MALFORMED_ARGUMENTS]
        return text if isinstance(text, str) else None
    return None


@dataclass
class _Readable:
    """A tool's own argument validator, except that complete text that is not a JSON object
    comes out marked (``{MALFORMED_ARGUMENTS: text}``) rather than as a validation error."""

    inner: Any

    def validate_json(self, input: str | bytes | bytearray, **kwargs: Any) -> Any:
        partial = kwargs.get("allow_partial", False)
        if partial not in (False, "off"):  # a stream's partial text: the tool's own reading
            return self.inner.validate_json(input, **kwargs)
        text = input if isinstance(input, str) else bytes(input).decode("utf-8", "replace")
        try:
            parse_arguments("", text)
        except InvalidToolArguments:
            return {MALFORMED_ARGUMENTS: text}
        return self.inner.validate_json(input, **kwargs)

    def validate_python(self, input: Any, **kwargs: Any) -> Any:
        return self.inner.validate_python(input, **kwargs)


def _unless_marked(check: Callable[..., Any]) -> Callable[..., Any]:
    """A tool's own ``args_validator_func``, skipped for marked arguments."""

    def checked(ctx: Any, **args: Any) -> Any:
        return None if _marked(args) is not None else check(ctx, **args)

    return checked


@dataclass
class GatewayToolset(WrapperToolset[Any]):
    """The agent's tools, listed as declared, called through the trial's gateway; on a
    conversational task (``final`` set) with :data:`FINAL_ANSWER_TOOL` beside them."""

    ctx: AgentContext | None = None
    final: FinalAnswer | None = None
    _offered: bool = False

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        tools = await super().get_tools(ctx)
        listed = {name: _readable(tool) for name, tool in tools.items()}
        assert self.ctx is not None
        self._offered = self.final is not None and offers_final_answer(self.ctx, listed)
        if self._offered:
            listed[FINAL_ANSWER_TOOL] = self._final_tool()
        return listed

    def _final_tool(self) -> ToolsetTool[Any]:
        # A barrier (``sequential``): the calls before it in a response are made first, those
        # after it start after it, see the answer given and are not made.
        definition = ToolDefinition(
            name=FINAL_ANSWER_TOOL,
            description=FINAL_ANSWER_DESCRIPTION,
            parameters_json_schema=FINAL_ANSWER_PARAMETERS,
            sequential=True,
        )
        validator = SchemaValidator(core_schema.dict_schema())
        return ToolsetTool(
            toolset=self, tool_def=definition, max_retries=1, args_validator=_Readable(validator)
        )

    async def call_tool(self, name: str, tool_args: dict[str, Any], ctx: Any, tool: Any) -> Any:
        assert self.ctx is not None
        if self.final is not None and self._offered:
            if self.final.given:
                return NOT_MADE
            if name == FINAL_ANSWER_TOOL:
                self.final.give(tool_args)
                return ANSWER_TAKEN
        text = _marked(tool_args)
        if text is not None:
            return untrusted(await refuse_malformed(self.ctx, name, text))
        return untrusted(await self.ctx.call_tool(name, tool_args))


def _readable(tool: ToolsetTool[Any]) -> ToolsetTool[Any]:
    check = tool.args_validator_func
    return dataclasses.replace(
        tool,
        args_validator=_Readable(tool.args_validator),
        args_validator_func=_unless_marked(check) if check is not None else None,
    )


class PydanticAIAdapter:
    """A wopeval agent running a pydantic-ai ``Agent``'s own loop."""

    def __init__(
        self,
        agent: Agent[Any, Any],
        *,
        price: Price | None = None,
        max_cost_usd: float | None = None,
    ) -> None:
        self.agent = agent
        self.price = price
        self.max_cost_usd = max_cost_usd
        self.__name__ = self.__qualname__ = f"pydantic-ai:{agent.name or 'agent'}"

    def declared_tools(self) -> list[ToolSpec] | None:
        return None  # tool definitions are per-run in pydantic-ai; the gateway records them

    def check_cassette(self, cassette: Cassette) -> None:
        """Refuse a model cassette unless the agent's model is an OpenAI model (see above)."""
        from pydantic_ai.models.openai import OpenAIChatModel, OpenAIResponsesModel

        model = self.agent.model
        if isinstance(model, str) and model.partition(":")[0] in OPENAI_PREFIXES:
            return
        if type(model) in (OpenAIChatModel, OpenAIResponsesModel):
            return
        shown = repr(model) if isinstance(model, str) or model is None else type(model).__name__
        why = (
            f"its model {shown} is not an OpenAI model wopeval can give a client "
            f"({', '.join(p + ':…' for p in OPENAI_PREFIXES)}, OpenAIChatModel, "
            "OpenAIResponsesModel)"
        )
        raise refuse(cassette, self.__name__, why)

    @asynccontextmanager
    async def _model(self) -> AsyncIterator[dict[str, Any]]:
        """``override``'s model argument: none without a cassette, else the agent's model over
        a client whose transport is the cassette's (checked by :meth:`check_cassette`)."""
        if active_cassette() is None:
            yield {}
            return
        from pydantic_ai.models import infer_model
        from pydantic_ai.providers.openai import OpenAIProvider

        model: Any = self.agent.model
        if isinstance(model, str):
            async with cassette_http(environment_base_url()) as http:

                def provider(_: str) -> Any:
                    return OpenAIProvider(openai_client=openai_client(http))

                yield {"model": infer_model(model, provider_factory=provider)}
            return
        base_url = str(model.client.base_url)
        async with cassette_http(base_url) as http:
            client = model.client.with_options(http_client=http)
            rebuilt = type(model)(
                model.model_name,
                provider=OpenAIProvider(openai_client=client),
                profile=model.profile,
                settings=model.settings,
            )
            yield {"model": rebuilt}

    async def __call__(self, task_input: Any, ctx: AgentContext) -> Any:
        own: AbstractToolset[Any] = CombinedToolset(list(self.agent.toolsets))
        final = FinalAnswer() if converses(ctx) else None
        gateway = GatewayToolset(wrapped=own, ctx=ctx, final=final)
        spend = TrialSpend(ctx, PROVIDER, self.price, self.max_cost_usd)
        async with self._model() as override:
            run = _Runs(self.agent, gateway, spend, override)
            if final is None:
                result = await run(prompt_of(task_input))
                assert result is not None  # no final answer without a user
                return jsonable_output(result.output)
            return await run.converse(ctx, prompt_of(task_input), final)


@dataclass
class _Runs:
    """One trial's runs of the agent: one on a single-turn task, one per model turn with the
    user (``message_history`` carries the conversation: the previous run's ``all_messages``)."""

    agent: Agent[Any, Any]
    gateway: GatewayToolset
    spend: TrialSpend
    override: dict[str, Any]

    async def converse(self, ctx: AgentContext, prompt: str, final: FinalAnswer) -> Any:
        """The conversation (:mod:`wopeval.agents.conversing`): until the user stops or the
        model gives its final answer; a miss or ``maxTurns`` raises out of it."""
        history: list[Any] | None = None
        while True:
            result = await self(prompt, history, final)
            if result is None:
                return final.value
            said = jsonable_output(result.output)
            answered = await user_reply(ctx, said)
            if answered is None:
                return said
            prompt, history = answered.text, result.all_messages()

    async def __call__(
        self, prompt: str, history: list[Any] | None = None, final: FinalAnswer | None = None
    ) -> Any:
        """The agent's run on ``prompt``; ``None`` when it ended with a final answer."""
        with self.agent.override(toolsets=[self.gateway], tools=[], **self.override):
            async with self.agent.iter(prompt, message_history=history) as run:
                async for node in run:
                    if Agent.is_model_request_node(node):
                        if final is not None and final.given:
                            return None  # the final answer ends the run: no model request
                        self.spend.check()
                    elif Agent.is_call_tools_node(node):
                        response = node.model_response
                        usage = response.usage
                        model = response.model_name or "unknown"
                        await self.spend.report(model, usage.input_tokens, usage.output_tokens)
                result = run.result
        assert result is not None  # the run reached its End node
        return result
