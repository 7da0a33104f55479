"""Suite rules that are not schema conditionals (RFC 0244 §A, §B, §D; RFC 0081 §A)."""

from __future__ import annotations

from typing import Any

import pytest

from wopeval.suite import AgentEvalSuite, FieldError
from wopeval.suite.rules import check_raw_rules, check_rules

GOLDEN: dict[str, Any] = {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}}


def suite(*tasks: dict[str, Any], **changes: Any) -> AgentEvalSuite:
    """A schema-valid suite (built without the rules, which are what is under test)."""
    data: dict[str, Any] = {
        "suiteId": "core.acme.evals.demo",
        "version": "1.0.0",
        "modes": ["golden"],
        "tasks": list(tasks) or [task("t")],
        **changes,
    }
    return AgentEvalSuite.model_validate(data, strict=True)


def task(task_id: str, expected: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    return {"taskId": task_id, "input": {}, "expected": expected or GOLDEN, **extra}


def trajectory(*calls: dict[str, Any], kind: str = "trajectory") -> dict[str, Any]:
    return {"kind": kind, "trajectory": {"match": "in-order", "calls": list(calls)}}


def test_a_valid_suite_has_no_rule_errors() -> None:
    assert check_rules(suite()) == []


# --- RFC 0244 §A grading rule: what each kind carries ------------------------------------


def test_0244_A_trajectory_kind_carries_no_match_or_rubric() -> None:
    expected = {
        **trajectory({"tool": "a"}),
        "match": {"strategy": "exact", "value": "ok"},
        "rubric": [{"criterion": "c", "weight": 1}],
    }
    why = "not allowed when kind is 'trajectory' (the task is graded on its tool path alone)"
    assert check_rules(suite(task("t", expected))) == [
        FieldError("tasks[0].expected.match", why),
        FieldError("tasks[0].expected.rubric", why),
    ]


def test_0244_A_trajectory_kind_requires_a_trajectory() -> None:
    assert check_rules(suite(task("t", {"kind": "trajectory"}))) == [
        FieldError("tasks[0].expected.trajectory", "required when kind is 'trajectory'")
    ]


def test_0081_A_golden_requires_match_and_rubric_requires_rubric() -> None:
    errors = check_rules(suite(task("a", {"kind": "golden"}), task("b", {"kind": "rubric"})))
    assert errors == [
        FieldError("tasks[0].expected.match", "required when kind is 'golden'"),
        FieldError("tasks[1].expected.rubric", "required when kind is 'rubric'"),
    ]


def test_0244_A_golden_and_rubric_may_add_a_trajectory() -> None:
    expected = {**GOLDEN, "trajectory": {"match": "exact", "calls": []}}
    assert check_rules(suite(task("t", expected))) == []


# --- RFC 0244 §B: 1 ≤ k ≤ count ----------------------------------------------------------


@pytest.mark.parametrize(
    ("trials", "errors"),
    [
        ({"count": 5, "k": 5}, []),
        ({"count": 5, "k": 1}, []),
        ({"count": 5}, []),
        ({"k": 1}, []),
        ({"count": 5, "k": 6}, [FieldError("trials.k", "6 exceeds trials.count 5")]),
        (
            {"k": 2},
            [FieldError("trials.k", "2 exceeds the trial count 1 (trials.count is absent, so 1)")],
        ),
    ],
)
def test_0244_B_k_is_at_most_count(trials: dict[str, Any], errors: list[FieldError]) -> None:
    assert check_rules(suite(trials=trials)) == errors


# --- RFC 0244 §A/§D: argsMatch needs args -------------------------------------------------


@pytest.mark.parametrize("mode", ["exact", "subset"])
def test_0244_A_args_match_requires_args_on_calls(mode: str) -> None:
    expected = trajectory({"tool": "a", "argsMatch": mode})
    assert check_rules(suite(task("t", expected))) == [
        FieldError(
            "tasks[0].expected.trajectory.calls[0].args", f"required when argsMatch is {mode!r}"
        )
    ]


@pytest.mark.parametrize("mode", ["exact", "subset"])
def test_0244_D_args_match_requires_args_on_tool_responses(mode: str) -> None:
    fixtures = {"toolResponses": [{"tool": "a"}, {"tool": "b", "argsMatch": mode, "args": None}]}
    assert check_rules(suite(task("t", fixtures=fixtures))) == [
        FieldError(
            "tasks[0].fixtures.toolResponses[1].args",
            f"must not be null when argsMatch is {mode!r}",
        )
    ]


@pytest.mark.parametrize(("args", "got"), [([1, 2], "array"), ("x", "string"), (3, "integer")])
def test_0244_A_subset_args_must_be_an_object(args: object, got: str) -> None:
    expected = trajectory({"tool": "a", "args": args, "argsMatch": "subset"})
    fixtures = {"toolResponses": [{"tool": "a", "args": args, "argsMatch": "subset"}]}
    message = f"must be an object when argsMatch is 'subset' (got {got})"
    assert check_rules(suite(task("t", expected, fixtures=fixtures))) == [
        FieldError("tasks[0].expected.trajectory.calls[0].args", message),
        FieldError("tasks[0].fixtures.toolResponses[0].args", message),
    ]


def test_0244_A_exact_args_may_be_any_json_and_ignore_needs_none() -> None:
    expected = trajectory(
        {"tool": "a", "args": [1, 2], "argsMatch": "exact"},
        {"tool": "b", "argsMatch": "ignore"},
        {"tool": "c", "args": {"x": 1}, "argsMatch": "subset"},
    )
    assert check_rules(suite(task("t", expected))) == []


# --- RFC 0081 §A: sets and unique ids -------------------------------------------------------


def test_0081_A_modes_and_allowed_models_are_sets() -> None:
    s = suite(modes=["golden", "rubric", "golden"], allowedModels=["general", "general"])
    assert check_rules(s) == [
        FieldError("modes[2]", "duplicate 'golden' (already at modes[0])"),
        FieldError("allowedModels[1]", "duplicate 'general' (already at allowedModels[0])"),
    ]


def test_0081_A_task_ids_are_suite_unique() -> None:
    s = suite(task("a"), task("b"), task("a"), task("a"))
    assert check_rules(s) == [
        FieldError("tasks[2].taskId", "duplicate taskId 'a' (already used by tasks[0])"),
        FieldError("tasks[3].taskId", "duplicate taskId 'a' (already used by tasks[0])"),
    ]


def test_all_rule_errors_are_reported_in_document_order() -> None:
    s = suite(
        task("a", {"kind": "golden"}),
        task("a", trajectory({"tool": "x", "argsMatch": "exact"})),
        modes=["golden", "golden"],
        trials={"count": 2, "k": 3},
    )
    assert [error.path for error in check_rules(s)] == [
        "modes[1]",
        "tasks[0].expected.match",
        "tasks[1].taskId",
        "tasks[1].expected.trajectory.calls[0].args",
        "trials.k",
    ]


# --- the rules that need no valid model (reported beside the shape errors) ------------------


def test_raw_rules_name_each_repeated_task_id_with_its_first_use() -> None:
    tasks = [1, {"taskId": 5}, {"taskId": "a"}, {"taskId": "b"}, {"taskId": "a"},
             {"taskId": "b"}, {"taskId": "a"}, {}]  # fmt: skip
    assert [str(e) for e in check_raw_rules({"tasks": tasks})] == [
        "tasks[4].taskId: duplicate taskId 'a' (already used by tasks[2])",
        "tasks[5].taskId: duplicate taskId 'b' (already used by tasks[3])",
        "tasks[6].taskId: duplicate taskId 'a' (already used by tasks[2])",
    ]


@pytest.mark.parametrize(
    ("trials", "errors"),
    [
        ({"count": 1, "k": 2}, ["trials.k: 2 exceeds trials.count 1"]),
        ({"count": 3, "k": 4}, ["trials.k: 4 exceeds trials.count 3"]),
        ({"k": 2}, ["trials.k: 2 exceeds the trial count 1 (trials.count is absent, so 1)"]),
        ({"count": 3, "k": 3}, []),
        ({"k": 1}, []),
        ({"count": 2}, []),
        ({"count": 0, "k": 2}, []),  # an invalid count or k is the schema's to name
        ({"count": True, "k": 2}, []),
        ({"count": 2, "k": "3"}, []),
        ({"count": 2.0, "k": 3}, []),
        ({"count": 2, "k": 0}, []),
    ],
)
def test_raw_rules_check_k_against_count_when_both_are_integers(
    trials: dict[str, Any], errors: list[str]
) -> None:
    assert [str(e) for e in check_raw_rules({"trials": trials, "tasks": "x"})] == errors


def test_raw_rules_of_a_document_that_is_not_an_object_find_nothing() -> None:
    assert check_raw_rules([{"taskId": "a"}, {"taskId": "a"}]) == []
    assert check_raw_rules({"tasks": {"taskId": "a"}, "trials": [2, 3]}) == []
