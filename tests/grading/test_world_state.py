"""Issue 33 §3: final-state grading, pure — exact and subset under the ``argsMatch`` number and
boolean policy, the first differing JSON Pointer, and fail closed without a recorded state."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.hypothesis_counts import examples
from wopeval.grading.argdiff import ABSENT
from wopeval.grading.jsonmatch import args_match
from wopeval.grading.trial import LABEL_STATE, grade_trial, recorded_outcome
from wopeval.grading.views import TrialView
from wopeval.grading.world_state import (
    StateDifference,
    final_state_matched,
    state_differences,
    state_matches,
)
from wopeval.suite import parse_suite
from wopeval.suite.models import Task
from wopeval.suite.world import FinalState
from wopeval.wire.events import EvalScored


def final(match: str, state: Any) -> FinalState:
    return FinalState.model_validate({"match": match, "state": state})


def task(expected: dict[str, Any]) -> Task:
    doc = {
        "suiteId": "core.test.evals.w",
        "version": "1.0.0",
        "modes": ["golden"],
        "tasks": [
            {"taskId": "t", "input": 1, "expected": expected,
             "x-wopeval-world": {"tools": {"get": [{}]}}},
        ],
    }  # fmt: skip
    return parse_suite(doc).tasks[0]


def view(state: Any = ABSENT, output: Any = 1) -> TrialView:
    v = TrialView(task_id="t", trial_index=0, root_event_id="root", outcome="completed")
    v.output, v.has_output = output, True
    if state is not ABSENT:
        v.world_state, v.has_world_state = state, True
    return v


STATE = {"kind": "trajectory", "x-wopeval-finalState": {"match": "subset", "state": {"n": 1}}}
GOLDEN = {
    "kind": "golden",
    "match": {"strategy": "exact", "value": 1},
    "x-wopeval-finalState": {"match": "exact", "state": {"n": 1}},
}


@pytest.mark.parametrize(
    ("match", "want", "got", "matched"),
    [
        ("exact", {"n": 1}, {"n": 1.0}, True),  # numbers by value
        ("exact", {"n": 0}, {"n": -0.0}, True),
        ("exact", {"n": 1}, {"n": True}, False),  # a boolean is never a number
        ("exact", {"n": False}, {"n": 0}, False),
        ("exact", {"n": "1"}, {"n": 1}, False),
        ("exact", {"n": 1}, {"n": 1, "m": 2}, False),  # exact: no extra keys
        ("subset", {"n": 1}, {"n": 1, "m": 2}, True),  # subset: extra keys are fine
        ("subset", {"a": {"b": 1}}, {"a": {"b": 1.0, "c": 3}}, True),  # recursively
        ("subset", {"a": [1]}, {"a": [1, 2]}, False),  # arrays are compared whole
        ("subset", {}, {"any": "thing"}, True),
        ("subset", {}, [], False),
        ("exact", [1, {"a": None}], [1.0, {"a": None}], True),
        ("exact", None, None, True),
    ],
)
def test_33_3_final_state_exact_and_subset_follow_the_argsmatch_policy(
    match: str, want: Any, got: Any, matched: bool
) -> None:
    assert state_matches(final(match, want), got) is matched
    assert (state_differences(final(match, want), got) == []) is matched


def test_33_3_the_first_differing_pointer_is_named_with_both_values() -> None:
    want = {"bookings": {"A/B": {"status": "cancelled", "refunds": 1}}, "log": [1, 2]}
    got = {"bookings": {"A/B": {"status": "open", "refunds": 1}}, "log": [1, 3], "x": 0}
    differences = state_differences(final("exact", want), got)
    assert [d.text() for d in differences] == [
        '/bookings/A~1B/status: expected "cancelled", got "open"',
        "/log/1: expected 2, got 3",
        "/x: expected nothing, got 0",
    ]


def test_33_3_a_missing_key_and_a_type_change_are_differences() -> None:
    differences = state_differences(final("subset", {"a": {"b": 1}, "c": 2}), {"a": 5})
    assert differences == [StateDifference("/a", {"b": 1}, 5), StateDifference("/c", 2, ABSENT)]
    assert differences[1].to_json() == {"pointer": "/c", "expected": 2}
    whole = state_differences(final("exact", [1]), [1, 2])
    assert [d.text() for d in whole] == ["(the whole state): expected [1], got [1, 2]"]


def test_33_3_differences_are_capped() -> None:
    want = {f"k{i}": i for i in range(30)}
    assert len(state_differences(final("exact", want), {})) == 20
    assert len(state_differences(final("exact", {}), want, limit=3)) == 3


def test_33_3_a_value_that_is_not_json_matches_nothing() -> None:
    assert state_matches(final("exact", {"n": 1}), {"n": float("nan")}) is False
    assert state_differences(final("exact", {"n": 1}), {"n": object()})[0].pointer == "/n"


def test_33_3_no_recorded_state_fails_closed() -> None:
    assert final_state_matched(task(STATE), view()) is False
    assert final_state_matched(task(STATE), view({"n": 1})) is True
    plain = parse_suite(
        {"suiteId": "core.test.evals.w", "version": "1.0.0", "modes": ["golden"],
         "tasks": [{"taskId": "t", "input": 1,
                    "expected": {"kind": "golden", "match": {"strategy": "exact", "value": 1}}}]}
    ).tasks[0]  # fmt: skip
    assert final_state_matched(plain, view()) is None


@pytest.mark.parametrize(
    ("expected", "state", "passed", "score", "label"),
    [
        (STATE, {"n": 1, "m": 0}, True, 1.0, "pass"),
        (STATE, {"n": 2}, False, 0.0, LABEL_STATE),
        (STATE, ABSENT, False, 0.0, LABEL_STATE),
        (GOLDEN, {"n": 1}, True, 1.0, "pass"),
        (GOLDEN, {"n": 1, "m": 0}, False, 1.0, LABEL_STATE),  # the output score stays
    ],
)
def test_33_3_a_trial_passes_only_if_every_declared_expectation_holds(
    expected: dict[str, Any], state: Any, passed: bool, score: float, label: str
) -> None:
    grade = grade_trial(task(expected), view(state), target_agent_id="a", pass_score=1.0)
    assert (grade.passed, grade.score, grade.label, grade.gated) == (passed, score, label,
                                                                     not passed)  # fmt: skip


def test_33_3_a_wrong_output_with_the_right_state_fails_as_an_output() -> None:
    grade = grade_trial(task(GOLDEN), view({"n": 1}, output=2), target_agent_id="a",
                        pass_score=1.0)  # fmt: skip
    assert (grade.passed, grade.label, grade.gated) == (False, "fail", False)


def test_33_3_a_recorded_pass_that_the_logged_state_contradicts_is_gated() -> None:
    v = view({"n": 2})
    v.scored = EvalScored(taskId="t", score=1.0, passed=True, scoreLabel="pass")
    outcome = recorded_outcome(task(STATE), v, "a")
    assert outcome is not None
    assert (outcome.passed, outcome.gated) == (False, True)


json_leaf = st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from([0.0, 1.0, 1.5, "a"])
json_values = st.recursive(
    json_leaf,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["a", "b", "c/d"]), inner, max_size=3)
    ),
    max_leaves=12,
)


@settings(max_examples=examples(300), deadline=None)
@given(st.sampled_from(["exact", "subset"]), json_values, json_values)
def test_33_3_a_difference_is_reported_exactly_when_the_matcher_says_no(
    match: str, want: Any, got: Any
) -> None:
    if match == "subset" and not isinstance(want, dict):
        want = {"k": want}
    expected = final(match, want)
    matched = args_match(match, want, got)  # type: ignore[arg-type]
    assert state_matches(expected, got) is matched
    assert (state_differences(expected, got, limit=1000) == []) is matched


def test_33_3_exact_inside_arrays_and_the_limit_on_array_items() -> None:
    inner = state_differences(final("exact", [{"a": 1}]), [{"a": 1, "b": 2}])
    assert [d.to_json() for d in inner] == [{"pointer": "/0/b", "observed": 2}]
    assert len(state_differences(final("exact", [0] * 5), [1] * 5, limit=3)) == 3
