"""Adaptive trials in the CLI: ``run``/``show`` ``--json`` carry an ``adaptive`` member beside the
unchanged RFC summary, the terminal says it in one line at 80 columns, the Markdown export too,
and a plain suite's outputs have none of it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from wopeval.cli.app import app

OK = {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}}
AGENT = "core.conformance.agents.scripted"


def _cli(*args: str) -> Any:
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "80"})


def _suite(tmp: Path, adaptive: bool) -> str:
    doc: dict[str, Any] = {
        "suiteId": "core.acme.evals.sequential",
        "version": "1.0.0",
        "modes": ["golden"],
        "tasks": [
            {"taskId": "pass", "input": {"output": "ok"}, "expected": OK},
            {"taskId": "fail", "input": {"output": "no"}, "expected": OK},
        ],
        "trials": {"count": 20, "k": 1},
        "thresholds": {"passScore": 0.8},
    }
    if adaptive:
        doc["x-wopeval-adaptive"] = {"rule": "sprt", "alpha": 0.05, "minTrials": 1}
    path = tmp / "suite.json"
    path.write_text(json.dumps(doc))
    return str(path)


def test_run_and_show_json_report_the_trials_saved(tmp_path: Path) -> None:
    store = str(tmp_path / "s.db")
    ran = _cli("run", _suite(tmp_path, True), "--agent", AGENT, "--store", store, "--json")
    assert ran.exit_code == 1, ran.output  # "fail" fails: the suite gate fails
    doc = json.loads(ran.stdout)
    assert doc["adaptive"]["trialsRun"] == 15  # 12 passes decide above, 3 failures below
    assert doc["adaptive"]["trialsFixed"] == 40
    assert doc["adaptive"]["trialsSaved"] == 25
    assert [t["decision"] for t in doc["adaptive"]["tasks"]] == ["above", "below"]
    assert "adaptive" not in json.dumps(doc["summary"])  # the RFC summary is unchanged
    assert [t["trials"]["n"] for t in doc["summary"]["tasks"]] == [12, 3]
    shown = json.loads(_cli("show", doc["runId"], "--json", "--store", store).stdout)
    assert shown["adaptive"] == doc["adaptive"]
    human = _cli("show", doc["runId"], "--store", store)
    line = "adaptive (sprt): 15 of 40 trials run, 25 saved; above 1, below 1, undecided 0"
    assert line in human.stdout
    assert all(len(row) <= 80 for row in human.stdout.splitlines())
    markdown = _cli("export", doc["runId"], "-f", "markdown", "--store", store)
    assert line in markdown.stdout


def test_plain_suite_outputs_carry_no_adaptive_member(tmp_path: Path) -> None:
    store = str(tmp_path / "s.db")
    ran = _cli("run", _suite(tmp_path, False), "--agent", AGENT, "--store", store, "--json")
    doc = json.loads(ran.stdout)
    assert "adaptive" not in doc
    assert [t["trials"]["n"] for t in doc["summary"]["tasks"]] == [20, 20]
    human = _cli("show", doc["runId"], "--store", store)
    assert "adaptive (" not in human.stdout


def test_adaptive_with_a_live_tool_is_refused_naming_the_field(tmp_path: Path) -> None:
    ran = _cli(
        "run", _suite(tmp_path, True), "--agent", AGENT, "--store", str(tmp_path / "s.db"),
        "--tool", "lookup=tests.engine.test_adaptive_trials:live_lookup",
    )  # fmt: skip
    assert ran.exit_code == 2, ran.output
    assert "x-wopeval-adaptive: task 'pass' could reach a live tool" in ran.output
