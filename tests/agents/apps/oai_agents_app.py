"""An OpenAI Agents SDK agent as a user would write it, on a fake ``Model`` (offline)."""

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

REAL_CALLS: list[str] = []


def _tool_outputs(items: Any) -> list[str]:
    if isinstance(items, str):
        return []
    return [
        i["output"]
        for i in items
        if isinstance(i, dict) and i.get("type") == "function_call_output"
    ]


class FakeModel(Model):
    """Calls ``lookup_order`` once, then answers the tool's data."""

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
        usage = Usage(requests=1, input_tokens=30, output_tokens=7, total_tokens=37)
        outputs = _tool_outputs(input)
        if not outputs:
            assert [t.name for t in tools] == ["lookup_order"]
            call = ResponseFunctionToolCall(
                arguments=json.dumps({"order_id": "A1"}),
                call_id="c1",
                name="lookup_order",
                type="function_call",
                id="fc1",
                status="completed",
            )
            return ModelResponse(output=[call], usage=usage, response_id=None)
        data = json.loads(outputs[-1])["data"]  # the gateway's answer, marked untrusted (§H)
        text = ResponseOutputText(text=json.dumps(data), type="output_text", annotations=[])
        message = ResponseOutputMessage(
            id="m1", content=[text], role="assistant", status="completed", type="message"
        )
        return ModelResponse(output=[message], usage=usage, response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError


@function_tool
def lookup_order(order_id: str) -> dict[str, str]:
    """Look an order up (the real tool: a fixture must replace it)."""
    REAL_CALLS.append(order_id)
    return {"status": "real"}


agent = Agent(name="support", instructions="Help.", model=FakeModel(), tools=[lookup_order])
