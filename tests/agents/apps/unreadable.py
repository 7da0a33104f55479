"""Framework agents, as users write them, whose model calls a tool with argument text that is
not a JSON object (offline, each on its framework's own test model or the scripted server), and
looping ones that never stop calling a tool."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

# Each framework is imported by the function that builds its agent: the test modules import this
# one at the top, so every xdist worker collecting them would otherwise import all three
# frameworks (seconds of CPU) whichever tests it runs.
if TYPE_CHECKING:
    from openai import AsyncOpenAI
    from pydantic_ai import Agent as PydanticAgent
    from pydantic_ai import Tool as PydanticTool
    from pydantic_ai.messages import ModelMessage, ToolReturnPart

    from agents import Agent

REAL_CALLS: list[str] = []
IN_TOKENS, OUT_TOKENS = 1000, 100  # every model response's usage


def _refund_all(order_id: str) -> str:
    """Refund every order (the real tool: never reached through wopeval)."""
    REAL_CALLS.append(order_id)
    return "refunded"


def _lookup(order_id: str) -> str:
    """Look an order up (the real tool: never reached through wopeval)."""
    REAL_CALLS.append(order_id)
    return "real"


def _returns(messages: list[ModelMessage]) -> list[ToolReturnPart]:
    from pydantic_ai.messages import ToolReturnPart

    parts = (part for m in messages for part in getattr(m, "parts", []))
    return [part for part in parts if isinstance(part, ToolReturnPart)]


def _pydantic_lookup() -> PydanticTool[None]:
    from pydantic_ai import Tool as PydanticTool

    return PydanticTool(_lookup, name="lookup_order")


def pydantic_agent(arguments: str) -> PydanticAgent[None, str]:
    """Calls ``refund_all`` once with ``arguments`` (raw text), then answers what it was told."""
    from pydantic_ai import Agent as PydanticAgent
    from pydantic_ai import Tool as PydanticTool
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from pydantic_ai.usage import RequestUsage

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        returns = _returns(messages)
        usage = RequestUsage(input_tokens=IN_TOKENS, output_tokens=OUT_TOKENS)
        if not returns:
            return ModelResponse(parts=[ToolCallPart("refund_all", arguments)], usage=usage)
        return ModelResponse(parts=[TextPart(json.dumps(returns[-1].content))], usage=usage)

    tools: list[PydanticTool[None]] = [
        PydanticTool(_refund_all, name="refund_all"),
        _pydantic_lookup(),
    ]
    return PydanticAgent(FunctionModel(model), name="unreadable", tools=tools)


def pydantic_looping() -> PydanticAgent[None, str]:
    """Looks the order up forever."""
    from pydantic_ai import Agent as PydanticAgent
    from pydantic_ai.messages import ModelResponse, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from pydantic_ai.usage import RequestUsage

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        usage = RequestUsage(input_tokens=IN_TOKENS, output_tokens=OUT_TOKENS)
        call = ToolCallPart("lookup_order", {"order_id": "A1"})
        return ModelResponse(parts=[call], usage=usage, model_name="function-loop")

    return PydanticAgent(FunctionModel(model), name="looping", tools=[_pydantic_lookup()])


def sdk_agent(client: AsyncOpenAI) -> Agent[Any]:
    """An Agents SDK agent on the chat-completions server ``client`` talks to."""
    from agents import Agent, OpenAIChatCompletionsModel, Tool, function_tool

    model = OpenAIChatCompletionsModel(model="scripted-model", openai_client=client)
    tools: list[Tool] = [function_tool(_refund_all, name_override="refund_all"),
             function_tool(_lookup, name_override="lookup_order")]  # fmt: skip
    return Agent(name="unreadable", instructions="Help.", model=model, tools=tools)


class ScriptedChat(BaseChatModel):
    """Answers each turn with the next of ``turns`` (AI messages), the last one forever."""

    turns: list[AIMessage]

    @property
    def _llm_type(self) -> str:
        return "scripted-chat"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        done = len([m for m in messages if isinstance(m, AIMessage)])
        turn = self.turns[min(done, len(self.turns) - 1)]
        return ChatResult(generations=[ChatGeneration(message=turn.model_copy())])


def langchain_agent(turns: list[AIMessage]) -> Any:
    from langchain.agents import create_agent
    from langchain_core.tools import StructuredTool

    tools = [StructuredTool.from_function(_refund_all, name="refund_all"),
             StructuredTool.from_function(_lookup, name="lookup_order")]  # fmt: skip
    return create_agent(ScriptedChat(turns=turns), tools=tools)


def lc_usage() -> dict[str, int]:
    return {"input_tokens": IN_TOKENS, "output_tokens": OUT_TOKENS,
            "total_tokens": IN_TOKENS + OUT_TOKENS}  # fmt: skip
