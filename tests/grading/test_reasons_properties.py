"""Properties of a trial's reasons over random trials (hypothesis): none for a passed trial, never
none for a failed one; the trial's kind is the one the single-reason precedence gives, and so is
the first reason's, except that a forbidden call now comes first."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.hypothesis_counts import examples
from wopeval.grading.reasons import Verdict, explain, reason_texts
from wopeval.grading.trajectory import ObservedCall
from wopeval.grading.trial import grade_trial
from wopeval.grading.views import TrialView
from wopeval.suite.models import Task
from wopeval.wire.events import EvalScored, FailureKind
from wopeval.wire.vocab import ERROR_LABELS

AGENT = "agent"
TOOLS = ["a", "b", "c", "d"]
ARGS = st.one_of(st.none(), st.fixed_dictionaries({}, optional={"n": st.sampled_from([1, "1"])}))


@st.composite
def expected_calls(draw: st.DrawFn) -> list[dict[str, Any]]:
    calls = []
    for _ in range(draw(st.integers(0, 3))):
        call: dict[str, Any] = {"tool": draw(st.sampled_from(TOOLS[:3]))}
        mode = draw(st.sampled_from([None, "exact", "subset"]))
        if mode is not None:
            call["args"] = draw(ARGS.filter(lambda a: a is not None))
            call["argsMatch"] = mode
        calls.append(call)
    return calls


@st.composite
def tasks(draw: st.DrawFn) -> Task:
    kind = draw(st.sampled_from(["golden", "rubric", "trajectory"]))
    expected: dict[str, Any] = {"kind": kind}
    if kind == "golden":
        expected["match"] = {"strategy": "exact", "value": "ok"}
    if kind == "rubric":
        expected["rubric"] = [{"criterion": "polite", "weight": 1.0}]
    if kind == "trajectory" or draw(st.booleans()):
        trajectory: dict[str, Any] = {
            "match": draw(st.sampled_from(["exact", "in-order", "any-order", "subset"])),
            "calls": draw(expected_calls()),
        }
        forbidden = draw(st.lists(st.sampled_from(["c", "d"]), unique=True, max_size=2))
        if forbidden:
            trajectory["forbidden"] = forbidden
        expected["trajectory"] = trajectory
    document: dict[str, Any] = {"taskId": "t", "input": {}, "expected": expected}
    if draw(st.booleans()):
        document["fixtures"] = {
            "onMiss": "fail",
            "toolResponses": [{"tool": tool} for tool in draw(st.lists(st.sampled_from(TOOLS)))],
        }
    return Task.model_validate(document)


@st.composite
def views(draw: st.DrawFn) -> TrialView:
    calls = [
        ObservedCall(draw(st.sampled_from(TOOLS)), draw(ARGS), draw(st.sampled_from([AGENT, "x"])))
        for _ in range(draw(st.integers(0, 4)))
    ]
    view = TrialView(task_id="t", trial_index=0, root_event_id="e", root_agent_id=AGENT)
    view.calls = calls
    if len(calls) > 0 and draw(st.booleans()):
        view.failed_closed = True
        view.missed_tools = [calls[-1].tool]
        view.fixture_misses = 1
    view.error_label = draw(st.sampled_from([None, *ERROR_LABELS]))
    view.outcome = "failed" if view.error_label else "completed"
    if draw(st.booleans()):
        view.has_output, view.output = True, draw(st.sampled_from(["ok", "nope", 1, None]))
    return view


def single_kind(task: Task, view: TrialView, verdict: Verdict) -> FailureKind:
    """The kind the one-reason precedence gave (budget skip, not run, fixture miss, agent
    failure, judge or grader error, trajectory, below passScore, output mismatch)."""
    if verdict.label == "skipped-budget":
        return "skipped-budget"
    if not view.ran and view.scored is None:
        return "not-run"
    if view.failed_closed:
        return "fixture-miss"
    if view.error_label in ERROR_LABELS:
        return view.error_label  # type: ignore[return-value]
    if verdict.label in ("grader-error", "unscored"):
        return "judge-error" if task.expected.kind == "rubric" else "grader-error"
    if task.expected.trajectory is not None and verdict.trajectory_matched is False:
        return "trajectory"
    if task.expected.kind == "rubric":
        return "below-pass-score"
    return "grader-error" if task.expected.match is None else "output-mismatch"


@settings(max_examples=examples(400), deadline=None)
@given(
    task=tasks(),
    view=views(),
    judge=st.one_of(st.none(), st.sampled_from([0.0, 0.5, 1.0])),
    pass_score=st.sampled_from([0.5, 1.0]),
    skipped=st.booleans(),
)
def test_0244_B_reasons_are_empty_exactly_for_a_passed_trial_and_keep_the_kind(
    task: Task, view: TrialView, judge: float | None, pass_score: float, skipped: bool
) -> None:
    if skipped:  # a budget skip: never ran, scored 0 with its label
        view = TrialView(task_id="t", trial_index=0)
        view.scored = EvalScored(taskId="t", score=0.0, passed=False, scoreLabel="skipped-budget")
        verdict = Verdict(False, 0.0, "skipped-budget", None, pass_score)
    else:
        grade = grade_trial(
            task, view, target_agent_id=AGENT, pass_score=pass_score, judge_score=judge
        )
        matched = grade.trajectory.matched if grade.trajectory is not None else None
        verdict = Verdict(grade.passed, grade.score, grade.label, matched, pass_score)
    failed = explain(task, view, verdict, target_agent_id=AGENT)
    if verdict.passed:
        assert failed is None
        return
    assert failed is not None
    reasons = failed.every_reason
    assert reasons
    assert len(reason_texts(failed)) == len(reasons)
    assert all(text for text in reason_texts(failed))
    assert failed.kind == single_kind(task, view, verdict)
    assert (failed.kind, failed.message) in {(r.kind, r.message) for r in reasons}
    trajectory = task.expected.trajectory
    forbidden = trajectory is not None and any(
        call.tool in trajectory.forbidden_tools
        for call in view.calls
        if trajectory.include_delegates or call.agent_id == AGENT
    )
    if forbidden and not skipped:
        assert reasons[0].kind == "trajectory"
        assert reasons[0].message.startswith("forbidden tool ")
    else:
        assert reasons[0].kind == failed.kind
    assert len({r.message for r in reasons}) == len(reasons)  # no reason said twice
