"""An MCP server over stdio that fails as servers do, for the outage tests.

``python3 dying_mcp_server.py`` serves ``lookup``, which kills the server (exit 3) when called: a
server that dies mid-run; and ``stall``, which never answers: a server that hangs.
``--exit-at-start`` exits before answering ``initialize``: a server that cannot start;
``--hang-at-start`` never answers it. Imports nothing from wopeval.
"""

from __future__ import annotations

import os
import sys
import time


def lookup(orderId: str) -> dict[str, str]:
    """Look an order up: the server dies instead."""
    sys.stderr.write("dying_mcp_server: exiting mid-call\n")
    os._exit(3)


def stall(orderId: str) -> dict[str, str]:
    """Look an order up: the server hangs instead, alive but never answering."""
    time.sleep(3600)
    return {"orderId": orderId}


if __name__ == "__main__":
    if "--exit-at-start" in sys.argv:
        sys.stderr.write("dying_mcp_server: cannot start (no database)\n")
        sys.exit(1)
    if "--hang-at-start" in sys.argv:
        sys.stdin.read()  # never answers; ends when its client closes stdin
        sys.exit(0)
    # imported only by a server that starts: the two that do not are quick to fail
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("dying")
    server.tool(name="lookup")(lookup)
    server.tool(name="stall")(stall)
    server.run()
