"""The gate (wopeval.grading.gate.decide): pure over a summary made by the real engine."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import anyio
import pytest
from pydantic import ValidationError

from tests.cli.gate_runs import SCRIPTED, suite_doc
from wopeval.engine.run import RunSettings
from wopeval.grading.gate import GATES, Bounds, UnknownGate, decide
from wopeval.service.api import evaluate
from wopeval.suite import parse_suite
from wopeval.wire.request import RunRequest
from wopeval.wire.summary import EvalSummary


def _summary(doc: dict[str, Any]) -> EvalSummary:
    async def go() -> EvalSummary:
        with tempfile.TemporaryDirectory() as tmp:
            result = await evaluate(parse_suite(doc), SCRIPTED, store=str(Path(tmp) / "s.db"))
            return result.summary

    return anyio.run(go)


def test_0244_B_plainest_run_the_suite_gate_passes_and_every_task_fails() -> None:
    """One task, no trials, passScore 0: the suite gate (the summary's passed) passes with the
    task failed; every-task fails, naming the task."""
    summary = _summary(suite_doc([[False]], pass_score=0.0))
    assert (summary.passed, summary.tasks[0].passed) == (True, False)
    suite = decide(summary)
    assert (suite.gate, suite.passed, suite.failures) == ("suite", True, ())
    every = decide(summary, "every-task")
    assert (every.gate, every.passed, every.failing_task_ids) == ("every-task", False, ("task-0",))
    assert every.headline() == "gate every-task failed: 1 task(s) did not pass: task-0"
    assert every.to_json() == {
        "name": "every-task",
        "passed": False,
        "failingTaskIds": ["task-0"],
        "reasons": [{"taskId": "task-0", "why": "did not pass (score 0.000)"}],
    }


def test_plainest_passing_run_passes_every_gate() -> None:
    """One task, one trial, passed: every gate passes (a bound gate at passScore 0, where 1/1's
    bound 0.025 meets it); a bound gate without bounds fails, closed, saying so."""
    summary = _summary(suite_doc([[True]]))
    for name, gate in GATES.items():
        verdict = decide(summary, name, Bounds(pass_score=0.0))
        assert (verdict.passed, verdict.failures) == (True, ())
        assert verdict.headline() == f"gate {name} passed"
        if gate.bound is not None:
            assert "no passScore" in decide(summary, name).headline()


def test_0244_B_a_cost_ceiling_fails_every_gate_though_every_task_passed() -> None:
    """RFC 0244 §B: maxCostUsd counts every trial; the stricter gate keeps the suite gate."""
    summary = _summary(suite_doc([[True, True, True]], max_cost_usd=0.25, cost_usd=0.125))
    assert not summary.passed
    assert all(task.passed for task in summary.tasks)
    for name in GATES:
        verdict = decide(summary, name, Bounds(pass_score=0.0))
        assert not verdict.passed
        assert verdict.failing_task_ids == ()
        assert verdict.failures[0].task_id is None
        assert "the suite did not pass" in verdict.headline()


def test_a_failing_suite_gate_names_the_tasks_that_did_not_pass() -> None:
    summary = _summary(suite_doc([[True, False], [True, True], [False, False]]))
    verdict = decide(summary, "suite")
    assert not verdict.passed
    assert verdict.failing_task_ids == ("task-0", "task-2")
    assert [f.why for f in verdict.failures[1:]] == [
        "did not pass (score 0.500, 1/2 trials passed)",
        "did not pass (score 0.000, 0/2 trials passed)",
    ]


def test_an_unknown_gate_is_refused_naming_the_field() -> None:
    summary = _summary(suite_doc([[True]]))
    with pytest.raises(
        UnknownGate,
        match=r"^gate: 'every_task' is not one of suite, every-task, lower-bound, "
        r"every-task-lower-bound$",
    ):
        decide(summary, "every_task")
    with pytest.raises(UnknownGate, match=r"^gate: 'nope'"):
        RunSettings(gate="nope")  # refused before anything is recorded
    with pytest.raises(ValidationError, match="gate"):
        RunRequest(agentId="core.acme.agent", gate="<script>")


def test_the_default_gate_is_not_stored_so_stored_runs_read_back_unchanged() -> None:
    assert "gate" not in RunSettings().to_request("core.acme.agent").to_stored()
    stored = RunSettings(gate="every-task").to_request("core.acme.agent").to_stored()
    assert stored["gate"] == "every-task"
    assert RunRequest.model_validate({"agentId": "core.acme.agent"}).gate == "suite"


def test_evaluate_reports_its_gates_verdict() -> None:
    """The library's result reads the same gate as the CLI: ``passed`` is the verdict's."""
    doc = suite_doc([[False]], pass_score=0.0)

    async def go(gate: str) -> Any:
        with tempfile.TemporaryDirectory() as tmp:
            settings = RunSettings(gate=gate)
            store = str(Path(tmp) / "s.db")
            return await evaluate(parse_suite(doc), SCRIPTED, store=store, settings=settings)

    suite, every = anyio.run(go, "suite"), anyio.run(go, "every-task")
    assert (suite.summary.passed, every.summary.passed) == (True, True)  # RFC 0244's, both
    assert (suite.passed, suite.verdict.gate) == (True, "suite")
    assert (every.passed, every.verdict.failing_task_ids) == (False, ("task-0",))


def test_the_headline_names_five_failing_tasks_then_counts_the_rest() -> None:
    five = decide(_summary(suite_doc([[False]] * 5, pass_score=0.0)), "every-task").headline()
    assert five.endswith("5 task(s) did not pass: task-0, task-1, task-2, task-3, task-4")
    six = decide(_summary(suite_doc([[False]] * 6, pass_score=0.0)), "every-task").headline()
    assert six.endswith("6 task(s) did not pass: task-0, task-1, task-2, task-3, task-4 and 1 more")
