"""``wopeval compare``: the paired table, the verdict, and exit 1 only on 'regressed'."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from wopeval.cli.app import app


def _suite(path: Path, outputs: list[str]) -> Path:
    tasks = [
        {
            "taskId": f"t{i}",
            "input": {"output": out},
            "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}},
        }
        for i, out in enumerate(outputs)
    ]
    path.write_text(
        json.dumps(
            {
                "suiteId": "core.test.evals.cmp",
                "version": "1.0.0",
                "modes": ["golden"],
                "tasks": tasks,
            }
        )
    )
    return path


def _run(
    store: str, suite: Path, *extra: str, agent: str = "core.conformance.agents.scripted"
) -> tuple[int, dict[str, object]]:
    result = CliRunner().invoke(
        app,
        [
            "run",
            str(suite),
            "--agent",
            agent,
            "--store",
            store,
            "--json",
            *extra,
        ],
    )
    return result.exit_code, json.loads(result.output)


def test_compare_exits_one_only_when_regressed(tmp_path: Path) -> None:
    store = str(tmp_path / "s.db")
    suite = _suite(tmp_path / "good.json", ["ok"] * 10)
    _, good = _run(store, suite)
    _, bad = _run(store, suite, agent="tests.compare.agents:broken_agent")
    runner = CliRunner()
    worse = runner.invoke(
        app,
        [
            "compare",
            str(good["runId"]),
            str(bad["runId"]),
            "--store",
            store,
            "--method",
            "sign-test",
            "--json",
        ],
    )
    assert worse.exit_code == 1
    doc = json.loads(worse.output)
    assert doc["regression"]["verdict"] == "regressed"
    assert doc["regression"]["pairedTaskCount"] == 10
    better = runner.invoke(
        app,
        [
            "compare",
            str(bad["runId"]),
            str(good["runId"]),
            "--store",
            store,
            "--method",
            "sign-test",
        ],
    )
    assert better.exit_code == 0
    assert "improved" in better.output
    same = runner.invoke(app, ["compare", str(good["runId"]), str(good["runId"]), "--store", store])
    assert same.exit_code == 0
    assert "inconclusive" in same.output
    bad_method = runner.invoke(
        app,
        ["compare", str(good["runId"]), str(bad["runId"]), "--store", store, "--method", "vibes"],
    )
    assert bad_method.exit_code == 2


def test_run_with_a_baseline_attaches_the_verdict(tmp_path: Path) -> None:
    store = str(tmp_path / "s.db")
    suite = _suite(tmp_path / "s.json", ["ok"] * 4)
    _, first = _run(store, suite)
    code, second = _run(store, suite, "--baseline", str(first["runId"]))
    summary = second["summary"]
    assert isinstance(summary, dict)
    assert summary["regression"]["verdict"] == "inconclusive"
    assert code == 0
    code, _ = _run_fail(store, suite, "--baseline", "local/rnosuchrunnosuchrun00")
    assert code == 2


def _run_fail(store: str, suite: Path, *extra: str) -> tuple[int, str]:
    result = CliRunner().invoke(
        app,
        [
            "run",
            str(suite),
            "--agent",
            "core.conformance.agents.scripted",
            "--store",
            store,
            *extra,
        ],
    )
    return result.exit_code, result.output
