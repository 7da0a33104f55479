"""The LLM judge through the real ``openai`` SDK against a scripted server on a loopback socket:
a JSON-schema-constrained verdict, the weighted rubric score, its usage counted towards cost but
not efficiency (RFC 0244 §C), recorded once (re-grades never re-judge), failures as grader
errors with their reason."""

from __future__ import annotations

import json
from typing import Any

from tests.agents.helpers import AgentRan
from tests.engine.helpers import make_suite, run_suite
from wopeval.agents.definition import parse_definition
from wopeval.agents.judge_llm import LLMJudge
from wopeval.agents.scripted_openai import HttpError, Reply, ScriptedOpenAI
from wopeval.events.store import EventStore
from wopeval.service.runs import regrade
from wopeval.wire.vocab import EVAL_SCORED, PROVIDER_USAGE, TRIAL_FAILED

RUBRIC = [
    {"criterion": "apologises", "weight": 0.75},
    {"criterion": "offers a refund", "weight": 0.25},
]


def _judge(server: ScriptedOpenAI) -> LLMJudge:
    price = {"inputPerMTok": 2.0, "outputPerMTok": 8.0}
    doc = {
        "kind": "openai-compatible",
        "model": "judge-model",
        "baseUrl": server.base_url,
        "price": price,
        "maxRetries": 1,
    }
    return LLMJudge(parse_definition(doc))


async def _run(store: EventStore, server: ScriptedOpenAI) -> AgentRan:
    script = {"output": "Sorry about that.", "calls": [{"tool": "kb:search", "args": {}}]}
    task = {
        "taskId": "polite",
        "input": script,
        "expected": {"kind": "rubric", "rubric": RUBRIC},
        "fixtures": {"toolResponses": [{"tool": "kb:search", "response": "ok"}]},
    }
    suite = make_suite([task], thresholds={"passScore": 0.7})
    ran = await run_suite(store, suite, judge=_judge(server))
    return AgentRan(ran.run_id, ran.summary, ran.events)


async def test_0244_C_the_judge_scores_the_weighted_rubric_once(store: EventStore) -> None:
    verdict = Reply(content=json.dumps({"c1": 1, "c2": 0}), prompt_tokens=500, completion_tokens=50)
    with ScriptedOpenAI([verdict]) as server:
        ran = await _run(store, server)
        (scored,) = [e.payload for e in ran.of_type(EVAL_SCORED)]
        assert scored["score"] == 0.75
        assert scored["evaluatorType"] == "llm_judge"
        assert ran.done.passed
        (request,) = server.requests
        response_format: dict[str, Any] = request["response_format"]
        assert response_format["type"] == "json_schema"
        assert response_format["json_schema"]["strict"] is True
        assert "offers a refund" in request["messages"][1]["content"]
        # Usage outside the trial bracket: cost yes, efficiency no (RFC 0244 §C).
        (usage,) = ran.of_type(PROVIDER_USAGE)
        assert usage.causationId is None
        assert usage.payload["costEstimateUsd"] == 0.0014
        assert ran.done.totalCostUsd == 0.0014
        efficiency = ran.done.tasks[0].efficiency
        assert efficiency is not None
        assert (efficiency.modelCallCount, efficiency.inputTokens) == (0, 0)
        again = await regrade(store, ran.run_id)
        assert again.reproduces_stored
        assert len(server.requests) == 1  # re-read, never re-judged


async def test_a_verdict_outside_the_schema_is_a_judge_error(store: EventStore) -> None:
    with ScriptedOpenAI([Reply(content=json.dumps({"c1": 3}))]) as server:
        ran = await _run(store, server)
    (reason,) = [e.payload for e in ran.of_type(TRIAL_FAILED)]
    assert reason["kind"] == "judge-error"
    assert "does not fit the verdict schema" in reason["message"]
    (scored,) = [e.payload for e in ran.of_type(EVAL_SCORED)]
    assert scored["scoreLabel"] == "grader-error"


async def test_a_judge_server_failure_is_infrastructure_with_its_reason(store: EventStore) -> None:
    failing = HttpError(503, "overloaded", {"retry-after-ms": "1"})
    with ScriptedOpenAI([failing], repeat_last=True) as server:
        ran = await _run(store, server)
    assert len(server.requests) == 2  # bounded: one call, one retry
    (reason,) = [e.payload for e in ran.of_type(TRIAL_FAILED)]
    assert reason["kind"] == "infrastructure"  # the judge's server failed, not the agent
    assert "the judge model could not answer: ModelUnavailable: " in reason["message"]
    assert "answered HTTP 503" in reason["message"]


async def test_0244_E_the_judge_sees_the_trajectory_only_when_asked(store: EventStore) -> None:
    verdict = Reply(content=json.dumps({"c1": 1, "c2": 1}))
    with ScriptedOpenAI([verdict]) as server:
        await _run(store, server)
        (plain,) = server.requests
    assert "Tool calls the agent made" not in json.dumps(plain["messages"])
    with ScriptedOpenAI([verdict]) as server:
        judge = _judge(server)
        seeing = LLMJudge(judge.definition, include_trajectory=True)
        calls = [{"tool": "kb:search", "args": {"q": "refund policy"}}]
        task = {
            "taskId": "polite",
            "expected": {"kind": "rubric", "rubric": RUBRIC},
            "input": {"output": "Sorry.", "calls": calls},
            "fixtures": {"toolResponses": [{"tool": "kb:search", "response": "ok"}]},
        }
        await run_suite(store, make_suite([task]), judge=seeing)
        (asked,) = server.requests
    user = next(m["content"] for m in asked["messages"] if m["role"] == "user")
    path = user.split("Tool calls the agent made, in order:")[1].split("Rubric:")[0]
    assert "kb:search" in path
    assert "refund policy" in path
