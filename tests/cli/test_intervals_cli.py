"""Intervals in the CLI: ``run``/``show`` ``--json`` carry an ``intervals`` member beside the
unchanged summary, the terminal shows them at 80 columns, ``--ci-level`` sets the level, and a
lower-bound gate decides the exit code only when it is the run's gate."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from tests.cli.gate_runs import suite_doc, write_suite
from wopeval.cli.app import app
from wopeval.grading.intervals import clopper_pearson


def _cli(*args: str) -> Any:
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "80"})


def _run(tmp: Path, doc: dict[str, Any], *args: str) -> tuple[int, dict[str, Any], str]:
    store = str(tmp / "s.db")
    ran = _cli("run", str(write_suite(tmp, doc)), "--store", store, "--json", *args)
    assert ran.exit_code in (0, 1), ran.output
    return ran.exit_code, json.loads(ran.stdout), store


def test_plainest_run_json_has_a_pass_rate_interval_and_a_suite_interval(tmp_path: Path) -> None:
    code, doc, _ = _run(tmp_path, suite_doc([[True]]))
    assert code == 0
    intervals = doc["intervals"]
    assert intervals["level"] == 0.95
    assert intervals["methods"]["passRate"] == "clopper-pearson"
    # one trial passed: [0.025, 1], the 1/1 Clopper-Pearson interval at 95 %
    one = {"low": 0.025, "high": 1.0}  # its mean score 1 of one trial: the same
    assert intervals["tasks"] == [{"taskId": "task-0", "n": 1, "passedCount": 1,
                                   "passRate": one, "meanScore": one}]  # fmt: skip
    assert intervals["suite"]["aggregateScore"] == {"low": 0.025, "high": 1.0}  # one task
    assert "intervals" not in doc["summary"]  # the wire summary is the RFC's, unchanged


def test_show_recomputes_intervals_at_the_level_asked(tmp_path: Path) -> None:
    doc = suite_doc([[True, True, True, False], [True, True, True, True]], pass_score=0.5)
    _, ran, store = _run(tmp_path, doc)
    run_id = ran["runId"]
    shown = json.loads(_cli("show", run_id, "--json", "--store", store, "--ci-level", "0.8").stdout)
    assert shown["summary"] == ran["summary"]
    assert shown["intervals"]["level"] == 0.8
    rate = shown["intervals"]["tasks"][0]["passRate"]
    expected = clopper_pearson(3, 4, 0.8)
    assert (rate["low"], rate["high"]) == (expected.low, expected.high)
    assert ran["intervals"]["tasks"][0]["passRate"]["low"] < rate["low"]  # 95 % is wider
    refused = _cli("show", run_id, "--store", store, "--ci-level", "1.5")
    assert refused.exit_code == 2


def test_the_terminal_shows_the_intervals_within_80_columns(tmp_path: Path) -> None:
    long_id = [[True, False, True]] * 2
    doc = suite_doc(long_id, pass_score=0.5)
    doc["tasks"][0]["taskId"] = "a-rather-long-task-identifier-that-must-fold-" + "x" * 20
    _, ran, store = _run(tmp_path, doc)
    shown = _cli("show", ran["runId"], "--store", store)
    assert shown.exit_code == 0, shown.output
    lines = shown.output.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert any("95% intervals" in line for line in lines)
    assert any(line.startswith("task-1") and "2/3 [0.09, 0.99]" in line for line in lines)
    assert any("aggregate 95% CI [" in line for line in lines)


def test_the_lower_bound_gate_decides_the_exit_code_only_when_it_is_the_runs_gate(
    tmp_path: Path,
) -> None:
    """Two tasks at 3/3: the point gate passes at passScore 0.5; the pass rates' 95 % bound
    (0.025^(1/3) = 0.2924) does not meet it, so every-task-lower-bound fails, naming both."""
    doc = suite_doc([[True, True, True], [True, True, True]], pass_score=0.5)
    code, point, store = _run(tmp_path, doc)
    assert (code, point["gate"]["name"], point["summary"]["passed"]) == (0, "suite", True)
    code, bound, _ = _run(tmp_path, doc, "--gate", "every-task-lower-bound")
    assert code == 1
    assert bound["summary"]["passed"] is True  # the RFC's point gate, on the wire as it was
    assert bound["gate"]["failingTaskIds"] == ["task-0", "task-1"]
    shown = json.loads(_cli("show", bound["runId"], "--json", "--store", store).stdout)
    assert shown["gate"] == bound["gate"]  # the stored gate, read back the same
    # at 60 % each task's bound 0.2^(1/3) = 0.585 meets 0.5; the suite's (2 of 2 tasks at 1.0:
    # 0.2^(1/2) = 0.447) does not
    at_60 = _cli("show", bound["runId"], "--json", "--store", store, "--ci-level", "0.6")
    gate = json.loads(at_60.stdout)["gate"]
    assert (gate["passed"], gate["failingTaskIds"]) == (False, [])
    assert "lower bound 0.447" in gate["reasons"][0]["why"]
    regraded = _cli("grade", bound["runId"], "--store", store, "--json")
    assert regraded.exit_code == 0  # reproduces the stored summary: no interval is stored
    assert json.loads(regraded.stdout) == bound["summary"]
