"""``--gate`` on the command line: ``run`` stores it and exits by it; ``show``, ``grade`` and
``export`` read the stored gate back (``--gate`` overrides); bad gates are refused."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import anyio
import pytest
from typer.testing import CliRunner

from tests.cli.gate_runs import junit_gate, markdown_passed, suite_doc, write_suite
from wopeval.cli.app import app
from wopeval.events.store import EventStore
from wopeval.grading.gate import GATES, Gate, GateFailure, stored_verdict


def _run(tmp_path: Path, doc: dict[str, Any], *args: str) -> tuple[int, dict[str, Any], str]:
    store = str(tmp_path / "s.db")
    suite = write_suite(tmp_path, doc)
    ran = CliRunner().invoke(app, ["run", str(suite), "--store", store, "--json", *args])
    return ran.exit_code, json.loads(ran.stdout), store


def _cli(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


def _stored_request(store: str, run_id: str) -> dict[str, Any]:
    async def go() -> dict[str, Any]:
        opened = await EventStore.open(store)
        try:
            record = await opened.get_run(run_id)
            assert record is not None
            return dict(record.request)
        finally:
            await opened.close()

    return anyio.run(go)


PLAINEST_FAILING = suite_doc([[False]], pass_score=0.0)  # one task, no trials: suite gate passes


def test_plainest_run_exits_by_its_gate_and_stores_it(tmp_path: Path) -> None:
    code, doc, store = _run(tmp_path, PLAINEST_FAILING)
    assert code == 0
    assert doc["gate"] == {"name": "suite", "passed": True, "failingTaskIds": [], "reasons": []}
    assert "gate" not in _stored_request(store, doc["runId"])  # the default, as runs always were
    code, doc, store = _run(tmp_path, PLAINEST_FAILING, "--gate", "every-task")
    assert code == 1
    assert (doc["gate"]["passed"], doc["gate"]["failingTaskIds"]) == (False, ["task-0"])
    assert doc["summary"]["passed"] is True  # the wire summary is RFC 0244's, unchanged
    assert _stored_request(store, doc["runId"])["gate"] == "every-task"


def test_the_verdict_line_is_the_gates(tmp_path: Path) -> None:
    suite = write_suite(tmp_path, PLAINEST_FAILING)
    store = str(tmp_path / "s.db")
    ran = _cli("run", str(suite), "--store", store, "--gate", "every-task")
    assert ran.exit_code == 1
    verdict = next(line for line in ran.stdout.splitlines() if "aggregate" in line)
    assert verdict.startswith("FAILED  aggregate 0.000")
    assert "gate every-task" in verdict
    # the line after it says what the gate failed on, before the suite gate's numbers
    lines = ran.stdout.splitlines()
    why = lines.index(next(line for line in lines if line.startswith("why:")))
    assert lines[why - 1].startswith("gate every-task failed: 1 task(s) did not pass")
    ran = _cli("run", str(suite), "--store", store)
    assert ran.exit_code == 0
    verdict = next(line for line in ran.stdout.splitlines() if "aggregate" in line)
    assert verdict.startswith("PASSED  aggregate 0.000")
    assert "gate suite" in verdict


def test_stored_outputs_read_the_runs_gate_and_gate_overrides_it(tmp_path: Path) -> None:
    code, doc, store = _run(tmp_path, PLAINEST_FAILING, "--gate", "every-task")
    assert code == 1
    run_id = doc["runId"]
    junit = _cli("export", run_id, "-f", "junit", "--store", store)
    assert junit_gate(junit.stdout, "every-task")[0] is False
    markdown = _cli("export", run_id, "-f", "markdown", "--store", store)
    assert markdown_passed(markdown.stdout, "every-task") is False
    assert "**gate every-task failed: 1 task(s) did not pass: task-0**" in markdown.stdout
    shown = _cli("show", run_id, "--store", store)
    assert "FAILED  aggregate" in shown.stdout
    assert "gate every-task" in shown.stdout
    agent = _stored_request(store, run_id)["agentId"]
    assert shown.stdout.splitlines()[1] == f"agent {agent}"  # which agent it was
    graded = _cli("grade", run_id, "--store", store)
    assert graded.exit_code == 0  # grade's exit code says the summary reproduces
    assert "FAILED  aggregate" in graded.stdout
    assert "gate every-task" in graded.stdout
    # --gate reads the same stored run by another gate
    junit = _cli("export", run_id, "-f", "junit", "--store", store, "--gate", "suite")
    assert junit_gate(junit.stdout, "suite")[0] is True
    markdown = _cli("export", run_id, "-f", "markdown", "--store", store, "--gate", "suite")
    assert markdown_passed(markdown.stdout, "suite") is True
    shown = _cli("show", run_id, "--store", store, "--json", "--gate", "suite")
    assert json.loads(shown.stdout)["gate"]["passed"] is True


def test_bad_gates_are_refused_naming_the_option(tmp_path: Path) -> None:
    suite = write_suite(tmp_path, PLAINEST_FAILING)
    store = str(tmp_path / "s.db")
    ran = _cli("run", str(suite), "--store", store, "--gate", "Every-Task")
    assert ran.exit_code == 2
    assert "--gate: 'Every-Task' is not one of suite, every-task" in ran.output
    assert not (tmp_path / "s.db").exists()  # refused before anything is recorded
    _, doc, store = _run(tmp_path, PLAINEST_FAILING)
    run_id = doc["runId"]
    for args in (
        ("export", run_id, "-f", "otel", "--gate", "suite"),
        ("export", run_id, "-f", "junit", "--gate", "nope"),
        ("show", run_id, "--gate", "nope"),
        ("run", "--resume", run_id, "--gate", "every-task"),
    ):
        refused = _cli(*args, "--store", store)
        assert refused.exit_code == 2, (args, refused.output)
        assert "--gate" in refused.output, (args, refused.output)


def test_a_stored_gate_this_version_does_not_know_is_refused(tmp_path: Path) -> None:
    _, doc, store = _run(tmp_path, PLAINEST_FAILING, "--gate", "every-task")
    run_id = doc["runId"]

    with sqlite3.connect(store) as db:  # a run recorded by a wopeval with another gate
        (request,) = db.execute("SELECT request FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        changed = json.dumps({**json.loads(request), "gate": "upper-bound"})
        db.execute("UPDATE runs SET request = ? WHERE run_id = ?", (changed, run_id))
    for args in (("show", run_id), ("export", run_id, "-f", "markdown")):
        refused = _cli(*args, "--store", store)
        assert refused.exit_code == 2, refused.output
        assert "gate: 'upper-bound' is not one of suite, every-task" in refused.output


def test_a_new_gate_is_one_entry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The seam a confidence-bound gate will use: a registered gate is accepted by --gate,
    stored, and decides the exit code and the exports."""
    monkeypatch.setitem(GATES, "never", Gate("never", "fails every run", lambda s: (_fail(s),)))
    code, doc, store = _run(tmp_path, suite_doc([[True]]), "--gate", "never")
    assert (code, doc["gate"]["name"], doc["gate"]["passed"]) == (1, "never", False)
    junit = _cli("export", doc["runId"], "-f", "junit", "--store", store)
    assert junit_gate(junit.stdout, "never")[0] is False


def _fail(summary: Any) -> GateFailure:
    return GateFailure(None, f"never passes ({summary.taskCount} task)")


def test_a_merged_group_exits_by_its_shards_gate(tmp_path: Path) -> None:
    suite = write_suite(tmp_path, suite_doc([[False], [True]], pass_score=0.5))
    store = str(tmp_path / "s.db")
    for index in range(2):
        shard = _cli("run", str(suite), "--shard", f"{index}/2", "--group", "g-gate",
                     "--gate", "every-task", "--store", store)  # fmt: skip
        assert shard.exit_code == 0, shard.output  # a shard's slice recorded
    merged = _cli("merge", "--group", "g-gate", "--store", store, "--json")
    doc = json.loads(merged.stdout)
    assert doc["summary"]["passed"] is True  # RFC 0244's suite gate: aggregate 0.5 ≥ 0.5
    assert merged.exit_code == 1
    assert (doc["gate"]["name"], doc["gate"]["failingTaskIds"]) == ("every-task", ["task-0"])
    junit = _cli("export", doc["runId"], "-f", "junit", "--store", store)
    assert junit_gate(junit.stdout, "every-task")[0] is False


def test_shards_run_by_different_gates_do_not_merge(tmp_path: Path) -> None:
    suite = write_suite(tmp_path, suite_doc([[False], [True]], pass_score=0.5))
    store = str(tmp_path / "s.db")
    for index, gate in enumerate(("suite", "every-task")):
        shard = _cli("run", str(suite), "--shard", f"{index}/2", "--group", "g-mixed",
                     "--gate", gate, "--store", store)  # fmt: skip
        assert shard.exit_code == 0, shard.output
    merged = _cli("merge", "--group", "g-mixed", "--store", store)
    assert merged.exit_code == 2
    assert "gate is 'every-task'" in merged.output
    assert "has 'suite'" in merged.output


# Ten passing tasks of one trial: the aggregate's lower bound is 0.6915 at 95 % and 0.7411 at
# 90 % (Clopper–Pearson, (alpha / 2) ** (1 / 10)), so passScore 0.7 passes only at 90 %.
TEN_PASSING = suite_doc([[True]] * 10, pass_score=0.7)


def test_a_runs_ci_level_is_stored_and_every_output_gates_by_it(tmp_path: Path) -> None:
    code, doc, store = _run(tmp_path, TEN_PASSING, "--gate", "lower-bound", "--ci-level", "0.9")
    assert code == 0
    run_id = doc["runId"]
    assert doc["gate"]["passed"] is True
    assert _stored_request(store, run_id)["ciLevel"] == 0.9
    shown = json.loads(_cli("show", run_id, "--store", store, "--json").stdout)
    assert shown["gate"]["passed"] is True
    assert shown["intervals"]["level"] == 0.9
    junit = _cli("export", run_id, "-f", "junit", "--store", store)
    assert junit_gate(junit.stdout, "lower-bound")[0] is True
    markdown = _cli("export", run_id, "-f", "markdown", "--store", store)
    assert markdown_passed(markdown.stdout, "lower-bound") is True
    graded = _cli("grade", run_id, "--store", store)
    assert graded.exit_code == 0
    assert "PASSED  aggregate" in graded.stdout
    # --ci-level reads the stored run at another level, as --gate reads it by another gate
    other = json.loads(
        _cli("show", run_id, "--store", store, "--json", "--ci-level", "0.95").stdout
    )
    assert other["gate"]["passed"] is False
    listed = stored_verdict(shown["summary"], _stored_request(store, run_id), TEN_PASSING)
    assert listed is not None
    assert listed.passed is True  # the viewer's runs list
    (tmp_path / "at95").mkdir()
    code, doc, _ = _run(tmp_path / "at95", TEN_PASSING, "--gate", "lower-bound")
    assert (code, doc["gate"]["passed"]) == (1, False)
