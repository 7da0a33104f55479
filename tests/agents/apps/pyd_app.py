"""A pydantic-ai agent as a user would write it, on the framework's own FunctionModel."""

from __future__ import annotations

import json
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

REAL_CALLS: list[str] = []


def _model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    returns = [
        part
        for m in messages
        for part in getattr(m, "parts", [])
        if isinstance(part, ToolReturnPart)
    ]
    if not returns:
        assert [t.name for t in info.function_tools] == ["lookup_order"]
        return ModelResponse(parts=[ToolCallPart("lookup_order", {"order_id": "A1"})])
    content: Any = returns[-1].content  # the gateway's answer, marked untrusted (§H)
    return ModelResponse(parts=[TextPart(json.dumps(content.get("data")))])


agent = Agent(FunctionModel(_model), name="support")


@agent.tool_plain
def lookup_order(order_id: str) -> dict[str, str]:
    """Look an order up (the real tool: a fixture must replace it)."""
    REAL_CALLS.append(order_id)
    return {"status": "real"}
