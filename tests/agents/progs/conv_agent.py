"""A command agent that converses (--agent-cmd on a task with ``x-wopeval-user``).

Reads the task input (JSON) on stdin: ``{"say": [message, ...], "via": "mcp" | "http"}``. Lists
the endpoint's tools, then says each message to the user, through the MCP tool ``ask_user`` or
by ``POST`` to ``WOPEVAL_USER_URL``, until the user stops or the conversation is over, and
prints ``{"tools": [...], "userUrl": bool, "turns": [...]}``: each turn the answer it got
(``{"reply", "stop"}``, or ``{"error": text}`` / ``{"status", "body"}`` once it is over).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

import httpx2 as httpx
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client


async def _over_mcp(session: ClientSession, message: Any) -> dict[str, Any]:
    result = await session.call_tool("ask_user", {"message": message})
    text = "".join(c.text for c in result.content if c.type == "text")
    if result.is_error:
        return {"error": text}
    assert result.structured_content == json.loads(text)
    return dict(result.structured_content or {})


async def _over_http(http: httpx.AsyncClient, message: Any) -> dict[str, Any]:
    answer = await http.post(os.environ["WOPEVAL_USER_URL"], json={"message": message})
    if answer.status_code != 200:
        return {"status": answer.status_code, "body": answer.json()}
    return dict(answer.json())


async def main() -> None:
    task = json.loads(sys.stdin.read())
    task = task if isinstance(task, dict) else {}
    url, token = os.environ["WOPEVAL_MCP_URL"], os.environ["WOPEVAL_MCP_TOKEN"]
    out: dict[str, Any] = {"userUrl": "WOPEVAL_USER_URL" in os.environ, "turns": []}
    headers = {"authorization": f"Bearer {token}"}
    async with (
        httpx.AsyncClient(headers=headers) as http,
        streamable_http_client(url, http_client=http) as (read, write, *_),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        out["tools"] = [t.name for t in (await session.list_tools()).tools]
        for message in task.get("say", []):
            if task.get("via") == "http":
                turn = await _over_http(http, message)
            else:
                turn = await _over_mcp(session, message)
            out["turns"].append(turn)
            if turn.get("stop"):
                break
    print(json.dumps(out))


asyncio.run(main())
