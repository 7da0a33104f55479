"""``--agent-cmd`` usage reports: a real process posts ``{model, inputTokens, outputTokens,
costUsd?}`` to ``WOPEVAL_USAGE_URL`` (its trial's endpoint, its trial's token); each report is a
``provider.usage`` of the trial, priced with the definition's ``price`` when it carries no cost,
so ``totalCostUsd`` and the ceilings hold (RFC 0244 §B Cost)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from tests.agents.helpers import AgentRan
from tests.engine.helpers import make_suite, run_suite
from wopeval.agents.build import build_agent
from wopeval.agents.definition import Price, parse_definition
from wopeval.engine.cmd_agent import CommandAgent
from wopeval.engine.registry import Registry
from wopeval.engine.run import RunSettings
from wopeval.events.store import EventStore
from wopeval.wire.vocab import PROVIDER_USAGE

# A subprocess per trial. SQLite only: usage events, prices and the run's and a trial's cost
# ceilings are recorded on both stores by tests/agents/test_openai_compat.py; here the
# process's reports over its endpoint are the point.
SQLITE_ONLY = pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)

PROG = Path(__file__).parent / "progs" / "usage_agent.py"
AGENT_ID = "core.test.agents.cmd-usage"
PRICE = Price(inputPerMTok=2.0, outputPerMTok=8.0)
CALL = {"model": "m-1", "inputTokens": 1000, "outputTokens": 100}


def _agent(**options: Any) -> CommandAgent:
    return CommandAgent(f"{sys.executable} {PROG}", **options)


async def _run(
    store: EventStore, agent: CommandAgent, task_input: Any, expected: Any, **suite: Any
) -> AgentRan:
    registry = Registry()
    registry.register_agent(AGENT_ID, agent)
    task = {
        "taskId": "cmd",
        "input": task_input,
        "expected": {"kind": "golden", "match": {"strategy": "exact", "value": expected}},
    }
    settings = RunSettings(concurrency=1, trial_timeout_s=30)
    ran = await run_suite(
        store, make_suite([task], **suite), agent_id=AGENT_ID, registry=registry, settings=settings
    )
    return AgentRan(ran.run_id, ran.summary, ran.events)


@SQLITE_ONLY
async def test_0244_B_a_command_agent_reports_usage_priced_or_its_own_cost(
    store: EventStore,
) -> None:
    reports = [CALL, {**CALL, "costUsd": 0.5, "provider": "acme"}]
    priced = PRICE.cost(1000, 100)  # (1000·2 + 100·8) / 1e6 = 0.0028
    expected = {"answer": "late", "statuses": [200, 200], "answers": [
        {"ok": True, "trialCostUsd": priced, "stop": False},
        {"ok": True, "trialCostUsd": priced + 0.5, "stop": False}]}  # fmt: skip
    ran = await _run(store, _agent(price=PRICE), {"reports": reports, "answer": "late"}, expected)
    assert ran.done.passed, ran.reasons()
    usages = [e.payload for e in ran.of_type(PROVIDER_USAGE)]
    assert [(u["provider"], u["model"], u["costEstimateUsd"]) for u in usages] == [
        ("command", "m-1", priced),
        ("acme", "m-1", 0.5),
    ]
    assert ran.done.totalCostUsd == pytest.approx(0.5 + priced)
    (task,) = ran.done.tasks
    assert task.efficiency is not None
    assert (task.efficiency.inputTokens, task.efficiency.outputTokens) == (2000, 200)


@SQLITE_ONLY
async def test_an_unpriced_report_without_cost_counts_tokens_only(store: EventStore) -> None:
    expected = {"answer": None, "statuses": [200],
                "answers": [{"ok": True, "trialCostUsd": 0.0, "stop": False}]}  # fmt: skip
    ran = await _run(store, _agent(), {"reports": [CALL]}, expected)
    assert ran.done.passed, ran.reasons()
    (usage,) = [e.payload for e in ran.of_type(PROVIDER_USAGE)]
    assert "costEstimateUsd" not in usage
    assert usage["inputTokens"] == 1000


@SQLITE_ONLY
async def test_a_bad_report_is_refused_naming_its_fields(store: EventStore) -> None:
    bad = [{"model": "m", "inputTokens": -1, "outputTokens": 1}, {"model": "m"}, [1],
           {**CALL, "secret": "x"}]  # fmt: skip
    ran = await _run(store, _agent(), {"reports": bad}, None)
    output = ran.of_type("agent.decided")[0].payload["decision"]
    assert output["statuses"] == [400, 400, 400, 400]
    errors = [answer["errors"] for answer in output["answers"]]
    assert any(e.startswith("inputTokens:") for e in errors[0])
    assert {e.split(":")[0] for e in errors[1]} == {"inputTokens", "outputTokens"}
    assert any(e.startswith("secret:") for e in errors[3])
    assert ran.of_type(PROVIDER_USAGE) == []


@SQLITE_ONLY
async def test_0244_B_a_looping_command_agent_is_stopped_at_the_runs_ceiling(
    store: EventStore,
) -> None:
    suite = {"trials": {"count": 3, "k": 1}, "thresholds": {"maxCostUsd": 0.01}}
    ran = await _run(store, _agent(price=PRICE), {"loop": CALL}, None, **suite)
    usages = ran.of_type(PROVIDER_USAGE)
    assert len(usages) == 4  # 4 × $0.0028 = $0.0112 is the first total past $0.01
    kinds = [(r["trialIndex"], r["kind"]) for r in ran.reasons()]
    assert kinds == [(0, "agent-error"), (1, "skipped-budget"), (2, "skipped-budget")]
    assert "AgentStopped: cost ceiling" in ran.reasons()[0]["message"]


@SQLITE_ONLY
async def test_a_command_agents_max_cost_usd_stops_its_trial(store: EventStore) -> None:
    agent = _agent(price=PRICE, max_cost_usd=0.005, must_report=True)
    ran = await _run(store, agent, {"loop": CALL}, None)
    assert len(ran.of_type(PROVIDER_USAGE)) == 2  # $0.0056 > $0.005
    (reason,) = ran.reasons()
    assert "AgentStopped: maxCostUsd" in reason["message"]


@SQLITE_ONLY
async def test_a_ceiling_with_no_report_fails_closed(store: EventStore) -> None:
    doc = {"kind": "command", "command": f"{sys.executable} {PROG}", "maxCostUsd": 1.0,
           "price": {"inputPerMTok": 1.0, "outputPerMTok": 1.0}}  # fmt: skip
    agent: Any = build_agent(parse_definition(doc), timeout_s=30, max_cost_usd=None)
    expected = {"answer": "late", "statuses": [], "answers": []}
    ran = await _run(store, agent, {"answer": "late"}, expected)
    (reason,) = ran.reasons()
    assert reason["kind"] == "agent-error"
    assert "UsageNotReported: maxCostUsd" in reason["message"]
    reported = await _run(store, agent, {"answer": "late", "reports": [CALL]}, None)
    assert "UsageNotReported" not in str(reported.reasons())


class _Ctx:
    """Just enough of a trial context for the endpoint alone."""

    budget_exceeded = False

    def __init__(self) -> None:
        self.reported: list[Any] = []

    def tools(self) -> list[Any]:
        return []

    async def report_usage(self, usage: Any) -> None:
        self.reported.append(usage)


async def test_the_usage_route_takes_only_its_trials_token_and_bounded_bodies() -> None:
    import httpx

    from wopeval.engine.cmd_agent import trial_endpoint
    from wopeval.engine.cmd_usage import CommandSpend

    ctx = _Ctx()
    spend = CommandSpend(ctx)  # type: ignore[arg-type]
    async with trial_endpoint(ctx, spend) as (url, token), httpx.AsyncClient() as client:  # type: ignore[arg-type]
        usage_url = url.removesuffix("/mcp") + "/usage"
        good = {"authorization": f"Bearer {token}"}
        wrong = await client.post(usage_url, json=CALL, headers={"authorization": "Bearer x"})
        absent = await client.post(usage_url, json=CALL)
        get = await client.get(usage_url, headers=good)
        huge = await client.post(usage_url, content=b" " * 70_000, headers=good)
        nan = await client.post(usage_url, content=b'{"model": "m", "inputTokens": 1, '
                                b'"outputTokens": 1, "costUsd": NaN}', headers=good)  # fmt: skip
        ok = await client.post(usage_url, json=CALL, headers=good)
    assert (wrong.status_code, absent.status_code) == (401, 401)
    assert (get.status_code, huge.status_code, nan.status_code) == (405, 413, 400)
    assert ok.json() == {"ok": True, "trialCostUsd": 0.0, "stop": False}
    assert len(ctx.reported) == 1
