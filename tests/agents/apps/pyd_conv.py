"""A pydantic-ai agent that converses, on the framework's own ``FunctionModel`` (offline),
driven by :func:`tests.agents.apps.conv_script.decide`."""

from __future__ import annotations

import json
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.agents.apps.conv_script import decide

REAL_CALLS: list[str] = []
# Each model request: (the conversation it saw, the tools it was offered).
MODEL_CALLS: list[tuple[list[tuple[str, Any]], list[str]]] = []


def _history(messages: list[ModelMessage]) -> list[tuple[str, Any]]:
    """The framework's own history (``ModelRequest``/``ModelResponse`` parts), read back."""
    seen: list[tuple[str, Any]] = []
    for message in messages:
        for part in message.parts:
            if isinstance(message, ModelRequest) and isinstance(part, UserPromptPart):
                seen.append(("user", part.content))
            elif isinstance(part, ToolReturnPart):
                seen.append(("tool", part.content))
            elif isinstance(part, TextPart):
                seen.append(("assistant", part.content))
            elif isinstance(part, ToolCallPart):
                seen.append(("call", part.tool_name))
    return seen


def _model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    history = _history(messages)
    MODEL_CALLS.append((history, [t.name for t in info.function_tools]))
    kind, value = decide(history)
    if kind == "text":
        return ModelResponse(parts=[TextPart(value)])
    return ModelResponse(parts=[ToolCallPart(name, json.dumps(args)) for name, args in value])


agent = Agent(FunctionModel(_model), name="conversing")


@agent.tool_plain
def lookup_order(order_id: str) -> dict[str, str]:
    """Look an order up (the real tool: a fixture must replace it)."""
    REAL_CALLS.append(order_id)
    return {"status": "real"}
