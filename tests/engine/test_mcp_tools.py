"""MCP live tools against a real MCP server subprocess over stdio (no mocks); RFC 0244 §D, §H.

Each test starts its own ``mcp_server_demo.py`` (about a second): the SDK's session lives in
anyio cancel scopes that must be entered and left by one task, which a pytest-asyncio fixture's
separate setup and teardown steps do not guarantee. The server counts every tool call in a file
(``WOPEVAL_MCP_DEMO_COUNTER``), the effect counter that shows a fail-closed miss reached nothing.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.engine.helpers import make_suite, run_suite, scripted_task
from tests.engine.mcp_server_demo import COUNTER_ENV
from wopeval.engine.gateway import TOOL_FAILED
from wopeval.engine.mcp_tools import (
    McpServerFailed,
    McpToolError,
    mcp_live_tools,
    parse_mcp_spec,
    tool_result_json,
)
from wopeval.engine.registry import Registry
from wopeval.events.store import EventStore
from wopeval.wire.events import FIXTURE_MISS_ERROR_CODE, TOOL_RETURNED

DEMO = [sys.executable, str(Path(__file__).with_name("mcp_server_demo.py"))]
DONE = {"kind": "golden", "match": {"strategy": "exact", "value": "done"}}
DEMO_TOOLS = {"lookup-order", "refund", "echo-text", "split-words", "scalar-result"}
DEMO_TOOLS |= {"server-pid", "fail"}


class Demo:
    """Where one demo server records its calls, and the environment that tells it so."""

    def __init__(self, tmp_path: Path) -> None:
        self.counter = tmp_path / "mcp-calls.jsonl"
        self.env = {COUNTER_ENV: str(self.counter)}

    def calls(self) -> list[dict[str, Any]]:
        """``{"tool", "args"}`` per call that reached a tool body; no file means no call."""
        if not self.counter.exists():
            return []
        lines = self.counter.read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines]

    def names(self) -> list[str]:
        return [call["tool"] for call in self.calls()]


# --- mcp_live_tools -------------------------------------------------------------------------


async def test_mcp_live_tools_lists_prefixed_tools_and_returns_plain_json(tmp_path: Path) -> None:
    demo = Demo(tmp_path)
    async with mcp_live_tools(DEMO, env=demo.env, prefix="billing:") as tools:
        assert set(tools) == {"billing:" + name for name in DEMO_TOOLS}
        order = await tools["billing:lookup-order"]({"orderId": "A-1"})
        assert order == {"orderId": "A-1", "status": "delivered", "amountMinor": 4200}
        # one text item: parsed when it is JSON, the string otherwise
        assert await tools["billing:echo-text"]({"text": '{"a": [1, 2]}'}) == {"a": [1, 2]}
        assert await tools["billing:echo-text"]({"text": "hello"}) == "hello"
        # several items: a list, each text item treated the same way
        assert await tools["billing:split-words"]({"text": "one 2 three"}) == ["one", 2, "three"]
        # structuredContent wins over the text content
        assert await tools["billing:scalar-result"]({"value": 7}) == {"structured": 7}
        pid = (await tools["billing:server-pid"](None))["pid"]
        assert demo.names() == [
            "lookup-order",
            "echo-text",
            "echo-text",
            "split-words",
            "scalar-result",
            "server-pid",
        ]
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)  # closing the context stopped (and reaped) the server


async def test_mcp_tool_errors_become_exceptions(tmp_path: Path) -> None:
    demo = Demo(tmp_path)
    async with mcp_live_tools(DEMO, env=demo.env) as tools:
        assert set(tools) == DEMO_TOOLS  # no prefix: the MCP names as they are
        with pytest.raises(McpToolError, match="card declined") as failed:
            await tools["fail"]({"reason": "card declined"})
        assert failed.value.tool == "fail"
        # arguments the tool's input schema rejects are a tool error too (isError, not a crash)
        with pytest.raises(McpToolError, match="amountMinor"):
            await tools["refund"]({"orderId": "A-1"})
        # a non-object never leaves the client
        with pytest.raises(TypeError, match="JSON object"):
            await tools["refund"](["A-1", 4200])
        # the session survives tool errors
        assert await tools["echo-text"]({"text": "still up"}) == "still up"
    # the schema rejection happened before the tool body, the non-object before the wire
    assert demo.calls() == [
        {"tool": "fail", "args": {"reason": "card declined"}},
        {"tool": "echo-text", "args": {"text": "still up"}},
    ]


async def test_mcp_live_tools_missing_executable_raises_before_yielding() -> None:
    with pytest.raises(McpServerFailed, match="no-such-mcp-server' did not start: FileNotFound"):
        async with mcp_live_tools(["/nonexistent/no-such-mcp-server"]):
            pytest.fail("a server that cannot start yields no tools")


async def test_mcp_live_tools_refuses_an_empty_command() -> None:
    with pytest.raises(ValueError, match="executable"):
        async with mcp_live_tools([]):
            pytest.fail("an empty command yields no tools")


# --- through the engine (RFC 0244 §D) -------------------------------------------------------


def _registry(tools: dict[str, Any]) -> Registry:
    registry = Registry()
    for name, tool in tools.items():
        registry.register_tool(name, tool)
    return registry


def _returned(events: list[Any]) -> dict[str, list[dict[str, Any]]]:
    by_tool: dict[str, list[dict[str, Any]]] = {}
    for event in events:
        by_tool.setdefault(event.payload["toolName"], []).append(event.payload)
    return by_tool


# The two runs below use SQLite only: a live MCP tool through a run on PostgreSQL is
# tests/engine/test_mcp_docs.py's [postgres] case, and onMiss on both stores is
# tests/engine/test_fixtures_gateway.py's; the MCP server is what these add.
SQLITE_ONLY = pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)


@SQLITE_ONLY
async def test_0244_D_unfixtured_task_calls_the_mcp_server_and_sees_its_tool_errors(
    store: EventStore, tmp_path: Path
) -> None:
    demo = Demo(tmp_path)
    script = {
        "calls": [
            {"tool": "crm:lookup-order", "args": {"orderId": "A-1"}},
            {"tool": "crm:refund", "args": {"orderId": "A-1", "amountMinor": 4200}},
            {"tool": "crm:fail", "args": {"reason": "card declined"}},
        ],
        "output": "done",
    }
    suite = make_suite([scripted_task("live", script, DONE)], trials={"count": 2})
    async with mcp_live_tools(DEMO, env=demo.env, prefix="crm:") as tools:
        ran = await run_suite(store, suite, registry=_registry(tools))
    # two trials, run concurrently over the one session; the tool error does not stop a script
    assert sorted(demo.names()) == sorted(["lookup-order", "refund", "fail"] * 2)
    returned = _returned(ran.of_type(TOOL_RETURNED))
    assert {r["x-wopeval-fixture"] for rs in returned.values() for r in rs} == {"live"}
    assert [r["outcome"] for r in returned["crm:refund"]] == [
        {"orderId": "A-1", "refundedMinor": 4200}
    ] * 2
    assert [r["error"]["code"] for r in returned["crm:fail"]] == [TOOL_FAILED] * 2
    task = ran.done.tasks[0]
    assert task.passed is True
    assert task.fixtureMissCount is None


def _missing_task(task_id: str, on_miss: str, amount: int) -> dict[str, Any]:
    """A fixtured task whose one call (refund ``amount``) matches no fixture."""
    script = {
        "calls": [{"tool": "crm:refund", "args": {"orderId": task_id, "amountMinor": amount}}],
        "output": "done",
    }
    fixtures = {
        "onMiss": on_miss,
        "toolResponses": [
            {
                "tool": "crm:refund",
                "args": {"amountMinor": 4200},
                "argsMatch": "subset",
                "response": {"refundedMinor": 4200},
            }
        ],
    }
    return scripted_task(task_id, script, DONE, fixtures)


@SQLITE_ONLY
async def test_0244_D_onmiss_fail_miss_never_reaches_the_mcp_server(
    store: EventStore, tmp_path: Path
) -> None:
    demo = Demo(tmp_path)
    # the "live" task is the control: the same miss under onMiss "live" does reach the server
    suite = make_suite([_missing_task("closed", "fail", 111), _missing_task("open", "live", 999)])
    async with mcp_live_tools(DEMO, env=demo.env, prefix="crm:") as tools:
        ran = await run_suite(store, suite, registry=_registry(tools))
    assert demo.calls() == [{"tool": "refund", "args": {"orderId": "open", "amountMinor": 999}}]
    returned = {e.payload["callId"]: e.payload for e in ran.of_type(TOOL_RETURNED)}
    by_fixture = {r["x-wopeval-fixture"]: r for r in returned.values()}
    assert by_fixture["miss-failed"]["error"]["code"] == FIXTURE_MISS_ERROR_CODE
    assert by_fixture["miss-live"]["outcome"] == {"orderId": "open", "refundedMinor": 999}
    closed, opened = ran.done.tasks
    assert (closed.taskId, closed.fixtureMissCount, closed.passed) == ("closed", 1, False)
    assert (opened.taskId, opened.fixtureMissCount, opened.passed) == ("open", 1, True)


# --- pure parts -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "parsed"),
    [
        ("crm:=python3 -m my_server", ("crm:", ["python3", "-m", "my_server"])),
        ("crm:= python3 -m my_server", ("crm:", ["python3", "-m", "my_server"])),
        ("python3 -m my_server --port=0", ("", ["python3", "-m", "my_server", "--port=0"])),
        ("billing.v2:=./srv 'a b'", ("billing.v2:", ["./srv", "a b"])),
        ("=cmd=x y", ("", ["cmd=x", "y"])),
        ("srv", ("", ["srv"])),
    ],
)
def test_parse_mcp_spec(spec: str, parsed: tuple[str, list[str]]) -> None:
    assert parse_mcp_spec(spec) == parsed


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        ("", "no server command"),
        ("crm:=", "no server command"),
        ("crm:=python3 'unclosed", "closing quotation"),
        ("cr*m=python3", "prefix"),
    ],
)
def test_parse_mcp_spec_rejects(spec: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        parse_mcp_spec(spec)


def test_tool_result_json_content_shapes() -> None:
    # imported here: every xdist worker collects this file, and the MCP SDK costs a second
    from mcp.types import CallToolResult, ImageContent, TextContent

    image = ImageContent(type="image", data="aGk=", mime_type="image/png")
    assert tool_result_json("t", CallToolResult(content=[])) is None
    assert tool_result_json("t", CallToolResult(content=[image])) == {
        "type": "image",
        "data": "aGk=",
        "mimeType": "image/png",
    }
    nan = TextContent(type="text", text="NaN")
    assert tool_result_json("t", CallToolResult(content=[nan])) == "NaN"  # not JSON: kept as text
    explicit_null = CallToolResult(content=[nan], structured_content=None)
    assert tool_result_json("t", explicit_null) is None  # present (as null) still wins
    error = CallToolResult(content=[nan, image], is_error=True)
    with pytest.raises(McpToolError, match="NaN"):
        tool_result_json("t", error)
