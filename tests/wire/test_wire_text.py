"""A payload's wire dict and its JSON text come from one serializer pass (``wire_and_text``):
the text reads back as the dict, members kept as ``null`` are in both, and a payload the
serializer cannot vouch for (it wrote a ``null``: maybe a float JSON has no number for) is
left to the store's own encoder, which refuses ``NaN`` and infinities as it always did."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wopeval.events.appends import queued_payload
from wopeval.events.tables import dumps_json
from wopeval.wire.events import Decided, Payload, ProviderUsage, ToolCalled, ToolReturned

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12,
)  # fmt: skip


def _payloads(value: Any) -> list[Payload]:
    base = {"agentId": "a", "toolName": "kb:read", "callId": "c"}
    return [
        ToolCalled(**base, inputs=value),
        ToolReturned(**base, status="ok", outcome=value, fixture="served", fixture_index=1),
        ToolReturned(**base, status="error"),
        Decided(agentId="a", decision=value),
        ProviderUsage(provider="p", model="m", inputTokens=1, outputTokens=2,
                      costEstimateUsd=0.5 if value is None else None),
    ]  # fmt: skip


@given(JSON)
def test_the_text_reads_back_as_the_wire_dict(value: Any) -> None:
    for payload in _payloads(value):
        wire, text = payload.wire_and_text()
        assert wire == payload.to_wire()
        if text is None:  # the store encodes the dict itself
            assert "null" in json.dumps(wire) or "null" in dumps_json(wire)
            continue
        assert json.loads(text) == wire
        assert list(json.loads(text)) == list(wire)  # the members in the same order
        assert text == dumps_json(wire) or not _all_floats_plain(wire)


def _all_floats_plain(value: Any) -> bool:
    """No float whose digits the two encoders write differently (``1e-07``, ``1e-7``)."""
    if isinstance(value, float):
        return "e" not in repr(value)
    if isinstance(value, dict):
        return all(_all_floats_plain(v) for v in value.values())
    if isinstance(value, list):
        return all(_all_floats_plain(v) for v in value)
    return True


def test_members_kept_as_null_are_in_the_text() -> None:
    base = {"agentId": "a", "toolName": "kb:read", "callId": "c"}
    for payload, member in [
        (ToolReturned(**base, status="ok"), "outcome"),
        (Decided(agentId="a", decision=None), "decision"),
    ]:
        wire, text = payload.wire_and_text()
        assert text is not None
        assert json.loads(text) == wire
        assert wire[member] is None
    wire, text = ToolReturned(**base, status="error").wire_and_text()
    assert "outcome" not in wire
    assert text is not None
    assert "outcome" not in text


def test_an_infinite_cost_is_still_refused() -> None:
    """A float field keeps an infinity in the dict; its text would say ``null``: refused."""
    usage = ProviderUsage(provider="p", model="m", inputTokens=1, outputTokens=1,
                          costEstimateUsd=math.inf)  # fmt: skip
    assert usage.wire_and_text()[1] is None  # left to the store's encoder
    with pytest.raises(ValueError, match="not JSON compliant"):
        queued_payload("local/r1", usage.event_type, usage, None, None, None, "t")


@pytest.mark.parametrize("bad", [math.inf, -math.inf, math.nan])
def test_content_json_has_no_number_for_is_null_in_dict_and_text_alike(bad: float) -> None:
    decided = Decided(agentId="a", decision=[1, bad])
    queued = queued_payload("local/r1", decided.event_type, decided, None, None, None, "t")
    assert queued.payload == {"agentId": "a", "decision": [1, None]}
    assert json.loads(queued.payload_json) == queued.payload


def test_text_the_serializer_cannot_write_is_left_to_the_store() -> None:
    decided = Decided(agentId="a", decision="\ud800")  # a lone surrogate
    assert decided.wire_and_text()[1] is None
    assert queued_payload("local/r1", decided.event_type, decided, None, None, None, "t")
