"""RFC 0081 ``golden`` output strategies (wopeval.grading.output)."""

from __future__ import annotations

import pytest

from wopeval.grading.output import match_output, stringify
from wopeval.suite.models import OutputMatch, OutputStrategy


def _match(strategy: OutputStrategy, value: object, output: object) -> bool:
    return match_output(OutputMatch(strategy=strategy, value=value), output)


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("as is", "as is"),
        (42, "42"),
        (1.5, "1.5"),
        (None, "null"),
        (True, "true"),
        ({"b": 1, "a": "é"}, '{"a":"é","b":1}'),
        ([1, {"y": 2, "x": 1}], '[1,{"x":1,"y":2}]'),
    ],
)
def test_0081_stringification(value: object, text: str) -> None:
    assert stringify(value) == text


@pytest.mark.parametrize(
    ("value", "output", "matches"),
    [
        ("refund approved", "refund approved", True),
        ("refund approved", "Refund approved", False),
        ("refund approved", "refund approved.", False),
        (42, "42", True),
        (42, 42, True),
        ({"a": 1, "b": 2}, {"b": 2, "a": 1}, True),
        ({"a": 1, "b": 2}, '{"b": 2, "a": 1}', False),
        ({"a": 1}, '{"a":1}', True),
        (1, 1.0, False),
        (None, None, True),
    ],
)
def test_0081_exact(value: object, output: object, matches: bool) -> None:
    assert _match("exact", value, output) is matches


@pytest.mark.parametrize(
    ("value", "output", "matches"),
    [
        ("refund approved", "Your refund approved today", True),
        ("refund approved", "refund denied", False),
        (4200, "amount 4200 minor units", True),
        ('"a":1', {"a": 1, "b": 2}, True),
        ({"a": 1}, {"b": 2, "a": 1}, False),
        ("", "anything", True),
    ],
)
def test_0081_contains(value: object, output: object, matches: bool) -> None:
    assert _match("contains", value, output) is matches


@pytest.mark.parametrize(
    ("value", "output", "matches"),
    [
        ({"a": 1, "b": [1, 2]}, '{ "b": [1.0, 2], "a": 1 }', True),
        ({"a": 1, "b": [1, 2]}, {"b": [1, 2], "a": 1.0}, True),
        ({"a": 1, "b": [1, 2]}, '{"b": [2, 1], "a": 1}', False),
        ({"ok": True}, '{"ok": 1}', False),
        (42, "42", True),
        ("42", "42", True),
        ("hello", "hello", True),
        ("hello", '"hello"', True),
        ("hello", "not json at all {", False),
        (None, "null", True),
        (None, "NaN", False),
        ({"a": 1}, "", False),
    ],
)
def test_0081_json_match(value: object, output: object, matches: bool) -> None:
    assert _match("json-match", value, output) is matches


def test_json_match_keeps_a_non_finite_looking_string_as_a_string() -> None:
    expectation = OutputMatch(strategy="json-match", value="1e999")
    assert match_output(expectation, "1e999") is True
    assert match_output(expectation, "1e998") is False
