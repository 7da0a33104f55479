"""Exact threshold decisions through a whole run: the judge's 0.7s, the cost ceiling's 0.1 + 0.2.

RFC 0244 §B ``passRule: mean`` and the suite ``passScore`` (with RFC 0246's gating score), and
the cost ceiling that counts every trial, decided on the recorded decimals
(:mod:`wopeval.grading.exact`); ``wopeval grade`` reproduces the stored summary byte for byte.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from tests.engine.helpers import make_suite, run_suite, scripted_task
from wopeval.engine.run import RunSettings
from wopeval.engine.sink import EventSink
from wopeval.events.store import EventStore
from wopeval.service.runs import regrade
from wopeval.suite.models import Task
from wopeval.wire.events import EVAL_SCORED

RUBRIC = {"kind": "rubric", "rubric": [{"criterion": "is polite", "weight": 1.0}]}
OK = {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}}


class FixedJudge:
    evaluator_type: Literal["llm_judge"] = "llm_judge"

    def __init__(self, score: float) -> None:
        self.value = score

    async def score(self, task: Task, output: Any, sink: EventSink, run_id: str) -> float:
        return self.value


async def _reproduced(store: EventStore, run_id: str, outputs: Any) -> bool:
    regraded = await regrade(store, run_id)
    return regraded.reproduces_stored and json.dumps(outputs) == json.dumps(
        json.loads(regraded.summary.to_json())
    )


async def test_0244_B_judge_scores_at_pass_score_pass_under_mean_and_for_the_suite(
    store: EventStore,
) -> None:
    # Three trials judged 0.7, passScore 0.7: the float mean 0.6999999999999998 used to fail
    # both the task (passRule mean) and the suite; the exact mean is 7/10.
    suite = make_suite(
        [scripted_task("polite", {"output": "thanks"}, RUBRIC)],
        modes=["rubric"],
        trials={"count": 3, "passRule": "mean"},
        thresholds={"passScore": 0.7},
    )
    ran = await run_suite(store, suite, judge=FixedJudge(0.7))
    assert [e.payload["score"] for e in ran.of_type(EVAL_SCORED)] == [0.7, 0.7, 0.7]
    assert [e.payload["passed"] for e in ran.of_type(EVAL_SCORED)] == [True, True, True]
    assert ran.done.tasks[0].passed is True
    assert ran.done.passed is True
    assert ran.done.aggregateScore == 0.6999999999999998  # the reported float is unchanged
    completed = next(e for e in ran.events if e.type == "run.completed")
    assert await _reproduced(store, ran.run_id, completed.payload["outputs"])


async def test_0244_B_cost_at_the_ceiling_neither_stops_trials_nor_fails_the_suite(
    store: EventStore,
) -> None:
    # Trials cost 0.1, 0.2 and 0 USD against maxCostUsd 0.3: after two trials the exact total is
    # 0.3, not above the ceiling, so the third trial runs and the suite passes. A float total
    # (0.30000000000000004) skipped the third trial and failed the suite.
    def usage(cost: float) -> list[dict[str, Any]]:
        return [{"provider": "mock", "model": "m", "inputTokens": 1, "outputTokens": 1,
                 "costEstimateUsd": cost}]  # fmt: skip

    script = {"output": "ok", "usage": usage(0.1), "trials": {"1": {"usage": usage(0.2)},
              "2": {"usage": usage(0.0)}}}  # fmt: skip
    suite = make_suite(
        [scripted_task("priced", script, OK)],
        trials={"count": 3},
        thresholds={"passScore": 1.0, "maxCostUsd": 0.3},
    )
    ran = await run_suite(store, suite, settings=RunSettings(concurrency=1))
    assert [e.payload["scoreLabel"] for e in ran.of_type(EVAL_SCORED)] == ["pass"] * 3
    assert ran.done.totalCostUsd == 0.1 + 0.2
    assert ran.done.passed is True
    completed = next(e for e in ran.events if e.type == "run.completed")
    assert await _reproduced(store, ran.run_id, completed.payload["outputs"])
