"""The schema tidying rules (suite/json_schemas.py), store-free on hand-made nodes: each rule
reaches every kind of subschema, whether or not today's models produce that shape."""

from __future__ import annotations

from typing import Any

import pytest

from wopeval.suite.json_schemas import _drop_null_branch, _generate, _tidy

OPEN = {"type": "object", "description": "see :class:`Task`"}
TIDIED = {"type": "object", "description": "see `Task`", "additionalProperties": False}


@pytest.mark.parametrize("key", ["items", "additionalProperties"])
def test_a_subschema_under_a_single_schema_keyword_is_tidied(key: str) -> None:
    assert _tidy({key: OPEN}) == {key: TIDIED}


@pytest.mark.parametrize("key", ["anyOf", "oneOf", "allOf", "prefixItems"])
def test_every_subschema_under_a_list_keyword_is_tidied(key: str) -> None:
    assert _tidy({key: [OPEN, {"type": "string"}, OPEN]}) == {
        key: [TIDIED, {"type": "string"}, TIDIED]
    }


def test_an_object_is_closed_unless_it_says_otherwise() -> None:
    assert _tidy({"type": "object"})["additionalProperties"] is False
    assert _tidy({"type": "object", "additionalProperties": True})["additionalProperties"] is True
    assert "additionalProperties" not in _tidy({"type": "string"})


def test_a_null_branch_is_dropped_only_beside_exactly_one_other() -> None:
    null: dict[str, Any] = {"type": "null"}
    assert _drop_null_branch({"anyOf": [{"type": "integer"}, null], "default": 1}) == {
        "type": "integer",
        "default": 1,
    }
    two = {"anyOf": [{"type": "integer"}, {"type": "string"}, null]}
    assert _drop_null_branch(two) == two
    none = {"anyOf": [{"type": "integer"}, {"type": "string"}]}
    assert _drop_null_branch(none) == none


def test_the_root_keys_come_first_in_their_order_then_the_rest() -> None:
    from pydantic import BaseModel, ConfigDict

    class Probe(BaseModel):
        model_config = ConfigDict(extra="forbid")
        n: int

    schema = _generate(Probe, "a probe")
    assert list(schema)[:7] == [
        "$schema", "title", "description", "type", "additionalProperties", "required",
        "properties",
    ]  # fmt: skip
    assert schema["description"] == "a probe"
    assert schema["title"] == "Probe"
