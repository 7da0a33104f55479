"""``wopeval compare`` as a deployment gate, through the real CLI on both stores: it regresses or
says it cannot decide (exit 4) when every candidate task fails, it leaves a task whose definition
changed between the runs out and names it, and every output comes from one verdict object.
``compare`` only reads: the README scenario's two runs are made once per store for the module."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from wopeval.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "examples" / "quickstart" / "suite.yaml"
METHODS = ("paired-bootstrap", "mcnemar", "sign-test", "paired-t")


def _run(store: str, suite: Path, *extra: str) -> dict[str, Any]:
    result = CliRunner().invoke(app, ["run", str(suite), "--store", store, "--json", *extra])
    assert result.exit_code in (0, 1), result.output
    doc: dict[str, Any] = json.loads(result.output)
    return doc


def _compare(store: str, base: str, cand: str, *extra: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["compare", base, cand, "--store", store, *extra])
    return result.exit_code, result.output


@pytest.fixture(scope="module")
def quickstart_runs(module_store_url: str) -> tuple[str, str, str]:
    """The README scenario: the bundled agent, then an agent that fails every task (3 tasks)."""
    good = _run(module_store_url, QUICKSTART)
    bad = _run(
        module_store_url,
        QUICKSTART,
        "--agent",
        "tests.compare.agents:broken_agent",
        "--override-target",
    )
    return module_store_url, str(good["runId"]), str(bad["runId"])


@pytest.mark.postgres
@pytest.mark.parametrize("method", [None, *METHODS])
def test_0244_F_every_failing_candidate_regresses_or_exits_undecidable(
    quickstart_runs: tuple[str, str, str], method: str | None
) -> None:
    store, good, bad = quickstart_runs
    extra = ["--json"] if method is None else ["--json", "--method", method]
    code, out = _compare(store, good, bad, *extra)
    doc = json.loads(out)
    assert doc["regression"]["pairedTaskCount"] == 3
    if doc["decidable"]:
        assert (code, doc["regression"]["verdict"]) == (1, "regressed")
    else:
        assert (code, doc["regression"]["verdict"]) == (4, "inconclusive")
        assert doc["cannotDecide"].startswith(
            f"{doc['regression']['method']} cannot reach alpha 0.05 with 3 paired tasks"
        )
        accepted, _ = _compare(store, good, bad, *extra, "--accept-undecidable")
        assert accepted == 0
    if method is None:  # several trials per task: the bootstrap, which needs 6 tasks
        assert doc["regression"]["method"] == "paired-bootstrap"
        assert doc["methodChosenFrom"] == "scores or several trials per task"
        assert doc["cannotDecide"].endswith("needs ≥ 6 paired tasks, or method paired-t")
    assert doc["baseline"] == {"runId": good, "agentId": "wopeval.examples.support"}
    assert doc["candidate"]["agentId"] != doc["baseline"]["agentId"]
    assert doc["definitionsChecked"] is True
    assert doc["changedTasks"] == []


def test_compare_text_and_markdown_say_what_json_says(
    tmp_path: Path,
) -> None:
    store = str(tmp_path / "s.db")
    good = str(_run(store, QUICKSTART)["runId"])
    bad = str(
        _run(
            store, QUICKSTART, "--agent", "tests.compare.agents:broken_agent", "--override-target"
        )["runId"]
    )
    code, text = _compare(store, good, bad)
    assert code == 4
    doc = json.loads(_compare(store, good, bad, "--json")[1])
    flat = " ".join(text.split())
    assert f"baseline {good} (agent wopeval.examples.support)" in flat
    assert "verdict inconclusive" in flat
    assert " ".join(doc["cannotDecide"].split()) in flat
    markdown = _compare(store, good, bad, "--markdown")[1]
    assert markdown.startswith("### compare: inconclusive")
    assert doc["cannotDecide"] in markdown
    assert "wopeval.examples.support" in markdown


def _suite(path: Path, expected: list[str]) -> Path:
    tasks = [
        {
            "taskId": f"t{i}",
            "input": {"output": "ok"},
            "expected": {"kind": "golden", "match": {"strategy": "exact", "value": value}},
        }
        for i, value in enumerate(expected)
    ]
    doc = {"suiteId": "core.test.evals.cmp", "version": "1.0.0", "modes": ["golden"]}
    path.write_text(json.dumps({**doc, "tasks": tasks}))
    return path


@pytest.mark.postgres
def test_0244_F_edited_task_is_left_out_and_named(store_url: str, tmp_path: Path) -> None:
    scripted = ("--agent", "core.conformance.agents.scripted")
    before = _run(store_url, _suite(tmp_path / "a.json", ["ok"] * 8), *scripted)
    # t3's expectation is edited: the same agent now fails it; the task is not the same task
    edited = _suite(tmp_path / "b.json", ["ok"] * 3 + ["ok!"] + ["ok"] * 4)
    after = _run(store_url, edited, *scripted)
    code, out = _compare(store_url, str(before["runId"]), str(after["runId"]), "--json")
    doc = json.loads(out)
    assert doc["changedTasks"] == ["t3"]
    assert doc["regression"]["pairedTaskCount"] == 7
    assert "t3" not in [pair["taskId"] for pair in doc["pairs"]]
    assert "1 task changed between the runs and left out: t3" in doc["notes"]
    assert (code, doc["regression"]["verdict"]) == (0, "inconclusive")
    _, text = _compare(store_url, str(before["runId"]), str(after["runId"]))
    assert "left out: t3" in " ".join(text.split())


@pytest.mark.postgres
def test_0244_F_run_with_a_baseline_leaves_an_edited_task_out(
    store_url: str, tmp_path: Path
) -> None:
    scripted = ("--agent", "core.conformance.agents.scripted")
    before = _run(store_url, _suite(tmp_path / "a.json", ["ok"] * 8), *scripted)
    edited = _suite(tmp_path / "b.json", ["ok"] * 3 + ["ok!"] + ["ok"] * 4)
    after = _run(store_url, edited, *scripted, "--baseline", str(before["runId"]))
    assert after["summary"]["regression"]["pairedTaskCount"] == 7
    graded = CliRunner().invoke(app, ["grade", str(after["runId"]), "--store", store_url])
    assert graded.exit_code == 0, graded.output


def test_0244_F_runs_without_digests_pair_by_task_id_with_a_note(tmp_path: Path) -> None:
    store = str(tmp_path / "s.db")
    scripted = ("--agent", "core.conformance.agents.scripted")
    before = _run(store, _suite(tmp_path / "a.json", ["ok"] * 8), *scripted)
    after = _run(store, _suite(tmp_path / "b.json", ["ok"] * 3 + ["ok!"] + ["ok"] * 4), *scripted)
    with sqlite3.connect(store) as db:  # a run stored before runs carried digests
        (request,) = db.execute(
            "SELECT request FROM runs WHERE run_id = ?", (before["runId"],)
        ).fetchone()
        legacy = {k: v for k, v in json.loads(request).items() if k != "digests"}
        db.execute(
            "UPDATE runs SET request = ? WHERE run_id = ?",
            (json.dumps(legacy), before["runId"]),
        )
    _, out = _compare(store, str(before["runId"]), str(after["runId"]), "--json")
    doc = json.loads(out)
    assert doc["definitionsChecked"] is False
    assert doc["changedTasks"] == []
    assert doc["regression"]["pairedTaskCount"] == 8
    assert any("could not be checked" in note for note in doc["notes"])


def test_0244_F_plainest_suite_cannot_decide_and_says_so(tmp_path: Path) -> None:
    store = str(tmp_path / "s.db")
    suite = _suite(tmp_path / "one.json", ["ok"])
    ran = _run(store, suite, "--agent", "core.conformance.agents.scripted")
    run_id = str(ran["runId"])
    code, out = _compare(store, run_id, run_id, "--json")
    doc = json.loads(out)
    assert code == 4
    assert doc["regression"]["method"] == "mcnemar"  # one pass/fail outcome per task
    assert doc["cannotDecide"] == (
        "mcnemar cannot reach alpha 0.05 with 1 paired task (its smallest p is 1); "
        "needs ≥ 6 paired tasks"
    )
    assert doc["methodsThatCanDecide"] == []
    assert _compare(store, run_id, run_id, "--accept-undecidable")[0] == 0
