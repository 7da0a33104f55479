"""Issue 33 §3 through the CLI: a world suite run by ``wopeval run`` (the scripted agent's calls
change the world), then ``wopeval grade RUN --json`` prints the stored summary byte for byte,
its task carrying the ``x-wopeval-finalState`` counts and never the state (RFC 0244 §H)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.grade_kinds import SCRIPTED, grade_bytes, last_json
from typer.testing import CliRunner

from wopeval.cli.app import app

WORLD = {
    "initial": {"orders": {"A-1": {"refunded": 0, "secret": "do-not-leak"}}},
    "tools": {"refund": [{"effects": [
        {"op": "increment", "pointer": "/orders/{/orderId}/refunded"}], "result": "ok"}]},
}  # fmt: skip


def _cli(argv: Sequence[str]) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(argv), env={"COLUMNS": "100"})
    return result.exit_code, result.stdout


def _task(task_id: str, refunds: int) -> dict[str, Any]:
    calls = [{"tool": "refund", "args": {"orderId": "A-1"}}] * refunds
    return {
        "taskId": task_id,
        "input": {"calls": calls, "output": "ok"},
        "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "ok"},
                     "x-wopeval-finalState": {"match": "subset",
                                              "state": {"orders": {"A-1": {"refunded": 1}}}}},
        "x-wopeval-world": WORLD,
    }  # fmt: skip


def test_33_3_grade_reproduces_a_world_run_byte_for_byte(tmp_path: Path) -> None:
    suite = {"suiteId": "core.test.evals.worlds", "version": "1.0.0", "targetAgentId": SCRIPTED,
             "modes": ["golden"], "tasks": [_task("once", 1), _task("twice", 2)],
             "trials": {"count": 2}}  # fmt: skip
    path = tmp_path / "suite.json"
    path.write_text(json.dumps(suite), encoding="utf-8")
    store = str(tmp_path / "s.db")
    code, out = _cli(["run", str(path), "--agent", SCRIPTED, "--store", store, "--json"])
    assert code == 1, out  # "twice" refunds twice
    run_id = last_json(out)["runId"]
    graded = grade_bytes(_cli, store, run_id)
    assert graded["same"], graded
    code, shown = _cli(["show", run_id, "--store", store, "--json"])
    summary = last_json(shown)["summary"]
    blocks = {t["taskId"]: t["x-wopeval-finalState"] for t in summary["tasks"]}
    assert blocks == {"once": {"matched": True, "mismatchCount": 0},
                      "twice": {"matched": False, "mismatchCount": 2}}  # fmt: skip
    assert "do-not-leak" not in json.dumps(summary)
