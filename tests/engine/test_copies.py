"""Each trial's copies of shared values (RFC 0244 §B isolation): equal, never the same object."""

from __future__ import annotations

import json
import math
from enum import IntEnum
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wopeval.engine.copies import JsonCopies
from wopeval.engine.limits import jsonable as _jsonable

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


def _no_shared_containers(a: Any, b: Any) -> bool:
    if isinstance(a, dict | list | tuple):
        if a is b:
            return False
        pairs = (
            zip(a.values(), b.values(), strict=True)
            if isinstance(a, dict)
            else zip(a, b, strict=True)
        )
        return all(_no_shared_containers(x, y) for x, y in pairs)
    return True


@given(JSON)
def test_0244_B_a_copy_of_json_is_equal_and_shares_no_container(value: Any) -> None:
    copies = JsonCopies()
    first, second = copies.copy(value), copies.copy(value)
    assert first == value
    assert second == value
    assert _no_shared_containers(first, value)
    assert _no_shared_containers(second, value)
    assert _no_shared_containers(first, second)


@pytest.mark.parametrize(
    "value",
    [
        {"pair": (1, 2)},  # a tuple: JSON would make it a list
        {1: "int key"},  # JSON would make the key a string
        [math.nan],  # not JSON at all
        {"when": object()},
    ],
)
def test_a_value_json_does_not_reproduce_is_deep_copied_with_its_types(value: Any) -> None:
    copies = JsonCopies()
    assert copies.text(value) is None
    copied = copies.copy(value)
    assert copied is not value
    assert type(copied) is type(value)
    if isinstance(value, dict) and "when" not in value:
        assert copied == value
        assert {k: type(v) for k, v in copied.items()} == {k: type(v) for k, v in value.items()}


def test_scalars_are_their_own_copy() -> None:
    copies = JsonCopies()
    for value in ("text", 3, 1.5, True, None):
        assert copies.copy(value) is value


# --- what a trial records of an agent's arguments and answers: a JSON round trip ----------------
def _same_json(a: Any, b: Any) -> bool:
    """Equal, with the same types at every level (``1 == 1.0 == True`` would hide a change)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same_json(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same_json(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b or (isinstance(a, float) and math.isnan(a) and math.isnan(b)))


FINITE = st.floats(allow_nan=False, allow_infinity=False)
SCALARS = st.none() | st.booleans() | st.integers() | FINITE | st.text()
FINITE_JSON = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


class Level(IntEnum):
    LOW = 1


ODD = st.sampled_from([Level.LOW, (1, 2), 2**70, -0.0])


@given(st.dictionaries(st.text() | st.integers(), SCALARS | ODD, max_size=5) | FINITE_JSON | ODD)
def test_a_recorded_value_is_its_json_round_trip(value: Any) -> None:
    expected = json.loads(json.dumps(value, ensure_ascii=False, allow_nan=False))
    recorded = _jsonable(value)
    assert _same_json(recorded, expected)
    if isinstance(value, dict | list):
        assert recorded is not value  # a copy: the agent may change its own afterwards


# A lone surrogate has no UTF-8: no store takes it, so it fails the trial, not the run.
@pytest.mark.parametrize(
    "value",
    [math.nan, {"x": math.inf}, {"x": object()}, [math.nan], "\ud800", {"a\udfff": 1},
     [{"x": "\ud800"}]],
)  # fmt: skip
def test_a_value_json_cannot_carry_is_refused(value: Any) -> None:
    with pytest.raises((TypeError, ValueError)):
        _jsonable(value)
