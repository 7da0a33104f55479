"""Canonical digests of a suite and its task definitions, and the per-task suite diff."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from wopeval.suite.digest import (
    canonical_digest,
    canonical_json,
    definition_digests,
    diff_documents,
    task_definition,
)
from wopeval.suite.load import load_suite, parse_suite

GOLDEN = {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}}


def _suite(tasks: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "suiteId": "core.test.evals.dig",
        "version": "1.0.0",
        "modes": ["golden"],
        "tasks": tasks,
    }


def test_canonical_json_sorts_keys_and_drops_whitespace() -> None:
    assert canonical_json({"b": [1, {"d": 2, "c": "é"}], "a": None}) == (
        '{"a":null,"b":[1,{"c":"é","d":2}]}'
    )
    text = '{"a":1}'
    assert canonical_digest({"a": 1}) == hashlib.sha256(text.encode()).hexdigest()
    with pytest.raises(ValueError, match="JSON compliant"):
        canonical_digest({"a": float("nan")})


def test_plainest_task_has_a_digest_of_input_and_expectation() -> None:
    suite = parse_suite(_suite([{"taskId": "t", "input": "hi", "expected": GOLDEN}]))
    digests = definition_digests(suite)
    definition = {"input": "hi", "expected": GOLDEN, "fixtures": None}
    assert digests.tasks == {"t": canonical_digest(definition)}
    assert digests.suite == canonical_digest(
        _suite([{"taskId": "t", "input": "hi", "expected": GOLDEN}])
    )


def test_json_and_yaml_of_one_suite_have_the_same_digests(tmp_path: Path) -> None:
    doc = _suite([{"taskId": "t", "input": {"x": 1, "a": [1, 2]}, "expected": GOLDEN}])
    (tmp_path / "s.json").write_text(json.dumps(doc))
    (tmp_path / "s.yaml").write_text(
        "suiteId: core.test.evals.dig\nversion: 1.0.0\nmodes: [golden]\ntasks:\n"
        "  - taskId: t\n    input: {a: [1, 2], x: 1}\n"
        "    expected: {match: {value: ok, strategy: exact}, kind: golden}\n"
    )
    assert definition_digests(load_suite(tmp_path / "s.json")) == definition_digests(
        load_suite(tmp_path / "s.yaml")
    )


@pytest.mark.parametrize(
    ("edit", "parts"),
    [
        ({"input": "bye"}, ("input",)),
        ({"expected": {**GOLDEN, "match": {"strategy": "exact", "value": "ok!"}}}, ("expected",)),
        ({"fixtures": {"onMiss": "fail"}}, ("fixtures",)),
        ({"input": "bye", "fixtures": {"onMiss": "fail"}}, ("input", "fixtures")),
    ],
)
def test_each_definition_part_changes_the_digest_and_is_named(
    edit: dict[str, Any], parts: tuple[str, ...]
) -> None:
    task = {"taskId": "t", "input": "hi", "expected": GOLDEN}
    a, b = _suite([task]), _suite([{**task, **edit}])
    assert definition_digests(parse_suite(a)).tasks != definition_digests(parse_suite(b)).tasks
    diff = diff_documents(a, b)
    assert [(c.task_id, c.parts) for c in diff.changed] == [("t", parts)]
    assert diff.differs


def test_diff_names_added_removed_and_unchanged_tasks() -> None:
    keep = {"taskId": "keep", "input": 1, "expected": GOLDEN}
    a = _suite([keep, {"taskId": "gone", "input": 2, "expected": GOLDEN}])
    b = {**_suite([{"taskId": "new", "input": 3, "expected": GOLDEN}, keep]), "version": "1.1.0"}
    diff = diff_documents(a, b)
    assert diff.to_json() == {
        "sameSuite": False,
        "added": ["new"],
        "removed": ["gone"],
        "changed": [],
        "unchanged": ["keep"],
    }
    outside = diff_documents(a, {**a, "version": "2.0.0"})
    assert not outside.differs
    assert not outside.same_suite


def test_task_definition_reads_only_its_three_parts() -> None:
    task = {"taskId": "t", "input": 1, "expected": GOLDEN, "x-other": True}
    assert task_definition(task) == {"input": 1, "expected": GOLDEN, "fixtures": None}


def test_diff_json_names_each_changed_task_and_part_and_whether_the_suites_are_one() -> None:
    a = {"suiteId": "s", "tasks": [{"taskId": "t", "input": 1}, {"taskId": "u", "input": 2}]}
    b = {"suiteId": "s", "tasks": [{"taskId": "t", "input": 9}, {"taskId": "u", "input": 2}]}
    assert diff_documents(a, dict(a)).same_suite is True
    assert diff_documents(a, b).to_json() == {
        "sameSuite": False,
        "added": [],
        "removed": [],
        "changed": [{"taskId": "t", "parts": ["input"]}],
        "unchanged": ["u"],
    }
