"""A command agent for the --agent-cmd tests: an MCP client in another process.

Reads the task input (JSON) on stdin, connects to ``WOPEVAL_MCP_URL`` with the bearer token
``WOPEVAL_MCP_TOKEN``, lists the tools, calls each tool named in ``input["calls"]`` and prints
``{"tools": [...listed names...], "results": [...]}`` (or ``input["answer"]``) on stdout.
With ``input["wrongToken"]`` it tries a wrong token first and records the HTTP status.
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


async def main() -> None:
    task = json.loads(sys.stdin.read())
    task = task if isinstance(task, dict) else {}
    url, token = os.environ["WOPEVAL_MCP_URL"], os.environ["WOPEVAL_MCP_TOKEN"]
    out: dict[str, Any] = {}
    if task.get("wrongToken"):
        answer = httpx.post(url, json={}, headers={"authorization": "Bearer nope"})
        out["wrongTokenStatus"] = answer.status_code
    headers = {"authorization": f"Bearer {token}"}
    async with (
        httpx.AsyncClient(headers=headers) as http,
        streamable_http_client(url, http_client=http) as (read, write, *_),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        listed = await session.list_tools()
        out["tools"] = {t.name: t.input_schema for t in listed.tools}
        results = []
        for call in task.get("calls", []):
            result = await session.call_tool(call["tool"], call.get("args", {}))
            text = [c.text for c in result.content if c.type == "text"]
            results.append({"isError": bool(result.is_error), "text": text})
        out["results"] = results
    if "answer" in task:
        print(json.dumps(task["answer"]))
    else:
        print(json.dumps(out))
    if task.get("exitCode"):
        print("bad things happened", file=sys.stderr)
        sys.exit(task["exitCode"])


asyncio.run(main())
