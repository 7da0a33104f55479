"""The command agent's turn protocol (``engine/cmd_user.py``): the answers of one turn, and the
``POST /user`` route's refusals of a hostile body (no turn taken), in process; the MCP tool
``ask_user`` over the trial's real endpoint."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from wopeval.engine.agent import ToolSpec, conversation_ended
from wopeval.engine.cmd_user import USER_PATH, offers_ask_user, take_turn, user_route


class _Ctx:
    """A conversational trial's context, as far as a turn reads it."""

    def __init__(self, answers: list[Any], tools: list[ToolSpec] | None = None) -> None:
        self.has_user = True
        self.answers = list(answers)
        self.asked: list[Any] = []
        self._tools = tools or []

    def tools(self) -> list[ToolSpec]:
        return self._tools

    async def ask_user(self, message: Any) -> Any:
        self.asked.append(message)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer


async def _app(scope: Any, receive: Any, send: Any) -> None:
    body = b"app"
    await send({"type": "http.response.start", "status": 299, "headers": []})
    await send({"type": "http.response.body", "body": body})


async def test_33_4_a_turn_replies_stops_or_says_the_conversation_is_over() -> None:
    ctx = _Ctx(["ABC123", conversation_ended("stop", "Bye"), conversation_ended("miss", None)])
    assert await take_turn(ctx, "ref?") == {"reply": "ABC123", "stop": False}  # type: ignore[arg-type]
    assert await take_turn(ctx, "else?") == {"reply": "Bye", "stop": True}  # type: ignore[arg-type]
    over = await take_turn(ctx, "dob?")  # type: ignore[arg-type]
    assert over["ended"] == "user-miss"
    assert over["error"].startswith("the conversation is over (user-miss)")
    ended = await take_turn(_Ctx([conversation_ended("max-turns", None)]), "x")  # type: ignore[arg-type]
    assert ended["ended"] == "max-turns"


def test_33_4_ask_user_is_offered_on_conversational_tasks_only() -> None:
    assert offers_ask_user(_Ctx([]), ["crm:lookup"])  # type: ignore[arg-type]
    assert not offers_ask_user(_Ctx([]), ["ask_user"])  # type: ignore[arg-type]
    plain = _Ctx([])
    plain.has_user = False
    assert not offers_ask_user(plain, [])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("method", "body", "status"),
    [
        ("GET", None, 405),
        ("POST", b"not json", 400),
        ("POST", b"[1, 2]", 400),
        ("POST", b'{"msg": "hi"}', 400),
        ("POST", b"x" * 70_000, 413),  # over the body limit
    ],
)
async def test_33_4_the_user_route_refuses_a_hostile_body_and_takes_no_turn(
    method: str, body: bytes | None, status: int
) -> None:
    ctx = _Ctx(["never"])
    transport = httpx.ASGITransport(app=user_route(_app, ctx))  # type: ignore[arg-type]
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        answer = await client.request(method, USER_PATH, content=body)
    assert answer.status_code == status
    assert ctx.asked == []


async def test_33_4_the_user_route_answers_a_turn_and_passes_other_paths_on() -> None:
    ctx = _Ctx([{"date": "Fri"}, conversation_ended("miss", None)])
    transport = httpx.ASGITransport(app=user_route(_app, ctx))  # type: ignore[arg-type]
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        first = await client.post(USER_PATH, json={"message": {"ask": "date"}})
        second = await client.post(USER_PATH, json={"message": "dob?"})
        other = await client.post("/mcp", json={})
    assert (first.status_code, first.json()) == (200, {"reply": {"date": "Fri"}, "stop": False})
    assert second.status_code == 409
    assert second.json()["ended"] == "user-miss"
    assert other.status_code == 299
    assert ctx.asked == [{"ask": "date"}, "dob?"]


@pytest.mark.slow
async def test_33_4_the_endpoints_ask_user_tool_over_a_real_socket() -> None:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    from wopeval.engine.cmd_agent import trial_endpoint

    ctx = _Ctx(["ABC123", conversation_ended("max-turns", None)])
    async with trial_endpoint(ctx) as (url, token):  # type: ignore[arg-type]
        headers = {"authorization": f"Bearer {token}"}
        import httpx2

        async with (
            httpx2.AsyncClient(headers=headers) as http,
            streamable_http_client(url, http_client=http) as (read, write, *_),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            listed = [t.name for t in (await session.list_tools()).tools]
            unsaid = await session.call_tool("ask_user", {})
            replied = await session.call_tool("ask_user", {"message": "ref?"})
            over = await session.call_tool("ask_user", {"message": "again?"})
    assert listed == ["ask_user"]
    assert unsaid.is_error  # no message: no turn taken
    assert replied.structured_content == {"reply": "ABC123", "stop": False}
    assert over.is_error
    assert "the conversation is over (max-turns)" in over.content[0].text  # type: ignore[union-attr]
    assert ctx.asked == ["ref?", "again?"]
