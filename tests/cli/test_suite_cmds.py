"""``wopeval validate`` and ``wopeval schema`` through typer's runner."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from wopeval.cli.app import app
from wopeval.cli.common import EXIT_BAD_INPUT, EXIT_OK
from wopeval.suite.json_schemas import suite_json_schema, summary_json_schema

SUITES = Path(__file__).resolve().parents[1] / "data" / "suites"
VALID = SUITES / "valid"
INVALID = SUITES / "invalid"


def invoke(*args: str | Path) -> tuple[int, str]:
    result = CliRunner().invoke(app, [str(arg) for arg in args])
    return result.exit_code, result.output


def validate_json(*paths: Path) -> tuple[int, dict[str, Any]]:
    code, out = invoke("validate", "--json", *paths)
    document: dict[str, Any] = json.loads(out)
    return code, document


def test_validate_valid_files_exits_0() -> None:
    code, out = invoke(
        "validate", VALID / "rfc0081-golden.json", VALID / "rfc0244-all-features.json"
    )
    assert code == EXIT_OK == 0
    assert "✓" in out
    assert "✗" not in out
    assert "core.acme.evals.support-resolver 1.2.0, 2 tasks" in out
    assert "RFC 0244 facets: fixtureMatching, trajectory, trials" in out
    assert "2 files: 2 valid, 0 invalid" in out


def test_validate_prints_every_error_of_every_file_and_exits_2() -> None:
    code, out = invoke("validate", INVALID / "three-problems.yaml", INVALID / "superset-mode.json")
    assert code == EXIT_BAD_INPUT == 2
    assert "three-problems.yaml  3 errors" in out
    assert (
        "tasks[0].expected.tools: unknown field "
        "(allowed: kind, match, rubric, trajectory, x-wopeval-finalState)"
    ) in out
    assert "trials.count: 0 is less than the minimum 1" in out
    assert "suiteId: 'Acme-Evals' does not match the pattern" in out
    assert (
        "tasks[0].expected.trajectory.match: "
        "'superset' is not one of exact, in-order, any-order, subset"
    ) in out
    assert "2 files: 0 valid, 2 invalid" in out


def test_validate_one_invalid_file_among_valid_ones_exits_2() -> None:
    code, _ = invoke("validate", VALID / "rfc0081-rubric.yaml", INVALID / "k-exceeds-count.yaml")
    assert code == EXIT_BAD_INPUT


def test_validate_json_shape_for_a_valid_file() -> None:
    code, document = validate_json(VALID / "rfc0244-positive-example.yaml")
    assert code == EXIT_OK
    assert document == {
        "files": [
            {
                "path": str(VALID / "rfc0244-positive-example.yaml"),
                "valid": True,
                "errors": [],
                "suiteId": "core.acme.evals.refunds",
                "taskCount": 1,
                "features": [
                    {"facet": "trajectory", "path": "tasks[0].expected.trajectory"},
                    {"facet": "trials", "path": "trials.count"},
                ],
            }
        ]
    }


def test_validate_json_shape_for_invalid_files() -> None:
    code, document = validate_json(
        INVALID / "k-exceeds-count.yaml",
        INVALID / "count-zero.json",
        INVALID / "broken-syntax.json",
    )
    assert code == EXIT_BAD_INPUT
    rule_failure, schema_failure, parse_failure = document["files"]
    # A rule failure: the schema passed, so the suite is known.
    assert rule_failure["valid"] is False
    assert rule_failure["errors"] == [{"path": "trials.k", "message": "6 exceeds trials.count 5"}]
    assert rule_failure["suiteId"] == "core.acme.evals.neg"
    assert rule_failure["taskCount"] == 1
    assert rule_failure["features"] == [{"facet": "trials", "path": "trials.count"}]
    assert schema_failure["errors"] == [
        {"path": "trials.count", "message": "0 is less than the minimum 1"}
    ]
    assert schema_failure["suiteId"] is None
    assert schema_failure["taskCount"] is None
    assert schema_failure["features"] == []
    assert parse_failure["errors"] == [
        {"path": "$", "message": "invalid JSON at line 4, column 3: Expecting ',' delimiter"}
    ]


def test_validate_missing_file_is_bad_input(tmp_path: Path) -> None:
    code, document = validate_json(tmp_path / "absent.yaml")
    assert code == EXIT_BAD_INPUT
    [entry] = document["files"]
    assert entry["errors"] == [
        {"path": "$", "message": "cannot read file: No such file or directory"}
    ]


def test_validate_without_files_is_a_usage_error() -> None:
    code, _ = invoke("validate")
    assert code == 2


def test_validate_help_explains_paths_and_exit_codes() -> None:
    code, out = invoke("validate", "--help")
    assert code == 0
    assert "field path" in out
    assert "Exit 0 if all files are valid, 2 if any is not." in out
    assert "--json" in out


@pytest.mark.parametrize(
    ("name", "expected"),
    [("suite", suite_json_schema()), ("summary", summary_json_schema())],
)
def test_schema_prints_the_generated_schema(name: str, expected: dict[str, object]) -> None:
    code, out = invoke("schema", name)
    assert code == EXIT_OK
    assert json.loads(out) == expected


def test_schema_rejects_an_unknown_name() -> None:
    code, _ = invoke("schema", "run")
    assert code == 2
