"""A command agent's side of a conversation with the task's simulated user (``x-wopeval-user``).

On a conversational task (``ctx.has_user``) the trial's endpoint (:mod:`wopeval.engine.cmd_agent`)
offers one turn, two ways, with the same answers:

- the MCP tool :data:`ASK_USER_TOOL` (``{"message": …}``; not offered when a task tool already
  has that name): its result is ``{"reply": …, "stop": false}`` as ``structuredContent`` and as
  JSON text; the user's stop is ``{"reply": …, "stop": true}`` (the agent should answer now);
  once the conversation is over on the agent's side (a user miss, ``maxTurns``) every call is an
  error result whose text says the conversation is over;
- ``POST`` ``{"message": …}`` to :data:`USER_ENV` (plain HTTP, for a command that does not speak
  MCP; the same bearer token): ``200`` with the same object, or ``409`` with
  ``{"ended": "user-miss" | "max-turns" | "user-error", "error": …}``; a body that is not such
  an object is ``400`` (``413`` over 64 KiB) and takes no turn.

The agent ends the conversation with its final answer by exiting with it on stdout, as on any
task. Each turn is the trial's ``ctx.ask_user`` (recorded as ``wopeval.user-turn``); after a miss
the trial fails whatever the command prints.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from wopeval.engine.agent import AgentContext, ConversationEnded
from wopeval.engine.cmd_usage import (  # the same limit as /usage
    MAX_BODY,
    Asgi,
    Receive,
    Scope,
    Send,
    read_body,
    respond,
)

__all__ = [
    "ASK_USER_DESCRIPTION",
    "ASK_USER_SCHEMA",
    "ASK_USER_TOOL",
    "USER_ENV",
    "USER_PATH",
    "missing_message",
    "offers_ask_user",
    "take_turn",
    "turn_to_mcp",
    "user_route",
]

ASK_USER_TOOL = "ask_user"
USER_ENV = "WOPEVAL_USER_URL"
USER_PATH = "/user"
ASK_USER_DESCRIPTION = (
    "Say something to the user and get the reply: {reply, stop}. stop true: the user ended the "
    "conversation; give your final answer (print it and exit)."
)
ASK_USER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "message": {"description": "What to say: a text, or JSON for a structured question."}
    },
    "required": ["message"],
}
_LABELS = {"miss": "user-miss", "max-turns": "max-turns", "error": "user-error"}


def offers_ask_user(ctx: AgentContext, tool_names: Iterable[str]) -> bool:
    """The task has a user and no task tool is already named :data:`ASK_USER_TOOL`."""
    return bool(getattr(ctx, "has_user", False)) and ASK_USER_TOOL not in set(tool_names)


async def take_turn(ctx: AgentContext, message: Any) -> dict[str, Any]:
    """One turn: ``{"reply", "stop"}``, or ``{"ended", "error"}`` once the conversation is over
    on the agent's side (the trial fails; no further turn is possible)."""
    try:
        reply = await ctx.ask_user(message)
    except ConversationEnded as ended:
        if ended.how == "stop":
            return {"reply": ended.reply, "stop": True}
        label = _LABELS.get(ended.how, ended.how)
        error = (
            f"the conversation is over ({label}): {ended}; no further turn is possible, "
            "and the trial fails whatever the agent answers"
        )
        return {"ended": label, "error": error}
    return {"reply": reply, "stop": False}


def turn_to_mcp(turn: dict[str, Any]) -> Any:
    """A turn as an MCP ``CallToolResult`` (an error result once the conversation is over)."""
    from mcp_types import CallToolResult, TextContent

    if "ended" in turn:
        return CallToolResult(content=[TextContent(type="text", text=turn["error"])], is_error=True)
    text = json.dumps(turn, ensure_ascii=False)
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=turn)


def missing_message() -> Any:
    """The error result of an ``ask_user`` call without its ``message`` (no turn taken)."""
    from mcp_types import CallToolResult, TextContent

    text = f"{ASK_USER_TOOL} needs its message: {{'message': …}}"
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)


def user_route(app: Asgi, ctx: AgentContext) -> Asgi:
    """``POST /user`` takes one turn; every other request goes to ``app``."""

    async def routed(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path") != USER_PATH:
            await app(scope, receive, send)
            return
        if scope.get("method") != "POST":
            await respond(send, 405, {"error": 'POST {"message": …}'})
            return
        body = await read_body(receive)
        if body is None:
            await respond(send, 413, {"error": f"a turn is at most {MAX_BODY} bytes"})
            return
        try:
            doc = json.loads(body)
        except ValueError:
            doc = None
        if not isinstance(doc, dict) or "message" not in doc:
            await respond(send, 400, {"error": 'the body is a JSON object {"message": …}'})
            return
        turn = await take_turn(ctx, doc["message"])
        await respond(send, 409 if "ended" in turn else 200, turn)

    return routed
