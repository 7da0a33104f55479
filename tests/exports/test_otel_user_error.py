"""An LLM user's failure through the OTLP export and back (issue 33 §5): a run whose simulated
user failed (its model answered 500, or broke the reply format) exports the ``error`` turn with
its cause as a label, and ``import-otlp``'s log fails the trial ``user-error`` naming that
cause, as the stored run's reason does, never ``user-error (unknown)``; the detail (content)
stays behind."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.agents.llm_user_helpers import TwoModels, llm_user, run_with_user, server_of, user_suite
from wopeval.agents.scripted_openai import HttpError, Reply, call
from wopeval.events.store import EventStore
from wopeval.exports.otel import otlp_json_lines
from wopeval.grading.summary import GradingOptions, build_summary
from wopeval.grading.user_reasons import NO_DETAIL
from wopeval.service.otlp_read import spans_of
from wopeval.service.otlp_trials import import_spans
from wopeval.wire.vocab import EVAL_SCORED, TRIAL_FAILED

pytestmark = pytest.mark.slow  # a loopback model server per test

DONE = "Done: ABC123 moved to Friday."
TARGET = "core.test.agents.llm"


def _reason(events: list[Any]) -> dict[str, Any]:
    (reason,) = [e.payload for e in events if e.type == TRIAL_FAILED]
    return dict(reason)


@pytest.mark.parametrize(
    ("user_steps", "cause"),
    [
        (
            [HttpError(500, "boom-SECRET", {"retry-after-ms": "1"})] * 2
            + [HttpError(500, "boom-SECRET")],
            "model-error",
        ),  # the SDK's retries, then failed
        ([Reply(tool_calls=(call("lookup", {"SECRET": 1}),))], "format"),
    ],
)
async def test_33_5_an_imported_user_error_names_its_cause_as_the_stored_run(
    store: EventStore, user_steps: list[Any], cause: str
) -> None:
    models = TwoModels(agent=[Reply(content="Your booking reference?"), Reply(content=DONE)],
                       user=user_steps)  # fmt: skip
    with server_of(models) as server:
        suite = user_suite(llm_user(server.base_url), DONE)
        ran = await run_with_user(store, server, suite, agent={"maxRetries": 0})
    stored = _reason(ran.events)
    assert (stored["kind"], stored["details"]["cause"]) == ("user-error", cause)

    text = otlp_json_lines(suite.suiteId, ran.run_id, ran.events)
    assert "SECRET" not in text  # the user's failure detail is content
    spans = [s for line in text.splitlines() for s in spans_of(json.loads(line))]
    imported = list(import_spans(suite, spans, target_agent_id=TARGET).events)
    back = _reason(imported)
    assert (back["kind"], back["details"]["cause"]) == ("user-error", cause)
    assert back["message"].startswith(f"user-error ({cause}): the simulated user failed")
    assert back["message"].endswith(f"failed, not the agent: {NO_DETAIL}")
    assert stored["details"]["error"]
    assert stored["details"]["error"] in stored["message"]
    assert back["details"]["turn"] == stored["details"]["turn"]
    (scored,) = [e.payload for e in imported if e.type == EVAL_SCORED]
    assert (scored["scoreLabel"], scored["passed"]) == ("user-error", False)
    summary = build_summary(suite, imported, GradingOptions(TARGET))
    side = summary.user_side
    assert side is not None
    assert (side.trials, side.userError, side.userMiss) == (1, 1, 0)
