"""An integer of more than 4,300 digits in an event log or OTLP traces is bad input (exit 2, one
message naming the line), not a traceback: Python refuses to convert it (``ValueError``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from wopeval.cli.app import app

HUGE = "9" * 5000
SUITE = {"suiteId": "core.test.evals.huge", "version": "1.0.0", "modes": ["golden"],
         "tasks": [{"taskId": "t", "input": {}, "expected": {
             "kind": "golden", "match": {"strategy": "exact", "value": "x"}}}]}  # fmt: skip


@pytest.mark.parametrize(
    ("command", "name", "text", "where"),
    [
        ("grade-log", "log.jsonl", '{"type": "run.started"}\n{"n": ' + HUGE + "}\n", "line 2"),
        ("grade-log", "log.json", '[{"n": ' + HUGE + "}]", "line 1"),
        ("import-otlp", "traces.jsonl", '{"resourceSpans": [], "n": ' + HUGE + "}\n", "line 1"),
        # a document over several lines is reported as its first line (not JSON by itself)
        ("import-otlp", "traces.json", '{"resourceSpans": [],\n "n": ' + HUGE + "}", "not JSON"),
    ],
)
def test_a_huge_integer_in_a_log_is_bad_input_naming_where(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str, name: str, text: str, where: str
) -> None:
    monkeypatch.chdir(tmp_path)  # the default store
    (tmp_path / name).write_text(text, encoding="utf-8")
    suite = tmp_path / "suite.json"
    suite.write_text(json.dumps(SUITE), encoding="utf-8")
    result = CliRunner().invoke(
        app,
        [command, str(tmp_path / name), "--suite", str(suite), "--agent", "a"],
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert where in result.output
    assert "more than 4,300 digits" in result.output or where == "not JSON"
