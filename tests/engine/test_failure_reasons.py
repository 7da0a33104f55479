"""Every trial that does not pass records why (``wopeval.trial-failed``), outside ``eval.*``."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from tests.engine.helpers import Ran, make_suite, run_suite, scripted_task
from wopeval.engine.agent import AgentContext, Usage
from wopeval.engine.judge import Judge
from wopeval.engine.registry import SCRIPTED_AGENT_ID, Registry
from wopeval.engine.run import RunSettings
from wopeval.engine.sink import EventSink
from wopeval.events.store import EventStore
from wopeval.grading.reasons import Verdict, explain
from wopeval.grading.views import collect_trials
from wopeval.service.runs import regrade
from wopeval.suite.models import Task
from wopeval.wire.events import TrialFailed
from wopeval.wire.vocab import TRIAL_FAILED

GOLDEN = {"kind": "golden", "match": {"strategy": "exact", "value": "done"}}


def reasons(ran: Ran) -> dict[str, TrialFailed]:
    found: dict[str, TrialFailed] = {}
    for event in ran.of_type(TRIAL_FAILED):
        reason = TrialFailed.model_validate(event.payload)
        found[reason.taskId] = reason
    return found


def registry_with(**agents: Any) -> Registry:
    registry = Registry()
    for name, agent in agents.items():
        registry.register_agent(name, agent)
    return registry


async def test_0244_B_an_agent_error_records_its_exception_message_and_traceback(
    store: EventStore,
) -> None:
    async def broken(task_input: Any, ctx: AgentContext) -> Any:
        raise KeyError("customerId")

    suite = make_suite([{"taskId": "t", "input": {}, "expected": GOLDEN}])
    ran = await run_suite(store, suite, agent_id="broken", registry=registry_with(broken=broken))
    reason = reasons(ran)["t"]
    assert reason.kind == "agent-error"
    assert "KeyError" in reason.message
    assert "customerId" in reason.message
    assert reason.details["exceptionType"] == "KeyError"
    assert 'raise KeyError("customerId")' in reason.details["traceback"]


async def test_0244_B_a_timeout_and_non_json_output_say_so(store: EventStore) -> None:
    async def slow(task_input: Any, ctx: AgentContext) -> Any:
        import anyio

        await anyio.sleep(10)

    async def setlike(task_input: Any, ctx: AgentContext) -> Any:
        return {1, 2}

    suite = make_suite([{"taskId": "t", "input": {}, "expected": GOLDEN}])
    settings = RunSettings(trial_timeout_s=0.05)
    ran = await run_suite(
        store, suite, agent_id="slow", registry=registry_with(slow=slow), settings=settings
    )
    assert reasons(ran)["t"].kind == "timeout"
    assert "0.05s" in reasons(ran)["t"].message
    ran = await run_suite(store, suite, agent_id="set", registry=registry_with(set=setlike))
    assert reasons(ran)["t"].kind == "output-not-json"
    assert "set" in reasons(ran)["t"].message


async def test_0244_D_a_fixture_miss_names_the_tool_and_the_entries_left(store: EventStore) -> None:
    fixtures = {
        "onMiss": "fail",
        "toolResponses": [
            {"tool": "crm:lookup", "response": {"ok": 1}},
            {"tool": "billing:refund", "args": {"orderId": "A"}, "argsMatch": "exact",
             "response": {"refundId": "r"}},
        ],
    }  # fmt: skip
    script = {"calls": [{"tool": "crm:lookup"}, {"tool": "billing:refund",
              "args": {"orderId": "B"}}], "output": "done"}  # fmt: skip
    ran = await run_suite(store, make_suite([scripted_task("t", script, GOLDEN, fixtures)]))
    reason = reasons(ran)["t"]
    assert reason.kind == "fixture-miss"
    assert "billing:refund" in reason.message
    assert "#1 billing:refund" in reason.message  # the entry this trial left unconsumed
    assert reason.details["fixturesServed"] == [0]
    assert reason.details["fixturesLeft"] == [{"index": 1, "tool": "billing:refund"}]


async def test_0244_A_a_trajectory_failure_lists_missing_unexpected_and_forbidden_calls(
    store: EventStore,
) -> None:
    expected = {
        **GOLDEN,
        "trajectory": {
            "match": "exact",
            "calls": [{"tool": "crm:lookup"}, {"tool": "billing:refund"}],
            "forbidden": ["billing:refund-all"],
        },
    }
    script = {"calls": [{"tool": "crm:lookup"}, {"tool": "billing:refund-all"}],
              "output": "done"}  # fmt: skip
    ran = await run_suite(store, make_suite([scripted_task("t", script, expected)]))
    reason = reasons(ran)["t"]
    assert reason.kind == "trajectory"
    assert [r.message for r in reason.every_reason] == [
        "forbidden tool billing:refund-all",
        "trajectory (exact): missing billing:refund",
    ]
    diff = reason.details["trajectory"]
    assert [c["status"] for c in diff["expected"]] == ["matched", "missing"]
    assert [c["status"] for c in diff["observed"]] == ["matched", "forbidden"]


async def test_0244_A_unmatched_order_is_explained_when_every_call_is_present(
    store: EventStore,
) -> None:
    expected = {**GOLDEN, "trajectory": {"match": "in-order",
                "calls": [{"tool": "a"}, {"tool": "b"}]}}  # fmt: skip
    script = {"calls": [{"tool": "b"}, {"tool": "a"}], "output": "done"}
    ran = await run_suite(store, make_suite([scripted_task("t", script, expected)]))
    assert "out of the expected order" in reasons(ran)["t"].message


async def test_0244_B_an_output_mismatch_shows_expected_and_got(store: EventStore) -> None:
    ran = await run_suite(store, make_suite([scripted_task("t", {"output": "nope"}, GOLDEN)]))
    reason = reasons(ran)["t"]
    assert reason.kind == "output-mismatch"
    assert '"done"' in reason.message
    assert '"nope"' in reason.message


class FailingJudge:
    evaluator_type = "llm_judge"

    async def score(self, task: Task, output: Any, sink: EventSink, run_id: str) -> float:
        raise ConnectionError("judge endpoint refused")


class LowJudge:
    evaluator_type = "llm_judge"

    async def score(self, task: Task, output: Any, sink: EventSink, run_id: str) -> float:
        return 0.25


RUBRIC = {"kind": "rubric", "rubric": [{"criterion": "polite", "weight": 1.0}]}


@pytest.mark.parametrize(
    ("judge", "kind", "text"),
    [(FailingJudge(), "judge-error", "judge endpoint refused"),
     (LowJudge(), "below-pass-score", "0.25 is below passScore 1")],
)  # fmt: skip
async def test_0244_E_judge_failures_and_low_scores_are_explained(
    store: EventStore, judge: Judge, kind: str, text: str
) -> None:
    suite = make_suite([scripted_task("t", {"output": "hello"}, RUBRIC)], modes=["rubric"])
    ran = await run_suite(store, suite, judge=judge)
    reason = reasons(ran)["t"]
    assert reason.kind == kind
    assert text in reason.message


async def test_0244_B_a_budget_skip_is_explained(store: EventStore) -> None:
    usage = [{"provider": "mock", "model": "m", "inputTokens": 1, "outputTokens": 1,
              "costEstimateUsd": 1.0}]  # fmt: skip
    suite = make_suite(
        [scripted_task("t", {"usage": usage, "output": "done"}, GOLDEN)],
        trials={"count": 3, "k": 1},
        thresholds={"maxCostUsd": 0.5},
    )
    ran = await run_suite(store, suite, settings=RunSettings(concurrency=1))
    skipped = [TrialFailed.model_validate(e.payload) for e in ran.of_type(TRIAL_FAILED)]
    assert [r.kind for r in skipped].count("skipped-budget") == 2
    assert "cost ceiling" in skipped[-1].message


async def test_0244_H_reasons_never_reach_eval_events_or_the_summary(store: EventStore) -> None:
    marker = "CANARY-7f3a"

    async def leaky(task_input: Any, ctx: AgentContext) -> Any:
        await ctx.call_tool(f"tool-{marker}", {"secret": marker})
        await ctx.report_usage(Usage("mock", "m", 1, 1))
        raise RuntimeError(marker)

    suite = make_suite([{"taskId": "t", "input": {}, "expected": GOLDEN}])
    ran = await run_suite(store, suite, agent_id="leaky", registry=registry_with(leaky=leaky))
    assert marker in reasons(ran)["t"].message  # the tenant's own log keeps the detail …
    for event in ran.events:
        if event.type.startswith("eval."):
            assert marker not in json.dumps(event.payload)  # … the content-free wire does not
    assert marker not in ran.done.to_json()


async def test_0244_B_a_passing_trial_records_no_reason_and_regrade_explains_identically(
    store: EventStore,
) -> None:
    suite = make_suite(
        [scripted_task("ok", {"output": "done"}, GOLDEN),
         scripted_task("bad", {"output": "nope"}, GOLDEN)]
    )  # fmt: skip
    ran = await run_suite(store, suite)
    assert set(reasons(ran)) == {"bad"}
    # The reason is a pure function of the suite and the log: recomputing it gives the same.
    views = collect_trials(ran.events)
    view = views[("bad", 0)]
    assert view.scored is not None
    verdict = Verdict(False, view.scored.score, view.scored.scoreLabel, None, 1.0)
    again = explain(suite.tasks[1], view, verdict, target_agent_id=SCRIPTED_AGENT_ID)
    assert again == reasons(ran)["bad"]
    assert (await regrade(store, ran.run_id)).reproduces_stored


async def test_the_engine_logs_failures_with_run_task_and_trial_ids(
    store: EventStore, caplog: pytest.LogCaptureFixture
) -> None:
    async def broken(task_input: Any, ctx: AgentContext) -> Any:
        raise ValueError("bad input shape")

    suite = make_suite([{"taskId": "t", "input": {}, "expected": GOLDEN}])
    with caplog.at_level(logging.INFO, logger="wopeval.engine"):
        ran = await run_suite(store, suite, agent_id="b", registry=registry_with(b=broken))
    raised = [r for r in caplog.records if "the agent raised" in r.getMessage()]
    assert raised, caplog.text
    record = raised[0]
    assert (getattr(record, "runId", None), getattr(record, "taskId", None)) == (ran.run_id, "t")
    assert getattr(record, "trialIndex", None) == 0
    assert "raised ValueError" in record.getMessage()
    # Content-free (invariant 3): the message and the reasons stay in the run's log, never in
    # the process's (a host's log is its operator's, not the tenant's).
    assert "bad input shape" not in caplog.text
    failed = [r for r in caplog.records if ": failed (" in r.getMessage()]
    assert failed, caplog.text
