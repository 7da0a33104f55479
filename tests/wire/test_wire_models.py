"""RFC 0244 Examples "Negative (schema)": the wire models refuse what the RFC says fails."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from wopeval.wire.events import EvalScored, EvalStarted
from wopeval.wire.summary import RegressionBlock, TaskSummary, TrajectoryBlock

BLOCK = {"mode": "in-order", "matched": False, "expectedCount": 2, "observedCount": 3,
         "matchedCount": 1, "forbiddenCount": 1}  # fmt: skip


def test_0244_E_prose_score_label_fails_the_pattern() -> None:
    with pytest.raises(ValidationError, match="scoreLabel"):
        EvalScored(taskId="t", score=1.0, passed=True, scoreLabel="Looks good to me")
    assert EvalScored(taskId="t", score=1.0, passed=True, scoreLabel="pass").scoreLabel == "pass"


def test_0244_E_unknown_evaluator_type_fails() -> None:
    with pytest.raises(ValidationError, match="evaluatorType"):
        EvalScored.model_validate({"taskId": "t", "score": 1, "passed": True,
                                   "evaluatorType": "vibes"})  # fmt: skip


def test_0244_H_a_trajectory_block_naming_tools_fails() -> None:
    assert TrajectoryBlock.model_validate(BLOCK).matchedCount == 1
    with pytest.raises(ValidationError, match="tools"):
        TrajectoryBlock.model_validate({**BLOCK, "tools": ["billing:refund"]})
    with pytest.raises(ValidationError, match="explanation"):
        TaskSummary.model_validate({"taskId": "t", "score": 1, "passed": True,
                                    "explanation": "the agent refunded"})  # fmt: skip


def test_0244_B_trial_count_and_regression_fields_are_bounded() -> None:
    with pytest.raises(ValidationError, match="trialCount"):
        EvalStarted(suiteId="s", suiteVersion="1.0.0", taskCount=1, modes=["golden"],
                    trialCount=0)  # fmt: skip
    with pytest.raises(ValidationError, match="method"):
        RegressionBlock(baselineRunId="acme/r0000000000000000", scoreDelta=0.1,
                        method="Paired Bootstrap")  # fmt: skip
    with pytest.raises(ValidationError, match="verdict"):
        RegressionBlock.model_validate({"baselineRunId": "acme/r0000000000000000",
                                        "scoreDelta": 0.1, "verdict": "better"})  # fmt: skip
