"""``wopeval suite diff A B``: suite files or stored runs, text and --json, exit 0/1/2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from wopeval.cli.app import app

GOLDEN = {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}}


def _write(path: Path, tasks: list[dict[str, Any]]) -> Path:
    doc = {"suiteId": "core.test.evals.diff", "version": "1.0.0", "modes": ["golden"]}
    path.write_text(json.dumps({**doc, "tasks": tasks}))
    return path


def _pair(tmp_path: Path) -> tuple[Path, Path]:
    same = {"taskId": "same", "input": {"output": "ok"}, "expected": GOLDEN}
    edited = {"taskId": "edited", "input": {"output": "ok"}, "expected": GOLDEN}
    a = _write(tmp_path / "a.json", [same, edited, {**same, "taskId": "gone"}])
    b = _write(
        tmp_path / "b.json",
        [
            same,
            {**edited, "fixtures": {"onMiss": "fail"}, "input": {"output": "ok "}},
            {**same, "taskId": "new"},
        ],
    )
    return a, b


def test_suite_diff_of_files(tmp_path: Path) -> None:
    a, b = _pair(tmp_path)
    runner = CliRunner()
    result = runner.invoke(app, ["suite", "diff", str(a), str(b), "--json"])
    assert result.exit_code == 1
    doc = json.loads(result.output)
    assert doc["added"] == ["new"]
    assert doc["removed"] == ["gone"]
    assert doc["changed"] == [{"taskId": "edited", "parts": ["input", "fixtures"]}]
    assert doc["unchanged"] == ["same"]
    text = runner.invoke(app, ["suite", "diff", str(a), str(b)])
    assert text.exit_code == 1
    assert "changed   edited: input, fixtures" in text.output
    assert "1 changed, 1 added, 1 removed, 1 unchanged task" in text.output
    same = runner.invoke(app, ["suite", "diff", str(a), str(a)])
    assert same.exit_code == 0
    assert "0 changed, 0 added, 0 removed, 3 unchanged tasks" in same.output


@pytest.mark.postgres
def test_suite_diff_of_stored_runs(store_url: str, tmp_path: Path) -> None:
    a, b = _pair(tmp_path)
    ids = []
    for suite in (a, b):
        ran = CliRunner().invoke(
            app,
            [
                *("run", str(suite), "--agent", "core.conformance.agents.scripted"),
                *("--store", store_url, "--json"),
            ],
        )
        ids.append(json.loads(ran.output)["runId"])
    result = CliRunner().invoke(app, ["suite", "diff", *ids, "--store", store_url, "--json"])
    assert result.exit_code == 1, result.output
    doc = json.loads(result.output)
    assert doc["changed"] == [{"taskId": "edited", "parts": ["input", "fixtures"]}]
    assert doc["a"].startswith(f"run {ids[0]} ")
    mixed = CliRunner().invoke(app, ["suite", "diff", ids[1], str(b), "--store", store_url])
    assert mixed.exit_code == 0, mixed.output


def test_suite_diff_refuses_bad_input_naming_it(tmp_path: Path) -> None:
    a, _ = _pair(tmp_path)
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps({"suiteId": "core.test.evals.diff", "version": "1.0.0"}))
    result = CliRunner().invoke(app, ["suite", "diff", str(a), str(broken)])
    assert result.exit_code == 2
    assert "broken.json" in result.output
    store = tmp_path / "s.db"
    CliRunner().invoke(
        app, ["run", str(a), "--agent", "core.conformance.agents.scripted", "--store", str(store)]
    )
    missing = CliRunner().invoke(
        app, ["suite", "diff", str(a), "local/rnosuchrunnosuchrun00", "--store", str(store)]
    )
    assert missing.exit_code == 2
    assert "neither a suite file nor an eval run" in missing.output
