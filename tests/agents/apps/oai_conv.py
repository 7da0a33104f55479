"""An OpenAI Agents SDK agent that converses, on a fake ``Model`` (offline), driven by
:func:`tests.agents.apps.conv_script.decide`."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

from agents.models.interface import Model
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from agents import Agent, ModelResponse, Usage, function_tool
from tests.agents.apps.conv_script import decide

REAL_CALLS: list[str] = []
# Each model request: (the conversation it saw, the tools it was offered).
MODEL_CALLS: list[tuple[list[tuple[str, Any]], list[str]]] = []


def _text(content: Any) -> Any:
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content


def _history(items: Any) -> list[tuple[str, Any]]:
    """The SDK's own input items (``to_input_list()`` plus the user's reply), read back."""
    if isinstance(items, str):
        return [("user", items)]
    seen: list[tuple[str, Any]] = []
    for item in items:
        kind, role = item.get("type"), item.get("role")
        if kind == "function_call_output":
            seen.append(("tool", item["output"]))
        elif kind == "function_call":
            seen.append(("call", item["name"]))
        elif role in ("user", "assistant"):
            seen.append((role, _text(item.get("content"))))
    return seen


class FakeModel(Model):
    async def get_response(
        self,
        system_instructions: Any,
        input: Any,
        model_settings: Any,
        tools: Any,
        output_schema: Any,
        handoffs: Any,
        tracing: Any,
        **_: Any,
    ) -> ModelResponse:
        history = _history(input)
        MODEL_CALLS.append((history, [t.name for t in tools]))
        usage = Usage(requests=1, input_tokens=30, output_tokens=7, total_tokens=37)
        kind, value = decide(history)
        if kind == "text":
            text = ResponseOutputText(text=value, type="output_text", annotations=[])
            message = ResponseOutputMessage(
                id="m1", content=[text], role="assistant", status="completed", type="message"
            )
            return ModelResponse(output=[message], usage=usage, response_id=None)
        calls = [
            ResponseFunctionToolCall(
                arguments=json.dumps(args),
                call_id=f"c{len(MODEL_CALLS)}-{n}",
                name=name,
                type="function_call",
                id=f"fc{len(MODEL_CALLS)}-{n}",
                status="completed",
            )
            for n, (name, args) in enumerate(value)
        ]
        return ModelResponse(output=list(calls), usage=usage, response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError


@function_tool
def lookup_order(order_id: str) -> dict[str, str]:
    """Look an order up (the real tool: a fixture must replace it)."""
    REAL_CALLS.append(order_id)
    return {"status": "real"}


agent = Agent(name="conversing", instructions="Help.", model=FakeModel(), tools=[lookup_order])
