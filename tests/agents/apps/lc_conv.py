"""A LangChain v1 agent (``create_agent``, a LangGraph graph) that converses, on a fake chat
model (offline), driven by :func:`tests.agents.apps.conv_script.decide`. A graph's tools are
fixed when it is built, so it declares wopeval's ``final_answer`` tool itself."""

from __future__ import annotations

from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from pydantic import Field

from tests.agents.apps.conv_script import decide
from wopeval.agents.adapters.langchain import final_answer_tool

REAL_CALLS: list[str] = []
# Each model request: (the conversation it saw, the tools it was offered).
MODEL_CALLS: list[tuple[list[tuple[str, Any]], list[str]]] = []


def _history(messages: list[BaseMessage]) -> list[tuple[str, Any]]:
    """The graph state's own messages, read back."""
    seen: list[tuple[str, Any]] = []
    for message in messages:
        if isinstance(message, HumanMessage):
            seen.append(("user", message.content))
        elif isinstance(message, ToolMessage):
            seen.append(("tool", message.content))
        elif isinstance(message, AIMessage):
            seen.extend(("call", call["name"]) for call in message.tool_calls)
            if message.content:
                seen.append(("assistant", message.content))
    return seen


class FakeConversingModel(BaseChatModel):
    tool_names: list[str] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "fake-conversing"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self.model_copy(update={"tool_names": [t.name for t in tools]})

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        history = _history(messages)
        MODEL_CALLS.append((history, list(self.tool_names)))
        usage = {"input_tokens": 20, "output_tokens": 4, "total_tokens": 24}
        kind, value = decide(history)
        if kind == "text":
            message = AIMessage(content=value, usage_metadata=usage)
        else:
            calls = [
                {"name": name, "args": args, "id": f"t{len(MODEL_CALLS)}-{n}", "type": "tool_call"}
                for n, (name, args) in enumerate(value)
            ]
            message = AIMessage(content="", tool_calls=calls, usage_metadata=usage)
        return ChatResult(generations=[ChatGeneration(message=message)])


@tool
def lookup_order(order_id: str) -> dict[str, str]:
    """Look an order up (the real tool: a fixture must replace it)."""
    REAL_CALLS.append(order_id)
    return {"status": "real"}


agent = create_agent(FakeConversingModel(), tools=[lookup_order, final_answer_tool()])
