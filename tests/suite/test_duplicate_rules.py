"""Repeated keys in a YAML suite (suite/duplicates.py), store-free: a ``<<`` merge is not a
repeated key and does not end the search for one; a key that is not a string is named as
written."""

from __future__ import annotations

from wopeval.suite.yaml_doc import DuplicateKeyMarking, load_yaml


def _errors(text: str) -> list[tuple[str, str]]:
    _, errors = load_yaml(text, DuplicateKeyMarking)
    return [(error.path, error.message) for error in errors]


def test_a_key_repeated_after_a_merge_is_found() -> None:
    text = "base: &b {x: 1}\nm:\n  <<: *b\n  y: 1\n  y: 2\n"
    assert _errors(text) == [
        ("m.y", "duplicate key 'y' (again at line 5); each key may appear once")
    ]


def test_two_merges_in_one_mapping_are_not_a_repeated_key() -> None:
    text = "a: &a {x: 1}\nb: &b {z: 2}\nm:\n  <<: *a\n  <<: *b\n"
    data, errors = load_yaml(text, DuplicateKeyMarking)
    assert errors == []
    assert isinstance(data, dict)
    assert data["m"] == {"x": 1, "z": 2}


def test_a_repeated_integer_key_is_named_as_written() -> None:
    fields = [field for field, _ in _errors("m:\n  1: a\n  1: b\n")]
    assert fields == ['m["1"]']


def test_a_key_written_over_a_merged_one_is_not_a_repeat() -> None:
    data, errors = load_yaml("base: &b {x: 1, y: 1}\nm:\n  <<: *b\n  x: 2\n", DuplicateKeyMarking)
    assert errors == []
    assert isinstance(data, dict)
    assert data["m"] == {"x": 2, "y": 1}
