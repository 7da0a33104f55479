"""The LLM user (``x-wopeval-user``, ``kind: "llm"``) and the OpenAI-compatible agent converse
through the real ``openai`` SDK against the scripted server on a loopback socket: several
turns, the user's stop; each user-side failure (HTTP 500, a malformed reply, a reply that is
not a text, a huge one, too many turns) ends the trial ``user-error`` with its cause, counted
apart from the agent's; the user's calls count towards the run's cost, never towards the
agent's efficiency; a re-grade reproduces the stored summary."""

from __future__ import annotations

import time
from typing import Any, cast

import pytest

from tests.agents.helpers import fixture
from tests.agents.llm_user_helpers import (
    USER_MODEL,
    TwoModels,
    llm_user,
    run_with_user,
    server_of,
    user_suite,
)
from wopeval.agents.scripted_openai import HttpError, Reply, call
from wopeval.agents.toolnames import ToolNames
from wopeval.engine.judge import SIMULATED_USER_NODE, judge_spend
from wopeval.engine.registry import Registry
from wopeval.events.store import EventStore
from wopeval.service.runs import RunService
from wopeval.suite import parse_suite
from wopeval.wire.events import ProviderUsage
from wopeval.wire.vocab import (
    EVAL_SCORED,
    PROVIDER_USAGE,
    TOOL_CALLED,
    TRIAL_FAILED,
    USER_TURN,
)

pytestmark = pytest.mark.slow  # a loopback server per test

LOOKUP = "crm:lookup-booking"
API = ToolNames([LOOKUP]).api(LOOKUP)
DONE = "Done: ABC123 moved to Friday."
AGENT_PRICE = {"inputPerMTok": 1000.0, "outputPerMTok": 2000.0}  # 10 in, 5 out: $0.02 a call
USER_PRICE = {"inputPerMTok": 100.0, "outputPerMTok": 200.0}  # 10 in, 5 out: $0.002 a call


def _turns(ran: Any) -> list[tuple[int, str]]:
    return [(e.payload["turn"], e.payload["kind"]) for e in ran.of_type(USER_TURN)]


def _reason(ran: Any) -> dict[str, Any]:
    (reason,) = [e.payload for e in ran.of_type(TRIAL_FAILED)]
    return cast(dict[str, Any], reason)


async def test_33_2_llm_user_and_openai_agent_converse_over_several_turns(
    store: EventStore,
) -> None:
    models = TwoModels(
        agent=[
            Reply(content="What is your booking reference?"),
            Reply(tool_calls=(call(API, {"ref": "ABC123"}),)),
            Reply(content="Found it. Which day?"),
            Reply(content=DONE),
        ],
        user=[
            Reply(content="ABC123"),
            Reply(content="Friday, please."),
            Reply(content="Great, thanks! ###STOP###"),
        ],
    )
    fixtures = {"toolResponses": [fixture(LOOKUP, {"ref": "ABC123"}, {"ok": True})]}
    with server_of(models) as server:
        user = llm_user(server.base_url, price=USER_PRICE)
        suite = user_suite(user, DONE, fixtures=fixtures)
        ran = await run_with_user(store, server, suite, agent={"price": AGENT_PRICE})
    assert ran.done.passed
    assert _turns(ran) == [(0, "reply"), (1, "reply"), (2, "stop")]
    assert [e.payload["toolName"] for e in ran.of_type(TOOL_CALLED)] == [LOOKUP]
    # The agent saw each of the user's replies as its next "user" message.
    last = [(m["role"], m.get("content")) for m in models.agent_bodies[-1]["messages"][3:]]
    assert ("user", "ABC123") in last
    assert ("user", "Friday, please.") in last
    # The user's model saw its persona, its plan and its facts, and the agent's messages.
    system = models.user_bodies[0]["messages"][0]["content"]
    assert "A traveller in a hurry." in system
    assert "Your booking reference is ABC123." in system
    said = [m["content"] for m in models.user_bodies[-1]["messages"] if m["role"] == "user"]
    assert said == ["What is your booking reference?", "Found it. Which day?", DONE]
    assert {b["temperature"] for b in models.user_bodies} == {0}
    # Its calls: recorded outside the trial's bracket, marked as the user's.
    usages = [e for e in ran.of_type(PROVIDER_USAGE)]
    mine = [e for e in usages if e.payload.get("nodeId") == SIMULATED_USER_NODE]
    assert [e.payload["model"] for e in mine] == [USER_MODEL] * 3
    assert all(e.causationId is None for e in mine)
    assert all(e.causationId is not None for e in usages if e not in mine)
    # The run's cost counts both; the agent's efficiency only its own four calls.
    assert ran.done.totalCostUsd == pytest.approx(4 * 0.02 + 3 * 0.002)
    (task,) = ran.done.tasks
    assert task.efficiency is not None
    assert (task.efficiency.modelCallCount, task.efficiency.inputTokens) == (4, 40)
    assert task.costUsd == pytest.approx(4 * 0.02)
    outside = [e.typed for e in usages if e.causationId is None]
    assert len(outside) == 3  # what the judge's spend reads: none of it is the judge's
    assert judge_spend(u for u in outside if isinstance(u, ProviderUsage)).calls == 0
    side = ran.done.user_side
    assert side is not None
    assert (side.userMiss, side.userError) == (0, 0)
    regraded = await RunService(store, Registry()).regrade(ran.run_id)
    assert regraded.reproduces_stored


async def test_33_2_the_plainest_llm_user_task(store: EventStore) -> None:
    """One task, no trials, no fixtures, the LLM user's required members only."""
    models = TwoModels(agent=[Reply(content="Hi?")], user=[Reply(content="###STOP###")])
    with server_of(models) as server:
        user = {"kind": "llm", "model": USER_MODEL, "persona": "P", "instructions": "I",
                "baseUrl": server.base_url}  # fmt: skip
        ran = await run_with_user(store, server, user_suite(user, "Hi?"))
    assert ran.done.passed
    assert _turns(ran) == [(0, "stop")]
    (turn,) = ran.of_type(USER_TURN)
    assert turn.payload["reply"] == ""


async def _failed(store: EventStore, user_steps: list[Any], **user: Any) -> tuple[Any, TwoModels]:
    models = TwoModels(
        agent=[Reply(content="What is your booking reference?"), Reply(content=DONE)],
        user=user_steps,
    )
    with server_of(models) as server:
        suite = user_suite(llm_user(server.base_url, **user), DONE)
        ran = await run_with_user(store, server, suite, agent={"maxRetries": 0})
    return ran, models


def _user_error(ran: Any, cause: str) -> dict[str, Any]:
    assert not ran.done.passed
    (scored,) = ran.of_type(EVAL_SCORED)
    assert (scored.payload["scoreLabel"], scored.payload["score"]) == ("user-error", 0.0)
    reason = _reason(ran)
    assert reason["kind"] == "user-error"
    assert reason["details"]["cause"] == cause
    assert reason["message"].startswith(f"user-error ({cause}): the simulated user failed")
    side = ran.done.user_side
    assert side is not None
    assert (side.trials, side.userError, side.userMiss) == (1, 1, 0)
    assert side.passRateExcludingUserSide is None  # no trial left on the agent's side
    return reason


async def test_33_2_a_user_model_answering_500_is_a_user_error(store: EventStore) -> None:
    fast = {"retry-after-ms": "1"}
    errors = [HttpError(500, "boom", fast), HttpError(500, "boom", fast), HttpError(500, "boom")]
    ran, models = await _failed(store, errors)
    reason = _user_error(ran, "model-error")
    assert "HTTP 500" in reason["message"]
    assert "after 2 retries" in reason["message"]
    assert len(models.user_bodies) == 3  # the SDK's own bounded retries, then the failure
    assert len(models.agent_bodies) == 1  # no agent turn after the user failed
    assert _turns(ran) == [(0, "error")]


async def test_33_2_a_malformed_user_reply_is_a_user_error(store: EventStore) -> None:
    ran, models = await _failed(store, [Reply(tool_calls=(call("lookup", {}),))])
    reason = _user_error(ran, "format")
    assert "called a tool" in reason["message"]
    assert len(models.agent_bodies) == 1


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ({"parts": ["not", "text"]}, "answered dict, not a text"),
        ("", "an empty text"),
        ("z" * 200_000, "200000 characters, over maxReplyChars = 500"),
    ],
)
async def test_33_2_a_hostile_user_reply_is_a_user_error(
    store: EventStore, content: Any, said: str
) -> None:
    ran, _ = await _failed(store, [Reply(content=content)])
    assert said in _user_error(ran, "format")["message"]
    (turn,) = ran.of_type(USER_TURN)
    assert "reply" not in turn.payload  # nothing of it reached the agent or the log's turn


async def test_33_2_a_user_past_its_turns_is_a_user_error(store: EventStore) -> None:
    models = TwoModels(
        agent=[Reply(content=f"Question {i}?") for i in range(3)],
        user=[Reply(content="Hmm."), Reply(content="Not sure.")],
    )
    with server_of(models) as server:
        suite = user_suite(llm_user(server.base_url, maxTurns=2), DONE)
        ran = await run_with_user(store, server, suite)
    reason = _user_error(ran, "max-turns")
    assert "did not stop within maxTurns = 2" in reason["message"]
    assert _turns(ran) == [(0, "reply"), (1, "reply"), (2, "error")]
    assert len(models.user_bodies) == 2


async def test_33_2_user_errors_and_agent_failures_are_counted_apart(store: EventStore) -> None:
    """Two trials: the user fails one, the agent answers the other wrongly."""
    models = TwoModels(
        agent=[Reply(content="ref?"), Reply(content="ref?")],
        user=[HttpError(400, "bad"), Reply(content="ABC ###STOP###")],
    )
    with server_of(models) as server:
        suite = user_suite(llm_user(server.base_url), DONE)
        doc = suite.model_dump(mode="json", by_alias=True, exclude_none=True)
        twice = parse_suite({**doc, "trials": {"count": 2}})
        ran = await run_with_user(store, server, twice, agent={"maxRetries": 0})
    side = ran.done.user_side
    assert side is not None
    assert (side.trials, side.passedTrials, side.userError) == (2, 0, 1)
    assert side.passRateExcludingUserSide == 0.0
    labels = sorted(e.payload["scoreLabel"] for e in ran.of_type(EVAL_SCORED))
    assert labels == ["fail", "user-error"]


# SQLite only: the SDK's timeouts and backoff take seconds and are no store's business; a
# model-error user-error is recorded on PostgreSQL by the HTTP 500 test above.
@pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)
async def test_33_2_a_user_model_that_times_out_is_a_user_error(store: EventStore) -> None:
    def slow(body: dict[str, Any]) -> Reply:
        time.sleep(1.0)  # the server's own thread: past the user's timeoutS
        return Reply(content="too late")

    ran, models = await _failed(store, [slow, slow, slow], timeoutS=0.2)
    reason = _user_error(ran, "model-error")
    assert "could not be reached (ReadTimeout" in reason["message"]
    assert len(models.agent_bodies) == 1
