"""A tiny MCP server for the MCP live-tool tests, run over stdio as a subprocess.

Run as ``python3 tests/engine/mcp_server_demo.py``. It imports nothing from wopeval, so it needs
no ``PYTHONPATH``; importing this module builds nothing (the SDK's server configures root
logging when constructed, which a test process must not inherit).

MCP tool names keep to SEP-986 (``[A-Za-z0-9._-]``, so no ``:``); the client maps them into a
suite's namespace with a prefix (``billing:`` + ``refund`` = ``billing:refund``).

It is the "conformance tool with an observable counter" RFC 0244 §Falsifiability asks for: every
call that reaches a tool body appends one JSON line ``{"tool": ..., "args": ...}`` to the file
named by the environment variable :data:`COUNTER_ENV`, so a test can prove that an
``onMiss: "fail"`` miss reached no live tool (§D).
"""

from __future__ import annotations

import json
import os
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import CallToolResult, TextContent

COUNTER_ENV = "WOPEVAL_MCP_DEMO_COUNTER"


def _count(tool: str, **args: Any) -> None:
    path = os.environ.get(COUNTER_ENV)
    if path:
        with open(path, "a", encoding="utf-8") as counter:
            counter.write(json.dumps({"tool": tool, "args": args}) + "\n")


def lookup_order(orderId: str) -> dict[str, Any]:
    """Structured output: the order, as ``structuredContent``."""
    _count("lookup-order", orderId=orderId)
    return {"orderId": orderId, "status": "delivered", "amountMinor": 4200}


def refund(orderId: str, amountMinor: int) -> dict[str, Any]:
    """Structured output: the refund that would have been issued."""
    _count("refund", orderId=orderId, amountMinor=amountMinor)
    return {"orderId": orderId, "refundedMinor": amountMinor}


def echo_text(text: str) -> str:
    """Unstructured output: one text item, exactly ``text``."""
    _count("echo-text", text=text)
    return text


def split_words(text: str) -> list[str]:
    """Unstructured output: one text item per word."""
    _count("split-words", text=text)
    return text.split()


def scalar_result(value: int) -> CallToolResult:
    """Structured content that disagrees with the text, to show which one the client prefers."""
    _count("scalar-result", value=value)
    return CallToolResult(
        content=[TextContent(type="text", text=json.dumps({"text": value}))],
        structured_content={"structured": value},
    )


def server_pid() -> dict[str, int]:
    """The server's process id, so a test can check that closing the client stopped it."""
    _count("server-pid")
    return {"pid": os.getpid()}


def fail(reason: str) -> str:
    """Always a tool error: ``isError: true`` with ``reason`` in its text."""
    _count("fail", reason=reason)
    raise ToolError(reason)


def build_server() -> MCPServer[Any]:
    server: MCPServer[Any] = MCPServer("wopeval-demo", log_level="WARNING")
    server.add_tool(lookup_order, name="lookup-order")
    server.add_tool(refund, name="refund")
    server.add_tool(echo_text, name="echo-text", structured_output=False)
    server.add_tool(split_words, name="split-words", structured_output=False)
    server.add_tool(scalar_result, name="scalar-result")
    server.add_tool(server_pid, name="server-pid")
    server.add_tool(fail, name="fail")
    return server


if __name__ == "__main__":
    build_server().run("stdio")
