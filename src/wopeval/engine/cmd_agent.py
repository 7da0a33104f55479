"""Any agent, in any language, over MCP: ``wopeval run SUITE --agent-cmd "node my-agent.js"``.

Per trial, :class:`CommandAgent`

1. opens an MCP endpoint (Streamable HTTP, the ``mcp`` SDK's server) on a fresh loopback port
   whose tools are *that trial's gateway*: ``tools/list`` answers the trial's specs
   (``ctx.tools()``), ``tools/call`` goes through ``ctx.call_tool`` — fixtures, fail-closed
   misses and the trajectory hold exactly as for an in-process agent;
2. starts the command with the task input as JSON on stdin and, in its environment,
   ``WOPEVAL_MCP_URL`` (the endpoint) and ``WOPEVAL_MCP_TOKEN`` (a per-trial bearer token; the
   endpoint answers 401 to any request without it);
3. reads the answer from stdout (JSON when it parses, else the text) once the process exits 0;
   a non-zero exit is the trial's ``agent-error`` with the end of its stderr;
4. stops the process and the endpoint with the trial (its timeout and cancellation included).

The process may report its model usage to ``WOPEVAL_USAGE_URL`` (:mod:`wopeval.engine.cmd_usage`).
On a task with a simulated user it converses through the endpoint's ``ask_user`` tool, or
``POST`` to ``WOPEVAL_USER_URL`` (:mod:`wopeval.engine.cmd_user`); its stdout is the final answer.

The command runs in its own session (a new process group): when it exits, or when its trial
ends first, whatever is left of the group (the processes it started, which may hold its stdout)
gets SIGTERM, then SIGKILL after a grace period; nothing it started outlives its trial. A
command that exits without reading its input is not an error (its stdin is simply closed).

Needs the optional ``wopeval[mcp]`` extra (imported when a trial starts).
"""

from __future__ import annotations

import hmac
import json
import math
import os
import secrets
import shlex
import shutil
import signal
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, MutableMapping
from contextlib import asynccontextmanager, contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import Process, TaskGroup

from wopeval.engine.agent import AgentContext, ToolResult, ToolSpec
from wopeval.engine.cmd_usage import USAGE_ENV, USAGE_PATH, CommandSpend, usage_route
from wopeval.engine.cmd_user import (
    ASK_USER_DESCRIPTION,
    ASK_USER_SCHEMA,
    ASK_USER_TOOL,
    USER_ENV,
    USER_PATH,
    missing_message,
    offers_ask_user,
    take_turn,
    turn_to_mcp,
    user_route,
)
from wopeval.errors import InfrastructureError, RunError, UserError, require_extra

if TYPE_CHECKING:
    from wopeval.agents.definition import Price

URL_ENV = "WOPEVAL_MCP_URL"
TOKEN_ENV = "WOPEVAL_MCP_TOKEN"
# The end of stderr a failure keeps: short enough that the reason (at most 300 characters,
# the exit status before it) still ends with the last line, where a traceback's exception is.
_STDERR_TAIL = 200
# How long a process group has between SIGTERM and SIGKILL
GRACE_S = 2.0
Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
Asgi = Callable[[Scope, Receive, Send], Awaitable[None]]


class CommandFailed(RunError):
    """The agent's process exited non-zero (or could not start)."""


class CommandDied(InfrastructureError):
    """The agent's process was killed by a signal it did not ask for (the OOM killer, a node
    drained): the machine failed, not the agent."""


def tool_result_to_mcp(result: ToolResult) -> Any:
    """A gateway answer as an MCP ``CallToolResult`` (an error result for a failed call)."""
    from mcp_types import CallToolResult, TextContent

    if not result.ok:
        text = f"{result.error_code}: {result.error_message}"
        return CallToolResult(content=[TextContent(type="text", text=text)], is_error=True)
    value = result.value
    content = [TextContent(type="text", text=json.dumps(value, ensure_ascii=False))]
    structured = value if isinstance(value, dict) else None
    return CallToolResult(content=content, structured_content=structured)


def gateway_server(ctx: AgentContext) -> Any:
    """A low-level MCP server whose tools are the trial's gateway."""
    from mcp.server.lowlevel import Server
    from mcp_types import ListToolsResult, Tool

    specs = {spec.name: spec for spec in ctx.tools()}
    listed = [_mcp_tool(Tool, spec) for spec in specs.values()]
    converses = offers_ask_user(ctx, specs)
    if converses:  # the user's turns (engine/cmd_user.py), never a call of the task
        ask = ToolSpec(ASK_USER_TOOL, ASK_USER_DESCRIPTION, ASK_USER_SCHEMA)
        listed.append(_mcp_tool(Tool, ask))

    async def list_tools(_: Any, __: Any) -> Any:
        return ListToolsResult(tools=listed)

    async def call_tool(_: Any, params: Any) -> Any:
        arguments = dict(params.arguments or {})
        if converses and params.name == ASK_USER_TOOL:
            if "message" not in arguments:
                return missing_message()
            return turn_to_mcp(await take_turn(ctx, arguments["message"]))
        result = await ctx.call_tool(params.name, arguments)
        return tool_result_to_mcp(result)

    return Server("wopeval-trial", on_list_tools=list_tools, on_call_tool=call_tool)


def _mcp_tool(tool_type: Any, spec: ToolSpec) -> Any:
    return tool_type(
        name=spec.name, description=spec.description or None, input_schema=spec.parameters
    )


def token_guard(app: Asgi, token: str) -> Asgi:
    """Only requests bearing ``token`` reach ``app``; lifespan events pass through."""
    expected = f"Bearer {token}".encode()

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or []).get(b"authorization", b"")
            if not hmac.compare_digest(given, expected):
                body = b'{"error": "this endpoint needs its trial\'s token"}'
                headers = [
                    (b"content-type", b"application/json"),
                    (b"content-length", str(len(body)).encode()),
                ]
                await send({"type": "http.response.start", "status": 401, "headers": headers})
                await send({"type": "http.response.body", "body": body})
                return
        await app(scope, receive, send)

    return guarded


def _quiet_server_type() -> Any:
    import uvicorn

    class QuietServer(uvicorn.Server):
        """A uvicorn server that leaves SIGINT/SIGTERM to the run (Ctrl-C cancels the run)."""

        @contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield

    return QuietServer


@asynccontextmanager
async def trial_endpoint(
    ctx: AgentContext, spend: CommandSpend | None = None
) -> AsyncIterator[tuple[str, str]]:
    """Serve the trial's gateway over MCP on loopback (and ``POST /usage`` to ``spend``);
    yields ``(url, token)``."""
    import uvicorn

    quiet_server = _quiet_server_type()
    token = secrets.token_urlsafe(32)
    app = gateway_server(ctx).streamable_http_app(stateless_http=True, json_response=True)
    if spend is not None:
        app = usage_route(app, spend)
    if getattr(ctx, "has_user", False):
        app = user_route(app, ctx)
    config = uvicorn.Config(
        token_guard(app, token),
        host="127.0.0.1",
        port=0,
        log_level="warning",
        lifespan="on",
        access_log=False,
        timeout_graceful_shutdown=math.ceil(GRACE_S),
    )
    server = quiet_server(config)

    async def serve() -> None:
        # Shielded: a trial that times out stops the server (below), which then closes its
        # socket; cancelled instead, it would leave the socket open.
        with anyio.CancelScope(shield=True):
            await server.serve()

    async with anyio.create_task_group() as group:
        group.start_soon(serve)
        try:
            while not server.started:  # uvicorn offers no event for "listening"  # noqa: ASYNC110
                await anyio.sleep(0.005)
            port = server.servers[0].sockets[0].getsockname()[1]
            yield f"http://127.0.0.1:{port}/mcp", token
        finally:
            server.should_exit = True


class CommandAgent:
    """Start ``command`` once per trial; its tools are the trial's gateway over MCP."""

    def __init__(
        self,
        command: str,
        *,
        declared: list[ToolSpec] | None = None,
        price: Price | None = None,
        max_cost_usd: float | None = None,
        must_report: bool = False,
    ) -> None:
        self.argv = shlex.split(command)
        if not self.argv:
            raise ValueError("--agent-cmd: the command is empty")
        require_extra("mcp", "mcp", "--agent-cmd")  # its tools are served over MCP
        if shutil.which(self.argv[0]) is None:
            raise UserError(f"--agent-cmd: {self.argv[0]!r} is not an executable found on PATH")
        self._declared = declared
        self.price = price
        self.max_cost_usd = max_cost_usd
        self.must_report = must_report
        self.__name__ = self.__qualname__ = f"command:{self.argv[0]}"

    def declared_tools(self) -> list[ToolSpec] | None:
        return self._declared

    async def __call__(self, task_input: Any, ctx: AgentContext) -> Any:
        spend = CommandSpend(ctx, self.price, self.max_cost_usd)
        async with trial_endpoint(ctx, spend) as (url, token):
            usage_url = url.removesuffix("/mcp") + USAGE_PATH
            env = {**os.environ, URL_ENV: url, TOKEN_ENV: token, USAGE_ENV: usage_url}
            if getattr(ctx, "has_user", False):
                env[USER_ENV] = url.removesuffix("/mcp") + USER_PATH
            stdin = json.dumps(task_input).encode("utf-8")
            try:
                process = await anyio.open_process(self.argv, env=env, start_new_session=True)
            except OSError as exc:
                raise CommandFailed(f"cannot start {self.argv[0]!r}: {exc}") from None
            chunks: dict[str, bytes] = {"stdout": b"", "stderr": b""}
            code: int | None = None
            async with anyio.create_task_group() as group:
                spend.on_stop = group.cancel_scope.cancel  # a ceiling passed: the process dies
                code = await _communicate(group, process, stdin, chunks)
        spend.outcome(self.must_report if code == 0 else False)  # stopped by its ceiling
        assert code is not None  # not stopped: the process ended and said how
        if code < 0:
            name = _signal_name(-code)
            raise CommandDied(f"the agent command {self.argv[0]!r} was killed by {name} mid-run")
        if code != 0:
            text = chunks["stderr"].decode("utf-8", "replace").rstrip()
            tail = text if len(text) <= _STDERR_TAIL else "…" + text[-_STDERR_TAIL:]
            raise CommandFailed(f"the agent command exited with status {code}: {tail}")
        return _answer(chunks["stdout"].decode("utf-8", "replace"))


async def _communicate(
    group: TaskGroup, process: Process, stdin: bytes, chunks: dict[str, bytes]
) -> int:
    """Feed stdin, collect stdout/stderr, wait; the process dies if the trial is cancelled."""

    async def drain(name: str, stream: Any) -> None:
        async for chunk in stream:
            chunks[name] += chunk

    async def feed() -> None:
        assert process.stdin is not None
        # A command may exit, or close its stdin, without reading its input.
        with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            async with process.stdin:
                await process.stdin.send(stdin)

    group.start_soon(drain, "stdout", process.stdout)
    group.start_soon(drain, "stderr", process.stderr)
    group.start_soon(feed)
    try:
        # a process that exits (or is killed) before reading its input is judged by how it ended
        code = await process.wait()
    finally:
        with anyio.CancelScope(shield=True):
            await end_group(process)
    return code


async def end_group(process: Process) -> None:
    """End ``process`` and every process left in its group: SIGTERM, then SIGKILL to those
    still there after :data:`GRACE_S`. Returns at once when the group is already empty."""
    pgid = process.pid  # it leads its own session, so its group id is its pid
    if not _signal_group(pgid, signal.SIGTERM):
        await process.wait()
        return
    with anyio.move_on_after(GRACE_S):
        await process.wait()
        while _signal_group(pgid, 0):  # not our children: no event tells  # noqa: ASYNC110
            await anyio.sleep(0.02)
    _signal_group(pgid, signal.SIGKILL)
    await process.wait()


def _signal_group(pgid: int, signum: int) -> bool:
    """Send ``signum`` to process group ``pgid``; False when no process is left in it. A
    zombie (a leftover that exited, not yet reaped by its adoptive parent) counts as gone."""
    try:
        os.killpg(pgid, signum)
    except ProcessLookupError:
        return False
    except PermissionError:  # only zombies and foreign processes are left: nothing of ours
        return False
    return signum != 0 or _live_member(pgid)


def _live_member(pgid: int) -> bool:
    """Some process of group ``pgid`` is not a zombie (``/proc``; True where it is absent)."""
    proc = Path("/proc")
    if not proc.is_dir():
        return True
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[2]) == pgid and fields[0] != "Z":
            return True
    return False


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def _answer(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text.strip()
