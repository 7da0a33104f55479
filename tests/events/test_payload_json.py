"""Stored payload text is read back as the very values ``json.loads`` gives (``loads_json``)."""

from __future__ import annotations

import json
import math
import struct
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wopeval.events.tables import dumps_json, loads_json

_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)


def _same(a: Any, b: Any) -> bool:
    """Equal, and of the same types all the way down (``1`` is not ``1.0``; ``-0.0`` keeps its
    sign): what a summary's bytes would show."""
    return json.dumps(a) == json.dumps(b) and repr(a) == repr(b)


@given(_JSON)
def test_stored_text_reads_back_as_json_loads_reads_it(value: Any) -> None:
    text = dumps_json(value)
    assert _same(loads_json(text), json.loads(text))


@given(st.integers(min_value=0, max_value=2**64 - 1))
def test_every_finite_double_reads_back_bit_for_bit(bits: int) -> None:
    number = struct.unpack("<d", struct.pack("<Q", bits))[0]
    if not math.isfinite(number):
        return
    text = dumps_json({"costUsd": number})
    read = loads_json(text)["costUsd"]
    assert struct.pack("<d", read) == struct.pack("<d", number)


@pytest.mark.parametrize(
    "text",
    [
        '"\\ud800"',  # a lone surrogate's escape: json.loads reads it, the fast parser refuses
        '{"a": "x\\udfff y"}',
        '{"a": 1, "a": 2}',  # a repeated key: the last one wins in both
        "12345678901234567890123456789",
        "[1e400, -1e400]",  # beyond a double: infinities, as json.loads reads them
    ],
)
def test_text_the_fast_parser_refuses_or_bends_reads_as_json_loads_reads_it(text: str) -> None:
    assert _same(loads_json(text), json.loads(text))


@pytest.mark.parametrize("text", ["", "{", "{'a': 1}", "[1,]", "nul"])
def test_text_that_is_no_json_raises_json_loads_error(text: str) -> None:
    with pytest.raises(json.JSONDecodeError):
        loads_json(text)
