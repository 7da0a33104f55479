"""``wopeval run/grade/runs/show`` through typer's runner, on the quickstart example."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from typer.testing import CliRunner

from wopeval.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "examples" / "quickstart" / "suite.yaml"


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


def test_run_then_grade_show_and_list(tmp_path: Path) -> None:
    store = str(tmp_path / "s.db")
    code, out = _run("run", str(QUICKSTART), "--store", store, "--json")
    doc = json.loads(out)
    summary = doc["summary"]
    assert code == (0 if summary["passed"] else 1)
    assert summary["taskCount"] == 3
    assert summary["trialStats"]["k"] == 3
    run_id = doc["runId"]

    code, out = _run("grade", run_id, "--store", store, "--json")
    assert code == 0
    assert out.strip() == json.dumps(summary, separators=(",", ":"))

    code, out = _run("show", run_id, "--store", store, "--json", "--events")
    shown = json.loads(out)
    assert shown["status"] == "completed"
    assert [e["sequence"] for e in shown["events"]] == list(range(len(shown["events"])))

    code, out = _run("runs", "--store", store, "--json")
    assert code == 0
    assert [r["runId"] for r in json.loads(out)["runs"]] == [run_id]

    code, out = _run("grade", run_id, "--store", store)
    assert "reproduces the stored summary exactly" in out


def test_run_exit_codes_for_bad_input(tmp_path: Path) -> None:
    store = str(tmp_path / "s.db")
    code, out = _run("run", str(QUICKSTART), "--store", store, "--agent", "no.such:agent")
    assert code == 2
    assert "targetAgentId" in out or "no.such" in out
    code, out = _run(
        "run",
        str(QUICKSTART),
        "--store",
        store,
        "--agent",
        "no.such.module:fn",
        "--override-target",
    )
    assert code == 2
    assert "cannot import module 'no.such.module'" in out
    bad = tmp_path / "bad.yaml"
    bad.write_text("suiteId: nope\n")
    code, out = _run("run", str(bad), "--store", store)
    assert code == 2
    assert "suiteId" in out
    code, out = _run("grade", "local/rxxxxxxxxxxxxxxxxxxxxxxxx", "--store", store)
    assert code == 2


def test_run_failing_suite_exits_one(tmp_path: Path) -> None:
    suite = tmp_path / "fail.json"
    suite.write_text(
        json.dumps(
            {
                "suiteId": "core.test.evals.failing",
                "version": "1.0.0",
                "modes": ["golden"],
                "tasks": [
                    {
                        "taskId": "t",
                        "input": {"output": "no"},
                        "expected": {
                            "kind": "golden",
                            "match": {"strategy": "exact", "value": "yes"},
                        },
                    }
                ],
            }
        )
    )
    code, out = _run(
        "run",
        str(suite),
        "--agent",
        "core.conformance.agents.scripted",
        "--store",
        str(tmp_path / "s.db"),
    )
    assert code == 1
    assert "FAILED" in out


def test_run_with_mcp_live_tools_from_a_real_server(tmp_path: Path) -> None:
    demo = ROOT / "tests" / "engine" / "mcp_server_demo.py"
    suite = tmp_path / "mcp.json"
    suite.write_text(
        json.dumps(
            {
                "suiteId": "core.test.evals.mcp",
                "version": "1.0.0",
                "modes": ["golden"],
                "tasks": [
                    {
                        "taskId": "t",
                        "input": {
                            "calls": [{"tool": "crm:lookup-order", "args": {"orderId": "A-1"}}],
                            "output": "ok",
                        },
                        "expected": {
                            "kind": "golden",
                            "match": {"strategy": "exact", "value": "ok"},
                            "trajectory": {
                                "match": "exact",
                                "calls": [{"tool": "crm:lookup-order"}],
                            },
                        },
                    }
                ],
            }
        )
    )
    store = str(tmp_path / "s.db")
    code, out = _run(
        "run",
        str(suite),
        "--agent",
        "core.conformance.agents.scripted",
        "--store",
        store,
        "--mcp",
        f"crm:={sys.executable} {demo}",
        "--json",
    )
    assert code == 0, out
    run_id = json.loads(out)["runId"]
    _, shown = _run("show", run_id, "--store", store, "--json", "--events")
    returned = [e for e in json.loads(shown)["events"] if e["type"] == "agent.tool-returned"]
    assert returned[0]["payload"]["status"] == "ok"
    assert returned[0]["payload"]["outcome"]["status"] == "delivered"
    code, out = _run(
        "run",
        str(suite),
        "--agent",
        "core.conformance.agents.scripted",
        "--store",
        store,
        "--mcp",
        "crm:=/no/such/server",
    )
    assert code == 2


def test_version_and_help() -> None:
    code, out = _run("--version")
    assert (code, out.strip()) == (0, "wopeval 0.1.0")
    code, out = _run("--help")
    assert code == 0
    for command in ("run", "grade", "compare", "serve", "conformance", "export", "validate"):
        assert command in out
