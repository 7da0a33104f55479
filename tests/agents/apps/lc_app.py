"""A LangChain v1 agent (``create_agent``, a LangGraph graph) on a fake chat model with tool
calls, as a user would write it (offline)."""

from __future__ import annotations

import json
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool

REAL_CALLS: list[str] = []


class FakeToolCallingModel(BaseChatModel):
    """Calls ``lookup_order`` once, then answers the tool's data."""

    @property
    def _llm_type(self) -> str:
        return "fake-tool-calling"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self

    def _generate(
        self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any
    ) -> ChatResult:
        usage = {"input_tokens": 20, "output_tokens": 4, "total_tokens": 24}
        returned = [m for m in messages if isinstance(m, ToolMessage)]
        if not returned:
            call = {
                "name": "lookup_order",
                "args": {"order_id": "A1"},
                "id": "t1",
                "type": "tool_call",
            }
            message = AIMessage(content="", tool_calls=[call], usage_metadata=usage)
        else:
            data = json.loads(str(returned[-1].content))["data"]  # untrusted (§H)
            message = AIMessage(content=json.dumps(data), usage_metadata=usage)
        return ChatResult(generations=[ChatGeneration(message=message)])


@tool
def lookup_order(order_id: str) -> dict[str, str]:
    """Look an order up (the real tool: a fixture must replace it)."""
    REAL_CALLS.append(order_id)
    return {"status": "real"}


agent = create_agent(FakeToolCallingModel(), tools=[lookup_order])
