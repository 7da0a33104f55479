"""``wopeval run --baseline`` says what ``compare`` would beside its verdict: that the method
cannot reach alpha with the tasks at hand, and which tasks changed and were left out (RFC 0244
§F: a gate that could not have failed never passes silently)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from wopeval.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "examples" / "quickstart" / "suite.yaml"


def _run(store: str, suite: Path, *extra: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["run", str(suite), "--store", store, *extra])
    return result.exit_code, result.output


def test_0244_F_run_with_a_baseline_says_it_cannot_decide_and_names_changed_tasks(
    tmp_path: Path,
) -> None:
    store = str(tmp_path / "s.db")
    code, out = _run(store, QUICKSTART, "--json")
    assert code in (0, 1), out
    base = json.loads(out)["runId"]
    doc: dict[str, Any] = yaml.safe_load(QUICKSTART.read_text())
    doc["tasks"][0]["expected"]["match"]["value"] = "something else"  # an edited expectation
    edited = tmp_path / "edited.yaml"
    edited.write_text(yaml.safe_dump(doc))
    changed = doc["tasks"][0]["taskId"]

    code, out = _run(store, edited, "--json", "--baseline", base, "--method", "sign-test")
    report = json.loads(out)["baseline"]
    assert report["decidable"] is False
    assert changed in report["changedTasks"]
    assert report["regression"]["pairedTaskCount"] == 2

    code, text = _run(store, edited, "--baseline", base, "--method", "sign-test")
    assert "vs baseline: cannot decide: sign-test cannot reach alpha 0.05" in text
    assert f"changed between the runs and left out: {changed}" in " ".join(text.split())


def test_0244_F_run_without_a_baseline_says_nothing_of_one(tmp_path: Path) -> None:
    code, out = _run(str(tmp_path / "s.db"), QUICKSTART, "--json")
    assert code in (0, 1), out
    assert "baseline" not in json.loads(out)
