"""A repeated key in a suite file is an error at its JSON path, never "the last one wins"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from wopeval.cli.app import app
from wopeval.suite import SuiteError, load_suite

YAML_SUITE = """\
suiteId: core.test.evals.dup
version: 1.0.0
modes: [golden]
base: &base {strategy: exact, value: "1"}
tasks:
  - taskId: a
    input: {x: 1, x: 2}
    expected: {kind: golden, match: {<<: *base, value: "2"}}
    expected: {kind: golden, match: {strategy: exact, value: "3"}}
"""

JSON_SUITE = (
    '{"suiteId": "core.test.evals.dup", "version": "1.0.0", "version": "2.0.0",'
    ' "modes": ["golden"], "tasks": [{"taskId": "a", "input": {},'
    ' "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "1", "value": "2"}}}]}'
)


def _errors(path: Path) -> list[str]:
    with pytest.raises(SuiteError) as caught:
        load_suite(path)
    return [str(error) for error in caught.value.errors]


def test_yaml_duplicates_name_path_key_and_line(tmp_path: Path) -> None:
    path = tmp_path / "dup.yaml"
    path.write_text(YAML_SUITE)
    assert _errors(path) == [
        "tasks[0].input.x: duplicate key 'x' (again at line 7); each key may appear once",
        "tasks[0].expected: duplicate key 'expected' (again at line 9); each key may appear once",
    ]  # the merge key ``<<`` overridden by ``value`` is not a duplicate


def test_json_duplicates_name_path_and_key(tmp_path: Path) -> None:
    path = tmp_path / "dup.json"
    path.write_text(JSON_SUITE)
    assert _errors(path) == [
        "version: duplicate key 'version'; each key may appear once",
        "tasks[0].expected.match.value: duplicate key 'value'; each key may appear once",
    ]


def test_validate_reports_duplicates_like_other_suite_errors(tmp_path: Path) -> None:
    (tmp_path / "dup.yaml").write_text(YAML_SUITE)
    (tmp_path / "dup.json").write_text(JSON_SUITE)
    files = [str(tmp_path / "dup.yaml"), str(tmp_path / "dup.json")]
    result = CliRunner().invoke(app, ["validate", *files, "--json"])
    assert result.exit_code == 2
    reports = json.loads(result.output)["files"]
    assert [[e["path"] for e in report["errors"]] for report in reports] == [
        ["tasks[0].input.x", "tasks[0].expected"],
        ["version", "tasks[0].expected.match.value"],
    ]
    assert all(not report["valid"] for report in reports)
    human = CliRunner().invoke(app, ["validate", files[0]])
    assert human.exit_code == 2
    assert "tasks[0].expected: duplicate key 'expected'" in human.output
