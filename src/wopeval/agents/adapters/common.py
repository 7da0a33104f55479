"""What every framework adapter shares: the prompt from the task input, the tool result the
framework's model sees (untrusted data, RFC 0244 §H), the answer as JSON."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from wopeval.engine.agent import ToolResult


def prompt_of(task_input: Any) -> str:
    """The task input as the user prompt: a string as is, anything else as JSON."""
    import json

    return task_input if isinstance(task_input, str) else json.dumps(task_input)


def untrusted(result: ToolResult) -> dict[str, Any]:
    """A gateway answer as the framework's tool return: data marked untrusted (§H)."""
    if result.ok:
        return {"trust": result.trust, "ok": True, "data": result.value}
    error = {"code": result.error_code, "message": result.error_message}
    return {"trust": result.trust, "ok": False, "error": error}


def jsonable_output(output: Any) -> Any:
    """A framework's structured output (a pydantic model) as plain JSON."""
    if isinstance(output, BaseModel):
        return output.model_dump(mode="json")
    return output
