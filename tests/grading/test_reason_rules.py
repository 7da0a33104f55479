""":func:`wopeval.grading.reasons.explain` rule by rule over hand-built views (store-free): the
fallback when nothing in the log explains a failed score, the bounded list of fixture misses,
and the one-line wording of no reason."""

from __future__ import annotations

from typing import Any

import pytest

from tests.grading.reason_cases import SCRIPTED
from wopeval.grading.reasons import Verdict, explain, reason_line, reason_texts
from wopeval.grading.trajectory import ObservedCall
from wopeval.grading.views import TrialView
from wopeval.suite.models import Task
from wopeval.wire.events import EvalScored, Failure, FailureReason, TrialFailed

MATCH = {"strategy": "exact", "value": "ok"}


def _task(expected: dict[str, Any], fixtures: dict[str, Any] | None = None) -> Task:
    doc: dict[str, Any] = {"taskId": "t", "input": {}, "expected": expected}
    if fixtures is not None:
        doc["fixtures"] = fixtures
    return Task.model_validate(doc)


def _view(output: Any = None, *, has_output: bool = True) -> TrialView:
    view = TrialView(task_id="t", trial_index=0, root_event_id="e")
    view.output, view.has_output = output, has_output
    return view


def _failed(score: float = 0.0, pass_score: float = 1.0, label: str | None = None) -> Verdict:
    """A failed verdict that nothing in the view explains (a recorded score, say)."""
    return Verdict(False, score, label, None, pass_score)


def _explained(task: Task, view: TrialView, verdict: Verdict) -> TrialFailed:
    failed = explain(task, view, verdict, target_agent_id=SCRIPTED)
    assert failed is not None
    return failed


def test_a_passed_trial_has_no_reason() -> None:
    verdict = Verdict(True, 1.0, None, None, 1.0)
    assert explain(_task({"kind": "golden", "match": MATCH}), _view("ok"), verdict,
                   target_agent_id=SCRIPTED) is None  # fmt: skip


def test_0244_B_a_judge_score_above_pass_score_that_failed_falls_back_to_the_judge_reason() -> None:
    """A rubric trial scored 0.9 against passScore 0.8 but recorded failed: the output reason
    is empty (0.9 ≥ 0.8), so the fallback gives the judge's own reason, with its numbers."""
    task = _task({"kind": "rubric", "rubric": [{"criterion": "polite", "weight": 1}]})
    failed = _explained(task, _view("hi"), _failed(0.9, 0.8, "judged"))
    assert (failed.kind, failed.message) == (
        "below-pass-score",
        "judge score 0.9 is below passScore 0.8",
    )
    assert failed.details == {"score": 0.9, "passScore": 0.8}
    assert failed.reasons is None


def test_0244_B_a_judge_score_below_pass_score_is_the_output_reason() -> None:
    task = _task({"kind": "rubric", "rubric": [{"criterion": "polite", "weight": 1}]})
    failed = _explained(task, _view("hi"), _failed(0.25, 0.5))
    assert (failed.kind, failed.message) == (
        "below-pass-score",
        "judge score 0.25 is below passScore 0.5",
    )
    assert failed.details == {"score": 0.25, "passScore": 0.5}


def test_0244_A_a_matching_golden_output_that_failed_falls_back_to_the_mismatch() -> None:
    failed = _explained(_task({"kind": "golden", "match": MATCH}), _view("ok"), _failed())
    assert (failed.kind, failed.message) == (
        "output-mismatch",
        'output does not match (exact): expected "ok", got "ok"',
    )
    assert failed.details == {"strategy": "exact", "expected": "ok", "output": "ok"}


def test_a_trajectory_task_without_an_output_match_falls_back_to_no_expectation() -> None:
    task = _task({"kind": "trajectory", "trajectory": {"match": "subset", "calls": []}})
    failed = _explained(task, _view("anything"), _failed())
    assert (failed.kind, failed.message, failed.details) == (
        "grader-error",
        "no expectation to grade against",
        {},
    )


@pytest.mark.parametrize(
    ("view", "message", "details"),
    [
        (_view(has_output=False), "the agent gave no output", {"expected": "ok"}),
        (
            _view("no"),
            'output does not match (exact): expected "ok", got "no"',
            {"strategy": "exact", "expected": "ok", "output": "no"},
        ),
    ],
)
def test_a_trajectory_task_with_an_output_match_falls_back_to_the_output(
    view: TrialView, message: str, details: dict[str, Any]
) -> None:
    """``kind: trajectory`` does not grade the output on its own; when the trajectory is not
    what failed, the output beside it is the reason."""
    task = _task(
        {"kind": "trajectory", "match": MATCH, "trajectory": {"match": "subset", "calls": []}}
    )
    failed = _explained(task, view, _failed())
    assert (failed.kind, failed.message, failed.details) == ("output-mismatch", message, details)


def _missed(count: int, entries: list[dict[str, Any]] | None = None) -> TrialFailed:
    """A trial failed closed on ``count`` misses, tools m0, m1, …, read from a log."""
    fixtures: dict[str, Any] = {"onMiss": "fail"}
    if entries is not None:
        fixtures["toolResponses"] = entries
    task = _task({"kind": "golden", "match": MATCH}, fixtures)
    view = _view("ok")
    view.calls = [ObservedCall(f"m{i}", {}, SCRIPTED) for i in range(count)]
    view.failed_closed = True
    view.missed_tools = [f"m{i}" for i in range(count)]
    view.miss_served = [0] * count
    view.miss_calls = list(range(count))
    view.fixture_misses = count
    return _explained(task, view, _failed(0.0, 1.0, "fixture-miss"))


def _clause(i: int) -> str:
    return f"no unconsumed fixture matched the call to m{i} (the task has no toolResponses)"


@pytest.mark.parametrize(
    ("count", "more"),
    [(1, None), (3, None), (4, "and 1 more misses"), (6, "and 3 more misses")],
)
def test_0244_D_three_misses_are_named_then_the_rest_counted(count: int, more: str | None) -> None:
    failed = _missed(count)
    clauses = [_clause(i) for i in range(min(count, 3))] + ([more] if more else [])
    assert failed.kind == "fixture-miss"
    assert failed.message == "fixture miss (onMiss: fail): " + "; ".join(clauses)
    assert failed.details["missedTools"] == [f"m{i}" for i in range(count)]
    assert len(failed.details["misses"]) == count  # every miss is in the details


def test_0244_D_a_miss_names_the_unconsumed_entries_and_how_the_arguments_differ() -> None:
    entries: list[dict[str, Any]] = [
        {"tool": "m0", "args": {"id": "A"}, "argsMatch": "exact"},
        {"tool": "x"},
    ]
    failed = _missed(1, entries)
    assert failed.message == (
        "fixture miss (onMiss: fail): no unconsumed fixture matched the call to m0 "
        '(unconsumed then: #0 m0 (id: expected "A", got nothing), #1 x)'
    )
    assert failed.details["fixturesLeft"] == [{"index": 0, "tool": "m0"}, {"index": 1, "tool": "x"}]


def test_0244_D_a_miss_lists_only_entries_not_served_before_it_under_their_own_args_match() -> None:
    """Entry #0 was served before the miss, so it is not listed (the later ones still are);
    #1 (``exact``) names the first two of its three differences (a differing, a missing and an
    extra key); #2 (``argsMatch`` absent: ignore) never differs."""
    entries = [
        {"tool": "m0", "args": {"id": "B"}, "argsMatch": "exact"},
        {"tool": "m0", "args": {"id": "A", "y": 2}, "argsMatch": "exact"},
        {"tool": "m0", "args": {"id": "A"}},
    ]
    fixtures = {"onMiss": "fail", "toolResponses": entries}
    task = _task({"kind": "golden", "match": MATCH}, fixtures)
    view = _view("ok")
    view.calls = [
        ObservedCall("m0", {"id": "B"}, SCRIPTED),
        ObservedCall("m0", {"id": "B", "x": 1}, SCRIPTED),
    ]
    view.fixture_indexes = [0]
    view.failed_closed = True
    view.missed_tools, view.miss_served, view.miss_calls = ["m0"], [1], [1]
    failed = _explained(task, view, _failed(0.0, 1.0, "fixture-miss"))
    assert failed.message == (
        "fixture miss (onMiss: fail): no unconsumed fixture matched the call to m0 "
        '(unconsumed then: #1 m0 (id: expected "A", got "B"; y: expected 2, got nothing), #2 m0)'
    )
    assert failed.details["misses"][0]["left"] == [
        {
            "index": 1,
            "tool": "m0",
            "differences": [
                {"path": "id", "expected": "A", "observed": "B"},
                {"path": "y", "expected": 2},
                {"path": "x", "observed": 1},
            ],
        },
        {"index": 2, "tool": "m0"},
    ]


def test_0244_D_a_view_whose_miss_lists_do_not_line_up_is_read_as_not_from_a_log() -> None:
    """Hostile input: a hand-built view where one of its per-miss lists is shorter than its
    missed tools (the other lines up) is explained from the served entries, not refused."""
    for served, calls in (([0, 0], []), ([], [None, None])):
        task = _task({"kind": "golden", "match": MATCH}, {"onMiss": "fail", "toolResponses": []})
        view = _view("ok")
        view.failed_closed = True
        view.missed_tools = ["a", "b"]
        view.miss_served, view.miss_calls = list(served), list(calls)
        failed = _explained(task, view, _failed(0.0, 1.0, "fixture-miss"))
        assert [m["tool"] for m in failed.details["misses"]] == ["a", "b"]


def test_no_reason_reads_as_its_status_on_one_line_too() -> None:
    """Only ``missing`` has words of its own; any other status says no reason was recorded."""
    assert reason_line(None, "missing") == "planned but not in this log"
    assert reason_line(None) == reason_line(None, "fail") == "no reason recorded"
    assert reason_texts(None, "error") == ["no reason recorded"]
    two = TrialFailed(taskId="t", trialIndex=0, kind="trajectory", message="a",
                      reasons=[FailureReason(kind="trajectory", message="a"),
                               FailureReason(kind="output-mismatch", message="b")])  # fmt: skip
    assert reason_line(two, "missing") == "a · b"  # a recorded reason wins over the status


GOLDEN_OK = {"kind": "golden", "match": MATCH}


def test_0244_B_a_budget_skip_and_a_trial_never_run_have_that_one_reason() -> None:
    task = _task(GOLDEN_OK)
    never = TrialView(task_id="t", trial_index=0)
    skipped = _explained(task, never, _failed(0.0, 1.0, "skipped-budget"))
    assert (skipped.kind, skipped.message, skipped.reasons) == (
        "skipped-budget",
        "not run: a cost ceiling was exceeded before it started",
        None,
    )
    not_run = _explained(task, never, _failed())
    assert (not_run.kind, not_run.message, not_run.details) == (
        "not-run",
        "planned but never run (no events recorded for it)",
        {},
    )
    # A score recorded without a bracket (an imported log) is explained by its expectation.
    scored = TrialView(task_id="t", trial_index=0, has_output=False)
    scored.scored = EvalScored(taskId="t", score=0.0, passed=False, trialIndex=0)
    assert _explained(task, scored, _failed()).message == "the agent gave no output"


def _erred(label: str, failure: Failure | None, output: bool = False) -> TrialFailed:
    view = _view("nope" if output else None, has_output=output)
    view.error_label, view.failure = label, failure
    return _explained(_task(GOLDEN_OK), view, _failed(0.0, 1.0, label))


def test_0244_A_an_agent_failure_is_the_reason_with_its_exception_and_no_output_reason() -> None:
    """An agent that raised: its exception type and message, the failure as details (without
    absent members); the output it did not give is not a second reason."""
    boom = Failure(exceptionType="ValueError", message="boom", traceback="tb")
    failed = _erred("agent-error", boom)
    assert (failed.kind, failed.message, failed.reasons) == (
        "agent-error",
        "agent-error: ValueError: boom",
        None,
    )
    assert failed.details == {"exceptionType": "ValueError", "message": "boom", "traceback": "tb"}
    infra = _erred("infrastructure", Failure(exceptionType="OSError", message="disk"))
    assert (infra.kind, infra.message) == ("infrastructure", "infrastructure: OSError: disk")
    assert infra.details == {"exceptionType": "OSError", "message": "disk"}
    # A timeout did not raise: its message alone, though the failure names a type.
    timeout = _erred("timeout", Failure(exceptionType="TimeoutError", message="after 5 s"), True)
    assert (timeout.kind, timeout.message, timeout.reasons) == (
        "timeout",
        "timeout: after 5 s",
        None,
    )
    cancelled = _erred("cancelled", None)
    assert (cancelled.kind, cancelled.message, cancelled.details) == (
        "cancelled",
        "cancelled: cancelled",
        {},
    )


def test_a_reason_message_is_cut_at_300_characters() -> None:
    failed = _erred("agent-error", Failure(message="x" * 400))
    assert failed.message == ("agent-error: " + "x" * 400)[:300]
    assert len(failed.message) == 300


@pytest.mark.parametrize(
    ("expected", "label", "grader_error", "kind", "message"),
    [
        (GOLDEN_OK, None, "KeyError: k", "grader-error", "grader-error: KeyError: k"),
        (GOLDEN_OK, "grader-error", None, "grader-error", "grader-error: no score was recorded"),
        (GOLDEN_OK, "unscored", None, "grader-error", "grader-error: no score was recorded"),
        (
            {"kind": "rubric", "rubric": [{"criterion": "polite", "weight": 1}]},
            "unscored",
            None,
            "judge-error",
            "judge-error: no score was recorded",
        ),
        (GOLDEN_OK, "infrastructure", "judge down", "infrastructure", "infrastructure: judge down"),
    ],
)
def test_a_grader_or_judge_error_is_the_reason_and_the_output_is_not_graded(
    expected: dict[str, Any], label: str | None, grader_error: str | None, kind: str, message: str
) -> None:
    """The output "nope" does not match, but a grader that failed leaves it ungraded."""
    failed = explain(_task(expected), _view("nope"), _failed(0.0, 1.0, label),
                     target_agent_id=SCRIPTED, grader_error=grader_error)  # fmt: skip
    assert failed is not None
    assert (failed.kind, failed.message, failed.reasons) == (kind, message, None)


def test_0244_A_a_golden_trial_without_output_names_what_was_expected() -> None:
    failed = _explained(_task(GOLDEN_OK), _view(has_output=False), _failed())
    assert (failed.kind, failed.message, failed.details) == (
        "output-mismatch",
        "the agent gave no output",
        {"expected": "ok"},
    )


def test_0244_B_a_judge_score_at_pass_score_is_no_reason_beside_a_failed_trajectory() -> None:
    """A tie meets passScore: the trajectory is the only reason."""
    task = _task({"kind": "rubric", "rubric": [{"criterion": "polite", "weight": 1}],
                  "trajectory": {"match": "any-order", "calls": [{"tool": "a"}]}})  # fmt: skip
    verdict = Verdict(False, 0.5, "judged", False, 0.5)
    failed = _explained(task, _view("hi"), verdict)
    assert reason_texts(failed) == ["trajectory (any-order): missing a"]
    below = _explained(task, _view("hi"), Verdict(False, 0.25, "judged", False, 0.5))
    assert reason_texts(below) == [
        "trajectory (any-order): missing a",
        "judge score 0.25 is below passScore 0.5",
    ]


def _closed_on(entries: int, missed: list[str], output: Any, expected: dict[str, Any]) -> Any:
    """A trial failed closed with ``entries`` unconsumed entries (tools e0, e1, …)."""
    responses = [{"tool": f"e{i}"} for i in range(entries)]
    task = _task(expected, {"onMiss": "fail", "toolResponses": responses})
    view = _view(output)
    view.failed_closed = True
    view.missed_tools = list(missed)
    view.miss_served, view.miss_calls = [0] * len(missed), [None] * len(missed)
    return reason_texts(_explained(task, view, _failed(0.0, 0.5, "fixture-miss")))


@pytest.mark.parametrize(
    ("entries", "listed"),
    [
        (5, "#0 e0, #1 e1, #2 e2, #3 e3, #4 e4"),
        (6, "#0 e0, #1 e1, #2 e2, #3 e3, #4 e4 and 1 more"),
        (8, "#0 e0, #1 e1, #2 e2, #3 e3, #4 e4 and 3 more"),
    ],
)
def test_0244_D_a_miss_lists_five_unconsumed_entries_then_counts_the_rest(
    entries: int, listed: str
) -> None:
    assert _closed_on(entries, ["m"], "ok", GOLDEN_OK) == [
        f"fixture miss (onMiss: fail): no unconsumed fixture matched the call to m "
        f"(unconsumed then: {listed})"
    ]


def test_0244_D_failed_closed_without_a_missed_tool_still_says_a_call_missed() -> None:
    assert _closed_on(1, [], "ok", GOLDEN_OK) == [
        "fixture miss (onMiss: fail): no unconsumed fixture matched a call"
    ]


def test_0244_D_a_golden_output_is_graded_beside_a_miss_and_a_judges_is_not() -> None:
    """Failed closed: a golden output is still compared (its own reason after the miss); a
    rubric score is 0 whatever the judge said, so its output is no second reason."""
    miss = "fixture miss (onMiss: fail): no unconsumed fixture matched the call to m " + (
        "(unconsumed then: #0 e0)"
    )
    golden = _closed_on(1, ["m"], "no", GOLDEN_OK)
    assert golden == [miss, 'output does not match (exact): expected "ok", got "no"']
    rubric = {"kind": "rubric", "rubric": [{"criterion": "polite", "weight": 1}]}
    assert _closed_on(1, ["m"], "no", rubric) == [miss]


def test_0244_A_a_trajectory_task_does_not_grade_its_output_beside_the_trajectory() -> None:
    task = _task(
        {
            "kind": "trajectory",
            "match": MATCH,
            "trajectory": {"match": "any-order", "calls": [{"tool": "a"}]},
        }
    )
    failed = _explained(task, _view("no"), Verdict(False, 0.0, None, False, 1.0))
    assert reason_texts(failed) == ["trajectory (any-order): missing a"]
    golden = _task({**GOLDEN_OK, "trajectory": {"match": "any-order", "calls": [{"tool": "a"}]}})
    both = _explained(golden, _view("no"), Verdict(False, 0.0, None, False, 1.0))
    assert reason_texts(both) == [
        "trajectory (any-order): missing a",
        'output does not match (exact): expected "ok", got "no"',
    ]
