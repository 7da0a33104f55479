"""`run`, `show` and the CI exports say why each failing trial failed (issue: every failure says
why): the grid, the reasons, the numbers deciding the verdict; JUnit error vs failure. The
commands run in process: what they print is the point."""

from __future__ import annotations

import json
import re
from pathlib import Path
from xml.etree import ElementTree as ET

from tests.cli.in_process import Done, wopeval

SUITE = {
    "suiteId": "core.test.evals.why",
    "version": "1.0.0",
    "targetAgentId": "core.conformance.agents.scripted",
    "modes": ["golden"],
    "trials": {"count": 3, "k": 2, "passRule": "all"},
    "thresholds": {"passScore": 0.9},
    "tasks": [
        {"taskId": "right", "input": {"output": "ok"},
         "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}}},
        {"taskId": "wrong-answer", "input": {"output": "nope", "trials": {"1": {"output": "ok"}}},
         "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}}},
        {"taskId": "missed-fixture",
         "input": {"calls": [{"tool": "crm:lookup"}, {"tool": "billing:refund"}], "output": "ok"},
         "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}},
         "fixtures": {"onMiss": "fail",
                      "toolResponses": [{"tool": "crm:lookup", "response": {"id": 1}}]}},
    ],
}  # fmt: skip


def _wopeval(tmp_path: Path, *args: str) -> Done:
    env = {"COLUMNS": "80", "CI": "true", "WOPEVAL_STORE": str(tmp_path / "s.db")}
    return wopeval(tmp_path, env, *args)


def _suite(tmp_path: Path) -> Path:
    path = tmp_path / "suite.json"
    path.write_text(json.dumps(SUITE), encoding="utf-8")
    return path


def test_run_and_show_print_the_grid_the_reasons_and_why_it_failed(tmp_path: Path) -> None:
    ran = _wopeval(tmp_path, "run", str(_suite(tmp_path)))
    assert ran.returncode == 1, ran.stderr
    out = ran.stdout
    assert "why: gating aggregate 0.444 < passScore 0.9" in out
    assert "below passScore (gating score): missed-fixture 0.00, wrong-answer 0.33" in out
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("trials  ✓ pass"))
    end = lines.index("why trials failed")
    grid = {line.split()[0]: line.split()[-1] for line in lines[start + 1 : end]}
    assert grid == {"right": "✓✓✓", "wrong-answer": "✗✓✗", "missed-fixture": "!!!"}
    assert re.search(r"^wrong-answer +~ ", out, re.MULTILINE)  # flaky: its trials disagree
    assert 'wrong-answer #0: output does not match (exact): expected "ok", got "nope"' in out
    assert "missed-fixture #0: fixture miss (onMiss: fail)" in out
    assert "billing:refund" in out
    run_id = next(line.split()[1] for line in out.splitlines() if line.startswith("run "))
    shown = _wopeval(tmp_path, "show", run_id)
    assert shown.returncode == 0, shown.stderr
    assert "why: gating aggregate 0.444 < passScore 0.9" in shown.stdout
    assert "wrong-answer #2: output does not match" in shown.stdout


def test_run_json_lists_every_failing_trial_with_its_reason(tmp_path: Path) -> None:
    ran = _wopeval(tmp_path, "run", str(_suite(tmp_path)), "--json")
    doc = json.loads(ran.stdout)
    failures = {(f["taskId"], f["trialIndex"]): f for f in doc["failures"]}
    assert set(failures) == {("wrong-answer", 0), ("wrong-answer", 2), ("missed-fixture", 0),
                             ("missed-fixture", 1), ("missed-fixture", 2)}  # fmt: skip
    assert failures[("missed-fixture", 0)]["status"] == "fail-closed"
    assert failures[("wrong-answer", 0)]["kind"] == "output-mismatch"
    assert "reason" not in json.dumps(doc["summary"])  # the summary stays content-free


def test_junit_reports_crashes_as_errors_and_wrong_answers_as_failures(tmp_path: Path) -> None:
    agents = tmp_path / "crashy.py"
    agents.write_text(
        "async def agent(task_input, ctx):\n"
        "    if task_input.get('crash'):\n"
        "        raise RuntimeError('the agent fell over')\n"
        "    return 'nope'\n",
        encoding="utf-8",
    )
    doc = {**SUITE, "targetAgentId": None, "trials": None, "tasks": [
        {"taskId": "crash", "input": {"crash": True},
         "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}}},
        {"taskId": "wrong", "input": {},
         "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}}},
    ]}  # fmt: skip
    doc = {k: v for k, v in doc.items() if v is not None}
    path = tmp_path / "crash.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    ran = _wopeval(tmp_path, "run", str(path), "--agent", "crashy:agent", "--json")
    run_id = json.loads(ran.stdout)["runId"]
    junit = _wopeval(tmp_path, "export", run_id, "-f", "junit")
    suite = ET.fromstring(junit.stdout)
    assert (suite.get("errors"), suite.get("failures")) == ("1", "2")  # the task, the gate
    crash, wrong, _gate = suite.findall("testcase")
    error = crash.find("error")
    assert error is not None
    assert "RuntimeError: the agent fell over" in (error.get("message") or "")
    failure = wrong.find("failure")
    assert failure is not None
    assert 'expected "ok", got "nope"' in (failure.get("message") or "")
    markdown = _wopeval(tmp_path, "export", run_id, "-f", "markdown")
    assert "#### Why trials failed" in markdown.stdout
    assert "the agent fell over" in markdown.stdout
    report = tmp_path / "r.html"
    made = _wopeval(tmp_path, "report", run_id, "-o", str(report))
    assert made.returncode == 0, made.stderr
    page = report.read_text(encoding="utf-8")
    assert 'id="reasons"' in page
    assert "the agent fell over" in page
