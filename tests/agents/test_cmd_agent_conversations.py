"""Issue 33 §4: ``--agent-cmd`` converses: on a task with ``x-wopeval-user`` the trial's
endpoint offers the MCP tool ``ask_user`` (and ``POST $WOPEVAL_USER_URL``), whose result is the
user's reply, ``stop`` once the user ends it, and an error saying the conversation is over after
a miss or ``maxTurns``; a task without a user sees neither. A real subprocess, a real socket."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from tests.engine.helpers import Ran, make_suite, run_suite
from wopeval.engine.cmd_agent import CommandAgent
from wopeval.engine.registry import Registry
from wopeval.events.store import EventStore
from wopeval.wire.vocab import DECIDED, EVAL_SCORED, TOOL_CALLED, TRIAL_FAILED, USER_TURN

# A subprocess and a loopback endpoint per trial. SQLite only: what the store records of a
# conversation (turns, misses, max-turns) is the engine's, proven on both stores by
# tests/engine/test_user_conversation.py; here the process and its endpoint are the point.
pytestmark = [
    pytest.mark.slow,
    pytest.mark.parametrize("store_url", ["sqlite"], indirect=True),
]

PROG = Path(__file__).parent / "progs" / "conv_agent.py"
AGENT_ID = "core.test.agents.cmd-conversing"
REPLIES: list[dict[str, Any]] = [
    {"when": {"regex": "(?i)booking reference"}, "reply": "ABC123"},
    {"when": {"json": {"ask": "date"}}, "reply": {"date": "2026-12-11"}},
    {"when": {"literal": "Anything else?"}, "reply": "No, thanks.", "stop": True},
]
SAY: list[Any] = ["Your booking reference?", {"ask": "date", "why": "rebooking"}, "Anything else?"]


def _suite(task_input: Any, expected: Any, user: dict[str, Any] | None) -> Any:
    task: dict[str, Any] = {
        "taskId": "cmd-conversation",
        "input": task_input,
        "expected": {"kind": "golden", "match": {"strategy": "exact", "value": expected}},
    }
    if user is not None:
        task["x-wopeval-user"] = user
    return make_suite([task])


async def _run(store: EventStore, suite: Any) -> Ran:
    registry = Registry()
    registry.register_agent(AGENT_ID, CommandAgent(f"{sys.executable} {PROG}"))
    return await run_suite(store, suite, agent_id=AGENT_ID, registry=registry)


def _output(ran: Ran) -> Any:
    (decided,) = ran.of_type(DECIDED)
    return decided.payload["decision"]


@pytest.mark.parametrize("via", ["mcp", "http"])
async def test_33_4_a_command_converses_over_several_turns_until_the_user_stops(
    store: EventStore, via: str
) -> None:
    turns = [
        {"reply": "ABC123", "stop": False},
        {"reply": {"date": "2026-12-11"}, "stop": False},
        {"reply": "No, thanks.", "stop": True},
    ]
    expected = {"userUrl": True, "tools": ["ask_user"], "turns": turns}
    user = {"kind": "scripted", "replies": REPLIES}
    ran = await _run(store, _suite({"say": SAY, "via": via}, expected, user))
    assert _output(ran) == expected
    assert ran.done.passed
    recorded = [(t.payload["turn"], t.payload["kind"], t.payload["message"]) for t in
                ran.of_type(USER_TURN)]  # fmt: skip
    assert recorded == [(0, "reply", SAY[0]), (1, "reply", SAY[1]), (2, "stop", SAY[2])]
    assert ran.of_type(TOOL_CALLED) == []  # a turn is no call of the task


@pytest.mark.parametrize("via", ["mcp", "http"])
async def test_33_2_after_a_commands_user_miss_no_further_turn_is_possible(
    store: EventStore, via: str
) -> None:
    say = ["What's your date of birth?", "Your booking reference?"]
    user = {"kind": "scripted", "replies": REPLIES}
    ran = await _run(store, _suite({"say": say, "via": via}, "x", user))
    assert [t.payload["kind"] for t in ran.of_type(USER_TURN)] == ["miss", "ended"]
    turns = _output(ran)["turns"]
    if via == "mcp":
        assert all("the conversation is over (user-miss)" in t["error"] for t in turns)
    else:
        assert [t["status"] for t in turns] == [409, 409]
        assert [t["body"]["ended"] for t in turns] == ["user-miss", "user-miss"]
    assert [e.payload["scoreLabel"] for e in ran.of_type(EVAL_SCORED)] == ["user-miss"]
    (reason,) = [e.payload for e in ran.of_type(TRIAL_FAILED)]
    assert reason["kind"] == "user-miss"
    assert "date of birth" in reason["message"]


async def test_33_2_a_commands_turn_past_max_turns_says_the_conversation_is_over(
    store: EventStore,
) -> None:
    user = {"kind": "scripted", "maxTurns": 2, "replies": REPLIES[:2]}
    ran = await _run(store, _suite({"say": SAY}, "x", user))
    turns = _output(ran)["turns"]
    assert turns[:2] == [
        {"reply": "ABC123", "stop": False},
        {"reply": {"date": "2026-12-11"}, "stop": False},
    ]
    assert "the conversation is over (max-turns)" in turns[2]["error"]
    assert [e.payload["scoreLabel"] for e in ran.of_type(EVAL_SCORED)] == ["max-turns"]


async def test_33_4_a_plain_task_offers_a_command_no_user(store: EventStore) -> None:
    expected = {"userUrl": False, "tools": [], "turns": []}
    ran = await _run(store, _suite({}, expected, None))
    assert ran.done.passed, [e.payload for e in ran.of_type(TRIAL_FAILED)]
    assert ran.of_type(USER_TURN) == []


async def test_33_4_a_task_tool_named_ask_user_keeps_its_meaning(store: EventStore) -> None:
    """The task's own ``ask_user`` tool is served by its fixture; no user turn is taken."""
    fixture = {"tool": "ask_user", "args": {}, "argsMatch": "subset", "response": {"own": True}}
    task = {
        "taskId": "own-tool",
        "input": {"say": ["Your booking reference?"]},
        "fixtures": {"onMiss": "fail", "toolResponses": [fixture]},
        "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "x"}},
        "x-wopeval-user": {"kind": "scripted", "replies": REPLIES},
    }
    ran = await _run(store, make_suite([task]))
    assert [e.payload["toolName"] for e in ran.of_type(TOOL_CALLED)] == ["ask_user"]
    assert ran.of_type(USER_TURN) == []
    assert _output(ran)["tools"] == ["ask_user"]
