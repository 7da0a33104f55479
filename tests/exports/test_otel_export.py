"""RFC 0244 §E: eval.scored maps onto OpenTelemetry gen_ai.evaluation.result; content-free."""

from __future__ import annotations

import json

from tests.engine.helpers import make_suite, run_suite, scripted_task
from wopeval.events.store import EventStore
from wopeval.exports.otel import EVALUATION_EVENT, run_spans


async def test_0244_E_each_scored_trial_becomes_an_evaluation_event(store: EventStore) -> None:
    secret = "ARG-MARKER-91"
    script = {
        "calls": [{"tool": "crm:lookup", "args": {"q": secret}}],
        "output": "ok",
        "usage": [{"provider": "mock", "model": "m", "inputTokens": 7, "outputTokens": 3}],
        "trials": {"1": {"output": "no"}},
    }
    suite = make_suite(
        [
            scripted_task(
                "t", script, {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}}
            )
        ],
        trials={"count": 2},
    )
    ran = await run_suite(store, suite)
    spans = run_spans(suite.suiteId, ran.run_id, ran.events)
    names = sorted(s.name for s in spans)
    assert names == [
        "evaluate core.test.evals.engine",
        "execute_tool crm:lookup",
        "execute_tool crm:lookup",
        "invoke_agent core.conformance.agents.scripted",
        "invoke_agent core.conformance.agents.scripted",
    ]
    trials = [s for s in spans if s.name.startswith("invoke_agent")]
    results = [
        dict(e.attributes or {}) for s in trials for e in s.events if e.name == EVALUATION_EVENT
    ]
    assert len(results) == 2
    by_index = {a["openwop.eval.trial_index"]: a for a in results}
    assert by_index[0]["gen_ai.evaluation.score.value"] == 1.0
    assert by_index[0]["gen_ai.evaluation.score.label"] == "pass"
    assert by_index[1]["gen_ai.evaluation.score.label"] == "fail"
    assert by_index[1]["gen_ai.evaluation.name"] == "core.test.evals.engine/t"
    assert by_index[1]["gen_ai.evaluation.evaluator.type"] == "deterministic"
    assert all(dict(s.attributes or {})["gen_ai.usage.input_tokens"] == 7 for s in trials)
    root = next(s for s in spans if s.name.startswith("evaluate"))
    assert all(s.parent is not None and s.parent.span_id == root.context.span_id for s in trials)
    assert secret not in "".join(json.dumps(json.loads(s.to_json())) for s in spans)
