"""Field paths and the plain-sentence rewrite of pydantic errors."""

from __future__ import annotations

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
)
from wopeval.suite.load import parse_suite
from wopeval.suite.models import AgentEvalSuite, ExpectedCall, Trials


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
    assert show("x" * 100).endswith("…")
    assert len(show("x" * 100)) == 60


def test_type_at_follows_the_models() -> None:
    assert type_at(AgentEvalSuite, ("trials",)) is Trials
    assert type_at(AgentEvalSuite, ("tasks", 0, "expected", "trajectory", "calls", 1)) is (
        ExpectedCall
    )
    assert type_at(AgentEvalSuite, ("tasks", 0, "nope")) is None
    assert type_at(AgentEvalSuite, ("suiteId", 0)) is None


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
