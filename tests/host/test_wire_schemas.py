"""The test validators are not vacuous: they reject what RFC 0244 §H and the envelopes forbid."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.host.wire_schemas import validate_event, validate_summary

SUMMARY: dict[str, Any] = {
    "suiteId": "core.acme.evals.x",
    "suiteVersion": "1.0.0",
    "aggregateScore": 0.8,
    "passed": False,
    "taskCount": 1,
    "passedCount": 0,
    "tasks": [
        {
            "taskId": "t",
            "score": 0.8,
            "passed": False,
            "trajectory": {"mode": "in-order", "matched": True, "expectedCount": 2,
                           "observedCount": 3, "matchedCount": 2, "forbiddenCount": 0},
            "trials": {"n": 5, "passedCount": 4, "meanScore": 0.8, "passAtK": 1.0,
                       "passHatK": 0.4},
            "fixtureMissCount": 0,
        }
    ],
    "trialStats": {"k": 3, "passAtK": 1.0, "passHatK": 0.4},
}  # fmt: skip
EVENT: dict[str, Any] = {
    "eventId": "01ABCDEFGHJKMNPQRSTVWXYZ00",
    "runId": "acme/r01ABCDEFGHJKMNPQRSTVWXYZ0",
    "type": "eval.scored",
    "payload": {"taskId": "t", "score": 1, "passed": True, "trialIndex": 2,
                "scoreLabel": "pass", "evaluatorType": "deterministic"},
    "timestamp": "2026-11-30T08:00:00.000Z",
    "sequence": 4,
    "schemaVersion": 1,
}  # fmt: skip


def test_0244_H_extended_schemas_accept_the_rfc_example() -> None:
    validate_summary(SUMMARY)
    validate_event(EVENT)


def _with(doc: dict[str, Any], path: list[Any], value: Any) -> dict[str, Any]:
    changed = copy.deepcopy(doc)
    target = changed
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return changed


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (["tasks", 0, "trajectory", "tools"], ["billing:refund"]),
        (["tasks", 0, "trajectory", "mode"], "superset"),
        (["tasks", 0, "trials", "n"], 0),
        (["tasks", 0, "output"], "refund approved"),
        (["trialStats", "scoreStderr"], -1),
        (["suiteVersion"], "1.0"),
    ],
)
def test_0244_H_summary_validator_rejects_content_and_bad_shapes(
    path: list[Any], value: Any
) -> None:
    with pytest.raises(AssertionError):
        validate_summary(_with(SUMMARY, path, value))


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (["payload", "scoreLabel"], "Looks good to me"),
        (["payload", "evaluatorType"], "vibes"),
        (["payload", "completion"], "the model said..."),
        (["timestamp"], "yesterday"),
        (["sequence"], -1),
        (["runId"], "no-tenant"),
    ],
)
def test_0244_E_event_validator_rejects_prose_and_bad_envelopes(
    path: list[Any], value: Any
) -> None:
    with pytest.raises(AssertionError):
        validate_event(_with(EVENT, path, value))
