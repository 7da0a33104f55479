"""JUnit XML and Markdown exports of a stored run, through the CLI."""

from __future__ import annotations

import json
from pathlib import Path
from xml.etree import ElementTree as ET

from typer.testing import CliRunner

from wopeval.cli.app import app

ROOT = Path(__file__).resolve().parents[2]


def test_junit_has_a_testcase_per_task_and_a_failure_per_failed_task(tmp_path: Path) -> None:
    store = str(tmp_path / "s.db")
    runner = CliRunner()
    ran = runner.invoke(app, ["run", str(ROOT / "examples/quickstart/suite.yaml"),
                              "--store", store, "--json"])  # fmt: skip
    doc = json.loads(ran.output)
    summary, run_id = doc["summary"], doc["runId"]
    out = tmp_path / "junit.xml"
    made = runner.invoke(app, ["export", run_id, "--store", store, "-f", "junit", "-o", str(out)])
    assert made.exit_code == 0, made.output
    suite = ET.parse(out).getroot()
    *cases, gate = suite.findall("testcase")
    assert [c.get("name") for c in cases] == [t["taskId"] for t in summary["tasks"]]
    assert gate.get("name") == "wopeval gate (suite)"
    assert (gate.find("failure") is None) == summary["passed"]
    failed = {c.get("name") for c in cases if c.find("failure") is not None}
    assert failed == {t["taskId"] for t in summary["tasks"] if not t["passed"]}
    assert suite.get("failures") == str(len(failed) + (0 if summary["passed"] else 1))
    for case in cases:
        failure = case.find("failure")
        if failure is not None:
            assert "trials passed" in (failure.get("message") or "")
    md = runner.invoke(app, ["export", run_id, "--store", store, "-f", "markdown"])
    assert md.exit_code == 0
    table = md.output.split("#### ")[0]  # the results table; the intervals table follows
    assert table.count("\n| `") == len(summary["tasks"])
    assert ("✅ passed" if summary["passed"] else "❌ failed") in md.output
