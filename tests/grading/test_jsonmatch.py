"""The JSON equality policy (wopeval.grading.jsonmatch) and RFC 0244 §A ``argsMatch``."""

from __future__ import annotations

import json
import math
from typing import cast

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wopeval.grading.jsonmatch import (
    args_match,
    canonical_json,
    json_equal,
    json_key,
    json_subset,
)
from wopeval.suite.models import ArgsMatch

JSON_SCALARS = st.none() | st.booleans() | st.integers(-5, 5) | st.sampled_from([0.5, 1.0, -0.0])
JSON_VALUES = st.recursive(
    JSON_SCALARS | st.text(max_size=3),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=2), inner),
    max_leaves=8,
)


@pytest.mark.parametrize(
    ("a", "b", "equal"),
    [
        (1, 1.0, True),
        (0, -0.0, True),
        (True, 1, False),
        (False, 0, False),
        (1.0, True, False),
        (True, True, True),
        ("1", 1, False),
        (None, None, True),
        (None, 0, False),
        ({"a": 1, "b": [1, 2]}, {"b": [1.0, 2.0], "a": 1}, True),
        ([1, 2], [2, 1], False),
        ([1, 2], (1, 2), True),
        ({"a": 1}, {"a": 1, "b": None}, False),
        ({"a": {"b": True}}, {"a": {"b": 1}}, False),
        ([], {}, False),
        ("", None, False),
    ],
)
def test_json_equal_policy(a: object, b: object, equal: bool) -> None:
    assert json_equal(a, b) is equal
    assert json_equal(b, a) is equal


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_json_equal_rejects_non_finite_floats(bad: float) -> None:
    with pytest.raises(ValueError, match="not a JSON value"):
        json_equal(bad, 1)
    with pytest.raises(ValueError, match="not a JSON value"):
        canonical_json({"x": [bad]})


def test_json_equal_rejects_non_json_types() -> None:
    with pytest.raises(TypeError, match="set"):
        json_equal({1}, {1})
    with pytest.raises(TypeError, match="JSON object key"):
        json_equal({1: "a"}, {1: "a"})


@pytest.mark.parametrize("expected", [[1], {"a": 1}, "a", None, 1, True])
def test_json_equal_and_subset_reject_what_is_not_json_on_the_other_side(expected: object) -> None:
    # Even where the answer would be "not equal": a value that is not JSON is refused.
    for compare in (json_equal, json_subset):
        with pytest.raises(TypeError, match="set"):
            compare(expected, {1})
        with pytest.raises(ValueError, match="not a JSON value"):
            compare(expected, math.nan)
    with pytest.raises(TypeError, match="set"):
        json_equal({1}, expected)


@given(JSON_VALUES, JSON_VALUES)
def test_canonical_json_is_an_equality_key(a: object, b: object) -> None:
    assert json_equal(a, b) == (canonical_json(a) == canonical_json(b))


@given(JSON_VALUES)
def test_json_equal_survives_a_round_trip(value: object) -> None:
    assert json_equal(value, json.loads(json.dumps(value)))


@given(JSON_VALUES)
def test_0244_A_subset_of_itself(value: object) -> None:
    assert json_subset(value, value)


@pytest.mark.parametrize(
    ("expected", "actual", "matches"),
    [
        ({"amountMinor": 4200}, {"amountMinor": 4200, "currency": "EUR"}, True),
        ({"amountMinor": 4200}, {"amountMinor": 4200.0}, True),
        ({"amountMinor": 4200}, {"amountMinor": 4201}, False),
        ({"amountMinor": 4200}, {"currency": "EUR"}, False),
        ({"a": {"b": 1}}, {"a": {"b": 1, "c": 2}, "d": 3}, True),
        ({"a": {"b": 1}}, {"a": {"c": 2}}, False),
        ({"a": [1]}, {"a": [1, 2]}, False),
        ({"a": [{"b": 1}]}, {"a": [{"b": 1, "c": 2}]}, False),
        ({}, {"anything": 1}, True),
        ({}, [], False),
        ({"a": 1}, "a", False),
        ({"flag": True}, {"flag": 1}, False),
        ("text", "text", True),
        (None, None, True),
        (None, {}, False),
    ],
)
def test_0244_A_subset_key_paths(expected: object, actual: object, matches: bool) -> None:
    assert json_subset(expected, actual) is matches


@pytest.mark.parametrize(
    ("mode", "args", "inputs", "matches"),
    [
        ("ignore", {"a": 1}, {"b": 2}, True),
        ("ignore", None, "not even an object", True),
        ("exact", {"a": 1}, {"a": 1.0}, True),
        ("exact", {"a": 1}, {"a": 1, "b": 2}, False),
        ("subset", {"a": 1}, {"a": 1, "b": 2}, True),
        ("subset", {"a": 1, "b": 3}, {"a": 1, "b": 2}, False),
    ],
)
def test_0244_A_args_match_modes(
    mode: ArgsMatch, args: object, inputs: object, matches: bool
) -> None:
    assert args_match(mode, args, inputs) is matches


def test_args_match_rejects_unknown_mode() -> None:
    with pytest.raises(ValueError, match="argsMatch"):
        args_match(cast(ArgsMatch, "superset"), {}, {})


@given(JSON_VALUES, JSON_VALUES)
def test_json_key_is_an_equality_key(a: object, b: object) -> None:
    assert json_equal(a, b) == (json_key(a) == json_key(b))
    if json_equal(a, b):
        assert hash(json_key(a)) == hash(json_key(b))


def test_json_key_is_never_none_and_rejects_non_json() -> None:
    assert json_key(None) is not None
    assert json_key(True) != json_key(1)
    assert json_key([1, 2]) != json_key({"1": 2})
    with pytest.raises(ValueError, match="not a JSON value"):
        json_key([math.nan])
    with pytest.raises(TypeError, match="JSON object key"):
        json_key({1: 2})


class _Str(str):
    pass


class _Int(int):
    pass


class _Float(float):
    pass


class _Dict(dict[str, object]):
    pass


class _List(list[object]):
    pass


# Every kind of JSON value, integral and non-integral floats, nested booleans and nulls, and
# subclasses of the JSON types (a subclass is the JSON value it holds: the isinstance path).
KEYED: list[object] = [
    None,
    True,
    False,
    0,
    1,
    1.0,
    -0.0,
    2.5,
    "",
    "x",
    "1",
    [],
    [1],
    [1.0],
    [True],
    [None],
    (1,),
    {},
    {"a": 1},
    {"a": 1.0},
    {"a": True},
    {"a": False},
    {"a": None},
    {"a": [1]},
    {"a": {"b": 2.5}},
    _Str("x"),
    _Int(1),
    _Float(2.5),
    _Float(1.0),
    _Dict(a=1),
    _List([1]),
    [_Str("x"), _Int(0)],
    {"a": _List([True])},
]


@pytest.mark.parametrize("a", range(len(KEYED)))
def test_json_key_and_canonical_json_are_equality_keys_on_every_kind(a: int) -> None:
    left = KEYED[a]
    for right in KEYED:
        equal = json_equal(left, right)
        assert (json_key(left) == json_key(right)) is equal, (left, right)
        assert (canonical_json(left) == canonical_json(right)) is equal, (left, right)


def test_json_key_and_canonical_json_name_what_is_not_json() -> None:
    for key in (json_key, canonical_json):
        with pytest.raises(TypeError, match="not a JSON value: set"):
            key({1})
        with pytest.raises(TypeError, match="not a JSON object key: 1"):
            key({1: 2})
        with pytest.raises(TypeError, match="not a JSON object key: 1"):
            key(_Dict({1: 2}))  # type: ignore[dict-item]
        with pytest.raises(TypeError, match="not a JSON object key: 1"):
            key({"a": {1: 2}})
        with pytest.raises(ValueError, match="not a JSON value: inf"):
            key(_List([math.inf]))
