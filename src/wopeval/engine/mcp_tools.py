"""Live tools served by an MCP server over stdio (the optional ``wopeval[mcp]`` extra).

:func:`mcp_live_tools` starts the server as a subprocess, lists its tools and yields one
:data:`~wopeval.engine.gateway.LiveTool` per tool, ready for ``Registry.register_tool``. These are
ordinary live tools: the gateway reaches them only for an unfixtured trial, an ``onMiss: "live"``
miss or ``live-shadow`` (RFC 0244 §D); an ``onMiss: "fail"`` miss never does. Their results leave
through the same untrusted wrapper as fixtures (§H).

MCP tool names keep to SEP-986 (``[A-Za-z0-9._-]``, so no ``:``); a ``prefix`` maps them into a
suite's namespace: ``prefix="billing:"`` turns the MCP tool ``refund`` into ``billing:refund``.

Needs ``mcp>=2`` (``MCPServer``, snake_case result fields); the import is deferred so that
``import wopeval`` never pays for it.
"""

from __future__ import annotations

import json
import re
import shlex
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio

from wopeval.engine.agent import PERMISSIVE_SCHEMA, ToolSpec
from wopeval.engine.gateway import LiveTool
from wopeval.engine.outage import cause_of, waiting_on
from wopeval.engine.toolspec import object_schema
from wopeval.errors import InfrastructureError, RunError, UserError, require_extra, unwrap

if TYPE_CHECKING:
    from mcp import ClientSession
    from mcp.types import CallToolResult, ContentBlock, Tool

PREFIX_PATTERN = r"[A-Za-z0-9._~:/-]*"
STARTUP_TIMEOUT_S = 60.0  # a server that has not listed its tools by then is not starting


class McpServerFailed(UserError):
    """An MCP server did not start (not found, exited, or never answered ``initialize``)."""


class McpServerDied(InfrastructureError):
    """An MCP server exited while the run was using it."""


class McpToolError(RunError):
    """An MCP tool answered ``isError: true``; the gateway turns it into ``wopeval.tool_failed``."""

    def __init__(self, tool: str, message: str) -> None:
        super().__init__(f"MCP tool {tool!r} failed" + (f": {message}" if message else ""))
        self.tool = tool
        self.detail = message


def parse_mcp_spec(spec: str) -> tuple[str, list[str]]:
    """Parse a ``--mcp`` value: ``[PREFIX=]COMMAND [ARG ...]``, shell-quoted.

    The value is split with :func:`shlex.split`. If the first word contains ``=``, the text before
    the first ``=`` is the tool-name prefix and the rest of that word (if any) starts the command:
    ``"crm:=python3 -m srv"`` → ``("crm:", ["python3", "-m", "srv"])``; ``"python3 -m srv --x=1"``
    → ``("", [...])``. A command whose first word contains ``=`` is written ``"=cmd=x ..."``.
    Raises :class:`ValueError` naming the problem (bad quoting, bad prefix, no command).
    """
    try:
        words = shlex.split(spec)
    except ValueError as exc:
        raise ValueError(f"--mcp {spec!r}: {exc}") from None
    prefix = ""
    if words and "=" in words[0]:
        prefix, _, first = words[0].partition("=")
        words = [first, *words[1:]] if first else words[1:]
        if not re.fullmatch(PREFIX_PATTERN, prefix):
            raise ValueError(
                f"--mcp {spec!r}: prefix {prefix!r} may only use letters, digits and . _ ~ : / -"
            )
    if not words:
        raise ValueError(
            f"--mcp {spec!r}: no server command; expected '[PREFIX=]COMMAND [ARG ...]'"
        )
    return prefix, words


@asynccontextmanager
async def mcp_live_tools(
    command: Sequence[str],
    *,
    env: Mapping[str, str] | None = None,
    prefix: str = "",
    startup_timeout_s: float = STARTUP_TIMEOUT_S,
) -> AsyncIterator[dict[str, LiveTool]]:
    """Run an MCP server over stdio and yield ``{prefix + tool name: live tool}``.

    ``env`` is merged over the SDK's minimal inherited environment (``HOME``, ``PATH``, …, not the
    whole of ``os.environ``). Closing the context closes the session and stops the server (stdin
    closed, then SIGTERM/SIGKILL after the SDK's grace period). A tool must not be called after
    the context has closed. A server that is not found, exits, fails or has not listed its tools
    within ``startup_timeout_s`` is :class:`McpServerFailed` (set-up: the caller refuses the
    run); without the ``mcp`` package, :class:`~wopeval.errors.ExtraMissing`.
    """
    if not command:
        raise ValueError("an MCP server command needs at least the executable")
    require_extra("mcp", "mcp", "an MCP server")
    from mcp import ClientSession, StdioServerParameters, stdio_client

    server = shlex.join(command)
    params = StdioServerParameters(
        command=command[0], args=list(command[1:]), env=dict(env) if env is not None else None
    )
    # The server's stderr goes to the process's real stderr, whatever sys.stderr is replaced by.
    errlog = sys.__stderr__ if sys.__stderr__ is not None else sys.stderr
    started = False
    try:
        async with (
            stdio_client(params, errlog=errlog) as (read_stream, write_stream),
            ClientSession(read_stream, write_stream) as session,
        ):
            with anyio.fail_after(startup_timeout_s):
                await session.initialize()
                tools = await _list_all_tools(session)
            started = True
            yield {prefix + tool.name: McpLiveTool(session, tool, prefix, server) for tool in tools}
    except Exception as exc:  # an exception group, too: the SDK's task groups wrap its errors
        if started:
            raise
        why = _first_line(exc)
        if cause_of(exc, TimeoutError) is not None:
            why = f"no answer to initialize and tools/list within {startup_timeout_s:g}s"
        raise McpServerFailed(f"the MCP server {server!r} did not start: {why}") from None


async def _list_all_tools(session: ClientSession) -> list[Tool]:
    """Every tool the server offers, following ``nextCursor`` pagination."""
    from mcp.types import PaginatedRequestParams

    listed = await session.list_tools()
    tools = list(listed.tools)
    while listed.next_cursor:
        listed = await session.list_tools(params=PaginatedRequestParams(cursor=listed.next_cursor))
        tools.extend(listed.tools)
    return tools


class McpLiveTool:
    """One MCP tool as a live tool; ``tool_spec`` keeps the server's ``inputSchema``. A call
    after its server has gone raises :class:`McpServerDied` (an infrastructure failure); a
    trial timed out while a call waits on its server failed for infrastructure too."""

    def __init__(self, session: ClientSession, tool: Tool, prefix: str, server: str = "") -> None:
        self._session = session
        self._server = server or tool.name
        self.name = tool.name
        schema = dict(tool.input_schema or {})
        self.tool_spec = ToolSpec(
            prefix + tool.name, tool.description or "", object_schema(schema or PERMISSIVE_SCHEMA)
        )
        self.__name__ = self.__qualname__ = f"mcp:{tool.name}"

    async def __call__(self, args: Any) -> Any:
        if args is not None and not isinstance(args, Mapping):
            raise TypeError(f"MCP tool {self.name!r} takes a JSON object of arguments")
        from mcp import MCPError
        from mcp.types import CONNECTION_CLOSED

        try:
            with waiting_on(f"the MCP server {self._server!r}"):  # a hung server: its timeout
                result = await self._session.call_tool(self.name, arguments=dict(args or {}))
        except MCPError as exc:
            if exc.code != CONNECTION_CLOSED:
                raise
            raise McpServerDied(
                f"the MCP server {self._server!r} exited mid-run (tool {self.name!r}: "
                f"{exc.message})"
            ) from None
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            raise McpServerDied(
                f"the MCP server {self._server!r} exited mid-run (tool {self.name!r}: "
                "its connection is closed)"
            ) from None
        return tool_result_json(self.name, result)


def _first_line(exc: BaseException) -> str:
    """What went wrong, in one line: the innermost single error of task groups, with its type
    when its message alone would not say it."""
    inner = unwrap(exc)
    text = str(inner).strip().splitlines()[0][:300] if str(inner).strip() else ""
    name = type(inner).__name__
    if isinstance(inner, OSError) or not text:
        return f"{name}: {text}" if text else name
    if "closed" in text.lower():
        return f"{text} (it exited before answering; its stderr above says why)"
    return text


def tool_result_json(name: str, result: CallToolResult) -> Any:
    """A ``CallToolResult`` as plain JSON, or :class:`McpToolError` when ``isError`` is set.

    ``structuredContent`` wins when present. Otherwise the ``content`` items: none → ``None``, one
    → that item, several → a list. A text item becomes its string, parsed as JSON when it parses
    (``'{"a": 1}'`` → ``{"a": 1}``, ``"hello"`` → ``"hello"``); any other item (image, audio,
    resource) its wire object.
    """
    if result.is_error:
        raise McpToolError(name, " ".join(_texts(result.content)))
    if result.structured_content is not None or "structured_content" in result.model_fields_set:
        return result.structured_content
    items = [_content_json(block) for block in result.content]
    if not items:
        return None
    return items[0] if len(items) == 1 else items


def _texts(blocks: Sequence[ContentBlock]) -> list[str]:
    return [block.text for block in blocks if block.type == "text"]


def _content_json(block: ContentBlock) -> Any:
    if block.type == "text":
        return _json_or_text(block.text)
    return block.model_dump(mode="json", by_alias=True, exclude_none=True)


def _json_or_text(text: str) -> Any:
    """``text`` parsed as strict JSON (no ``NaN``/``Infinity``), else ``text`` itself."""
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except ValueError:
        return text


def _reject_constant(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")
