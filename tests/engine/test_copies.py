"""Each trial's copies of shared values (RFC 0244 §B isolation): equal, never the same object."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wopeval.engine.copies import JsonCopies

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
