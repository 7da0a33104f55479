"""Field paths and the plain-sentence rewrite of pydantic errors."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from pydantic import ValidationError
from pydantic_core import ErrorDetails

from wopeval.suite.errors import (
    FieldError,
    SuiteError,
    describe,
    format_path,
    from_validation_error,
    json_type,
    show,
    type_at,
    unwrap,
)
from wopeval.suite.load import parse_suite
from wopeval.suite.models import AgentEvalSuite, ExpectedCall, RubricCriterion, Trials


@pytest.mark.parametrize(
    ("loc", "path"),
    [
        ((), "$"),
        (("suiteId",), "suiteId"),
        (("tasks", 2, "expected", "trajectory", "match"), "tasks[2].expected.trajectory.match"),
        (("modes", 0), "modes[0]"),
        (("x-vendor",), "x-vendor"),
        (("tasks", 0, "input", "a key"), 'tasks[0].input["a key"]'),
        (("tasks", 0, "input", "a.b"), 'tasks[0].input["a.b"]'),
        (("tasks", 0, "input", ""), 'tasks[0].input[""]'),
    ],
)
def test_format_path(loc: tuple[str | int, ...], path: str) -> None:
    assert format_path(loc) == path


def test_field_error_renders_path_then_message() -> None:
    error = FieldError("trials.k", "6 exceeds trials.count 5")
    assert str(error) == "trials.k: 6 exceeds trials.count 5"


def test_suite_error_keeps_every_error_and_counts_them() -> None:
    one = SuiteError([FieldError("$", "invalid JSON")], "a.json")
    assert str(one) == "a.json: invalid suite (1 error)\n  $: invalid JSON"
    two = SuiteError([FieldError("a", "x"), FieldError("b", "y")])
    assert two.source == "<suite>"
    assert two.errors == [FieldError("a", "x"), FieldError("b", "y")]
    assert "(2 errors)" in str(two)


def test_json_type_and_show() -> None:
    kinds = [json_type(v) for v in (None, True, 1, 1.5, "s", [1], {"a": 1})]
    assert kinds == ["null", "boolean", "integer", "number", "string", "array", "object"]
    assert json_type((1,)) == "tuple"  # a Python spelling, not a JSON array
    assert show("superset") == "'superset'"
    assert show(None) == "null"
    assert show({"a": [1, 2]}) == '{"a": [1, 2]}'
    assert show("x" * 58) == "'" + "x" * 58 + "'"  # 60 characters: shown whole
    assert show("x" * 59) == "'" + "x" * 58 + "…"
    assert show("x" * 100).endswith("…")
    assert len(show("x" * 100)) == 60


def test_type_at_follows_the_models() -> None:
    assert type_at(AgentEvalSuite, ("trials",)) is Trials
    assert type_at(AgentEvalSuite, ("tasks", 0, "expected", "trajectory", "calls", 1)) is (
        ExpectedCall
    )
    assert type_at(AgentEvalSuite, ("tasks", 0, "nope")) is None
    assert type_at(AgentEvalSuite, ("suiteId", 0)) is None
    assert type_at(AgentEvalSuite, ("tasks", 0, "input", "a")) is None


def test_errors_come_in_declaration_order_unknown_members_last() -> None:
    task = {"taskId": "t", "input": 1, "expected": {"kind": "golden", "match": {"strategy":
            "exact", "value": 1}}}  # fmt: skip
    data = {"trials": {"k": 0}, "tasks": [{**task, "bogus": 1}, {**task, "taskId": "T"}],
            "version": "1.0.0", "modes": ["golden"], "suiteId": "X"}  # fmt: skip
    with pytest.raises(SuiteError) as caught:
        parse_suite(data)
    assert [e.path for e in caught.value.errors] == [
        "suiteId",
        "tasks[0].bogus",
        "tasks[1].taskId",
        "trials.k",
    ]


def test_unknown_error_kinds_fall_back_to_pydantic_text() -> None:
    error: ErrorDetails = {
        "type": "some_future_kind",
        "loc": ("trials", "count"),
        "msg": "Value is odd",
        "input": 3,
    }
    assert describe(AgentEvalSuite, error) == "value is odd"


def test_every_translated_message_is_a_plain_sentence() -> None:
    bad = {
        "suiteId": 1,
        "version": "x",
        "modes": ["nope"],
        "allowedModels": "general",
        "thresholds": {"passScore": -0.5, "maxP95LatencyMs": "1"},
        "tasks": [{"taskId": "t", "input": 1, "expected": {"kind": "golden", "rubric": []}}],
        "trials": {"count": 1.5, "k": 0, "passRule": None},
    }
    with pytest.raises(ValidationError) as caught:
        AgentEvalSuite.model_validate(bad, strict=True)
    messages = {e.path: e.message for _, e in from_validation_error(caught.value, AgentEvalSuite)}
    assert messages == {
        "suiteId": "expected a string, got integer",
        "version": "'x' does not match the pattern ^[0-9]+\\.[0-9]+\\.[0-9]+$ "
        "(expected a version like 1.0.0)",
        "modes[0]": "'nope' is not one of golden, rubric, adversarial, regression, live-shadow",
        "allowedModels": "expected an array, got string",
        "thresholds.passScore": "-0.5 is less than the minimum 0",
        "thresholds.maxP95LatencyMs": "expected an integer, got string",
        "tasks[0].expected.rubric": "must have at least 1 item (got 0)",
        "trials.count": "expected an integer, got 1.5",
        "trials.k": "0 is less than the minimum 1",
    }


def _error(kind: str, value: object, loc: tuple[str | int, ...] = ("x",), **ctx: object) -> Any:
    error: dict[str, object] = {"type": kind, "loc": loc, "msg": "Pydantic text", "input": value}
    if ctx:
        error["ctx"] = ctx
    return error


@pytest.mark.parametrize(
    ("error", "message"),
    [
        (_error("missing", None), "required"),
        (_error("literal_error", "x", expected="'a', 'b-c' or 'd'"), "'x' is not one of a, b-c, d"),
        (_error("literal_error", "x"), "'x' is not one of "),
        (
            _error("string_pattern_mismatch", "x", pattern="^y$"),
            "'x' does not match the pattern ^y$",
        ),
        (_error("string_too_short", "", min_length=1), "must not be empty"),
        (_error("string_too_short", ""), "must not be empty"),
        (_error("string_too_short", "ab", min_length=3), "must be at least 3 characters"),
        (_error("string_too_long", "abcdef", max_length=5), "must be at most 5 characters"),
        (
            _error("too_short", [1], min_length=2, actual_length=1),
            "must have at least 2 items (got 1)",
        ),
        (
            _error("too_short", [], min_length=1, actual_length=0),
            "must have at least 1 item (got 0)",
        ),
        (_error("too_short", [1, 2]), "must have at least 1 item (got 2)"),
        (_error("too_short", "ab", min_length=3), "must have at least 3 items (got ?)"),
        (
            _error("too_long", [1] * 4, max_length=3, actual_length=4),
            "must have at most 3 items (got 4)",
        ),
        (_error("greater_than_equal", 0.25, ge=0.5), "0.25 is less than the minimum 0.5"),
        (_error("greater_than", 0, gt=0), "0 must be greater than 0"),
        (_error("less_than_equal", 3.0, le=2.0), "3 is greater than the maximum 2"),
        (_error("less_than", 2.0, lt=1), "2 must be less than 1"),
        (_error("int_type", 1.5), "expected an integer, got 1.5"),
        (_error("int_type", "1"), "expected an integer, got string"),
        (_error("float_type", [1]), "expected a number, got array"),
        (_error("bool_type", 0), "expected a boolean (true or false), got integer"),
        (_error("string_type", 1.5), "expected a string, got number"),
        (_error("list_type", {}), "expected an array, got object"),
        (_error("dict_type", "s"), "expected an object, got string"),
        (_error("model_type", None), "expected an object, got null"),
        (_error("greater_than_equal", float("nan"), ge=0), "nan is not a JSON number"),
        (_error("int_type", float("-inf")), "-inf is not a JSON number"),
        (_error("value_error", 1), "pydantic text"),
    ],
)
def test_describe_renders_every_kind_as_a_plain_sentence(error: Any, message: str) -> None:
    assert describe(AgentEvalSuite, error) == message


def test_an_unknown_member_lists_the_members_of_its_model() -> None:
    rubric = {"kind": "rubric", "rubric": [{"criterion": "c", "weight": 1, "score": 2}]}
    data = {"suiteId": "core.a.evals.b", "version": "1.0.0", "modes": ["rubric"],
            "tasks": [{"taskId": "t", "input": 1, "expected": rubric}]}  # fmt: skip
    with pytest.raises(SuiteError) as caught:
        parse_suite(data)
    assert [str(e) for e in caught.value.errors] == [
        "tasks[0].expected.rubric[0].score: unknown field (allowed: criterion, weight)"
    ]


def test_an_unknown_member_where_no_model_is_declared_is_named_alone() -> None:
    loc = ("tasks", 0, "input", "extra")
    assert describe(AgentEvalSuite, _error("extra_forbidden", 1, loc)) == "unknown field"


def test_unwrap_strips_annotations_and_none() -> None:
    assert unwrap(Annotated[int, "meta"] | None) is int
    assert unwrap(Annotated[list[str] | None, "meta"]) == list[str]
    assert unwrap(int | str | None) == int | str | None
    assert unwrap(str) is str
    assert type_at(AgentEvalSuite, ("tasks", 0, "expected", "rubric", 0)) is RubricCriterion


def test_show_spells_non_finite_numbers_as_json_would() -> None:
    assert show(float("nan")) == "NaN"
    assert show({1, 2}) == "{1, 2}"
