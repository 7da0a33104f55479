"""The suite models as the one validator: a document is read as JSON Schema reads JSON
(``validate_document``), a model built in code keeps Python's spellings."""

from __future__ import annotations

import math
from typing import Any

import pytest
from pydantic import ValidationError

from wopeval.suite import SuiteError, parse_suite
from wopeval.suite.models import (
    AgentEvalSuite,
    ExpectedCall,
    RubricCriterion,
    Thresholds,
    Trials,
    validate_document,
)


def minimal(**changes: Any) -> dict[str, Any]:
    suite: dict[str, Any] = {
        "suiteId": "core.acme.evals.demo",
        "version": "1.0.0",
        "modes": ["golden"],
        "tasks": [
            {
                "taskId": "t",
                "input": "hi",
                "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}},
            }
        ],
    }
    suite.update(changes)
    return suite


def with_task(**members: Any) -> dict[str, Any]:
    data = minimal()
    data["tasks"][0].update(members)
    return data


def errors_of(data: object) -> list[str]:
    with pytest.raises(SuiteError) as caught:
        parse_suite(data)
    return [str(error) for error in caught.value.errors]


def shape_errors(data: object) -> list[tuple[tuple[str | int, ...], str]]:
    with pytest.raises(ValidationError) as caught:
        validate_document(data)
    return [(tuple(e["loc"]), e["type"]) for e in caught.value.errors(include_url=False)]


# --- null: absent in a document is omitted, in code it is None ---------------------------


def test_a_document_omits_an_optional_member_and_never_writes_null() -> None:
    assert shape_errors(minimal(trials={"count": None})) == [
        (("trials", "count"), "null_not_allowed")
    ]
    assert validate_document(minimal(trials={"count": 2})).trials == Trials(count=2)


def test_code_may_pass_none_for_an_absent_member() -> None:
    assert Trials(count=None).effective_count == 1
    assert ExpectedCall(tool="t", argsMatch=None).args_match == "ignore"
    built = AgentEvalSuite.model_validate(minimal(trials=None), strict=True)
    assert built.trials is None


def test_a_required_member_that_is_null_is_a_type_error_not_an_omission() -> None:
    assert errors_of(minimal(version=None)) == ["version: expected a string, got null"]


# --- opaque content is JSON data in a document --------------------------------------------


def test_every_json_value_is_opaque_content() -> None:
    content: dict[str, Any] = {
        "a": [None, True, 0, -0.0, 1.5, "s", [], {}],
        "b": {"c": {"d": [[1]]}},
    }
    suite = validate_document(with_task(input=content))
    assert suite.tasks[0].input == content


def test_what_is_not_json_is_named_in_document_order_keys_first() -> None:
    content: dict[Any, Any] = {
        "b": [1, {"c": math.nan}],
        2: 0,
        "a": b"x",
        "d": (1,),
        "e": -math.inf,
    }
    assert errors_of(with_task(input=content)) == [
        "tasks[0].input: object keys must be strings, got integer 2",
        "tasks[0].input.b[1].c: nan is not a JSON number",
        "tasks[0].input.a: not a JSON value (bytes)",
        "tasks[0].input.d: not a JSON value (tuple)",
        "tasks[0].input.e: -inf is not a JSON number",
    ]


def test_each_opaque_member_is_json_data() -> None:
    call = {"tool": "t", "args": {"k": {1}}, "argsMatch": "exact"}
    canned = {"tool": "t", "response": math.inf, "args": [math.nan]}
    data = with_task(
        expected={
            "kind": "trajectory",
            "trajectory": {"match": "exact", "calls": [call]},
        },
        fixtures={"toolResponses": [canned], "memorySeed": [{"m": {None: 1}}]},
    )
    data["tasks"].append(
        {
            "taskId": "u",
            "input": 1,
            "expected": {"kind": "golden", "match": {"strategy": "exact", "value": [b""]}},
        }
    )
    assert errors_of(data) == [
        "tasks[0].expected.trajectory.calls[0].args.k: not a JSON value (set)",
        "tasks[0].fixtures.toolResponses[0].response: inf is not a JSON number",
        "tasks[0].fixtures.toolResponses[0].args[0]: nan is not a JSON number",
        "tasks[0].fixtures.memorySeed[0].m: object keys must be strings, got null None",
        "tasks[1].expected.match.value[0]: not a JSON value (bytes)",
    ]


def test_opaque_content_of_any_depth_is_checked_without_recursion() -> None:
    content: Any = {1}
    for _ in range(5000):
        content = [content]
    [(loc, kind)] = shape_errors(with_task(input=content))
    assert kind == "json_value"
    assert loc == ("tasks", 0, "input", *([0] * 5000))


def test_code_may_hold_python_values_in_opaque_content() -> None:
    call = ExpectedCall(tool="t", args=(1, {2}), argsMatch="exact")
    assert call.args == (1, {2})


# --- keys of typed objects ------------------------------------------------------------------


def test_a_key_that_is_not_a_string_is_named_at_its_object() -> None:
    assert errors_of(minimal(thresholds={1: 2})) == [
        "thresholds: object keys must be strings, got integer 1"
    ]
    task_key = minimal()
    task_key["tasks"][0][5] = "x"
    assert errors_of(task_key) == ["tasks[0]: object keys must be strings, got integer 5"]
    assert errors_of(with_task(fixtures={"memorySeed": [{True: 1}]})) == [
        "tasks[0].fixtures.memorySeed[0]: object keys must be strings, got boolean True"
    ]


# --- numbers ------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_a_non_finite_number_is_refused_in_every_typed_number(value: float) -> None:
    shown = str(value)
    assert errors_of(minimal(thresholds={"passScore": value, "maxP95LatencyMs": value})) == [
        f"thresholds.passScore: {shown} is not a JSON number",
        f"thresholds.maxP95LatencyMs: {shown} is not a JSON number",
    ]
    assert errors_of(minimal(trials={"count": value})) == [
        f"trials.count: {shown} is not a JSON number"
    ]


def test_a_non_finite_number_is_refused_in_code_too() -> None:
    with pytest.raises(ValidationError):
        Thresholds(maxCostUsd=math.inf)
    with pytest.raises(ValidationError):
        RubricCriterion(criterion="c", weight=math.nan)


def test_an_integer_with_a_zero_fraction_keeps_its_bounds() -> None:
    assert errors_of(minimal(trials={"count": 2.0, "k": 0.0})) == [
        "trials.k: 0 is less than the minimum 1"
    ]
    assert errors_of(minimal(thresholds={"maxP95LatencyMs": -1.0})) == [
        "thresholds.maxP95LatencyMs: -1 is less than the minimum 0"
    ]
    suite = parse_suite(minimal(thresholds={"maxP95LatencyMs": 250.0}))
    assert suite.thresholds is not None
    assert suite.thresholds.maxP95LatencyMs == 250
    assert type(suite.thresholds.maxP95LatencyMs) is int


def test_a_boolean_is_not_an_integer_even_as_one() -> None:
    assert errors_of(minimal(trials={"count": True})) == [
        "trials.count: expected an integer, got boolean"
    ]


def test_a_list_spelled_as_a_tuple_is_not_an_array() -> None:
    assert errors_of(minimal(allowedModels=("general",))) == [
        "allowedModels: expected an array, got tuple"
    ]


def test_each_kind_of_non_json_has_its_own_error_type() -> None:
    content: dict[Any, Any] = {1: 0, "n": math.nan, "s": {1}}
    assert shape_errors(with_task(input=content)) == [
        (("tasks", 0, "input"), "json_key"),
        (("tasks", 0, "input", "n"), "json_number"),
        (("tasks", 0, "input", "s"), "json_value"),
    ]
