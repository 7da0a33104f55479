"""Issue 33 §4: each framework adapter converses with a task's scripted user through its
framework's real loop on its own test model, over several turns, keeping the conversation in
the framework's own history type; the final-answer rule is the OpenAI-compatible agent's
(:mod:`wopeval.agents.conversing`); a user miss ends the trial with no further model call."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from tests.agents.apps import conv_script as script
from tests.agents.helpers import fixture
from tests.agents.test_adapters import APPS as SINGLE_TURN_APPS
from tests.agents.test_adapters import _suite as single_turn_suite
from tests.engine.helpers import Ran, make_suite, run_suite
from wopeval.agents.conversing import FINAL_ANSWER_TOOL
from wopeval.engine.registry import Registry
from wopeval.events.store import EventStore
from wopeval.wire.vocab import (
    EVAL_SCORED,
    PROVIDER_USAGE,
    TOOL_CALLED,
    TRIAL_FAILED,
    USER_TURN,
)

APPS = {
    "pydantic-ai": "tests.agents.apps.pyd_conv",
    "openai-agents": "tests.agents.apps.oai_conv",
    "langgraph": "tests.agents.apps.lc_conv",
}
KEY = "x-wopeval-user"


def _task(task_input: str, expected: str, *replies: dict[str, Any], **extra: Any) -> Any:
    return make_suite(
        [
            {
                "taskId": "conversation",
                "input": task_input,
                "expected": {"kind": "golden", "match": {"strategy": "exact", "value": expected}},
                KEY: {"kind": "scripted", "replies": list(replies)},
                **extra,
            }
        ]
    )


async def _run(store: EventStore, framework: str, suite: Any) -> tuple[Ran, ModuleType]:
    app = importlib.import_module(APPS[framework])
    app.MODEL_CALLS.clear()
    app.REAL_CALLS.clear()
    ran = await run_suite(store, suite, agent_id=f"{APPS[framework]}:agent", registry=Registry())
    return ran, app


def _reasons(ran: Ran) -> list[Any]:
    return [e.payload for e in ran.of_type(TRIAL_FAILED)]


@pytest.mark.parametrize("framework", sorted(APPS))
async def test_33_4_adapter_converses_over_several_turns_until_the_user_stops(
    store: EventStore, framework: str
) -> None:
    replies: list[dict[str, Any]] = [
        {"when": {"literal": script.ASK_REFERENCE}, "reply": "ABC123"},
        {"when": {"literal": script.MOVED}, "reply": "No, thanks."},
        {"when": {"literal": script.DONE}, "reply": "Bye", "stop": True},
    ]
    fixtures = {
        "onMiss": "fail",
        "toolResponses": [fixture("lookup_order", {"order_id": "ABC123"}, {"status": "moved"})],
    }
    suite = _task(script.CHANGE, script.DONE, *replies, fixtures=fixtures)
    ran, app = await _run(store, framework, suite)
    assert ran.done.passed, _reasons(ran)
    turns = [(t.payload["turn"], t.payload["kind"], t.payload["message"]) for t in
             ran.of_type(USER_TURN)]  # fmt: skip
    assert turns == [
        (0, "reply", script.ASK_REFERENCE),
        (1, "reply", script.MOVED),
        (2, "stop", script.DONE),
    ]
    called = [(e.payload["toolName"], e.payload["inputs"]) for e in ran.of_type(TOOL_CALLED)]
    assert called == [("lookup_order", {"order_id": "ABC123"})]
    assert app.REAL_CALLS == []  # the fixture answered, never the real tool
    # Four model turns, each metered; the user's stop makes no fifth.
    assert len(app.MODEL_CALLS) == 4
    assert len(ran.of_type(PROVIDER_USAGE)) == 4
    # The framework's own history carries the conversation: each reply follows what it answers.
    second, tools = app.MODEL_CALLS[1]
    assert second == [
        ("user", script.CHANGE),
        ("assistant", script.ASK_REFERENCE),
        ("user", "ABC123"),
    ]
    assert sorted(tools) == sorted(["lookup_order", FINAL_ANSWER_TOOL])
    last, _ = app.MODEL_CALLS[3]
    assert last[-2:] == [("assistant", script.MOVED), ("user", "No, thanks.")]


@pytest.mark.parametrize("framework", sorted(APPS))
async def test_33_4_adapter_final_answer_ends_the_conversation(
    store: EventStore, framework: str
) -> None:
    fixtures = {
        "onMiss": "fail",
        "toolResponses": [fixture("lookup_order", {"order_id": "before-final"}, {"ok": 1})],
    }
    reply = {"when": {"literal": script.ASK_DATE}, "reply": "Friday"}
    suite = _task(script.PICK, "Friday", reply, fixtures=fixtures)
    ran, app = await _run(store, framework, suite)
    assert ran.done.passed, _reasons(ran)
    # The call before the final answer is made; the final answer is no call of the task; the
    # call after it is not made.
    called = [e.payload["inputs"] for e in ran.of_type(TOOL_CALLED)]
    assert called == [{"order_id": "before-final"}]
    assert app.REAL_CALLS == []
    assert [t.payload["kind"] for t in ran.of_type(USER_TURN)] == ["reply"]
    assert len(app.MODEL_CALLS) == 2  # no model call after the final answer


@pytest.mark.parametrize("framework", sorted(APPS))
async def test_33_2_adapter_user_miss_makes_no_further_model_call(
    store: EventStore, framework: str
) -> None:
    suite = _task(script.BIRTH, "x", {"when": {"regex": "booking"}, "reply": "ABC123"})
    ran, app = await _run(store, framework, suite)
    assert len(app.MODEL_CALLS) == 1
    assert [t.payload["kind"] for t in ran.of_type(USER_TURN)] == ["miss"]
    assert [e.payload["scoreLabel"] for e in ran.of_type(EVAL_SCORED)] == ["user-miss"]
    reason = _reasons(ran)[0]
    assert reason["kind"] == "user-miss"
    assert "date of birth" in reason["message"]


@pytest.mark.parametrize("framework", sorted(APPS))
async def test_33_2_adapter_max_turns_makes_no_further_model_call(
    store: EventStore, framework: str
) -> None:
    replies = [
        {"when": {"literal": script.ASK_REFERENCE}, "reply": "ABC123"},
        {"when": {"literal": script.MOVED}, "reply": "No, thanks."},
    ]
    fixtures = {
        "toolResponses": [fixture("lookup_order", {"order_id": "ABC123"}, {"status": "moved"})]
    }
    user = {"kind": "scripted", "maxTurns": 2, "replies": replies}
    suite = make_suite(
        [
            {
                "taskId": "conversation",
                "input": script.CHANGE,
                "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "x"}},
                KEY: user,
                "fixtures": fixtures,
            }
        ]
    )
    ran, app = await _run(store, framework, suite)
    assert [t.payload["kind"] for t in ran.of_type(USER_TURN)] == ["reply", "reply", "max-turns"]
    assert len(app.MODEL_CALLS) == 4  # the fourth turn's message was one too many: no fifth
    assert [e.payload["scoreLabel"] for e in ran.of_type(EVAL_SCORED)] == ["max-turns"]


GOLDEN = Path(__file__).parent.parent / "data" / "agents" / "single_turn_adapter_events.json"
# What differs between two runs of the same trial: ids and times.
_VOLATILE = frozenset({"callId", "invocationId", "latencyMs", "durationMs"})


def _stable(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in sorted(value.items()) if k not in _VOLATILE}
    if isinstance(value, list):
        return [_stable(v) for v in value]
    return value


@pytest.mark.parametrize("framework", sorted(SINGLE_TURN_APPS))
async def test_33_4_single_turn_task_runs_exactly_as_before_conversations(
    store: EventStore, framework: str
) -> None:
    """The plainest task (one task, no user) logs, event for event, what the adapter logged
    before conversations existed (the golden file, recorded then; ids and times aside)."""
    ran = await run_suite(
        store, single_turn_suite("A1"), agent_id=SINGLE_TURN_APPS[framework], registry=Registry()
    )
    events = [[e.type, _stable(e.payload)] for e in ran.events]
    assert events == json.loads(GOLDEN.read_text())[framework]
    assert ran.of_type(USER_TURN) == []
