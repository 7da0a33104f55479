"""``wopeval run --max-tool-calls N``: the per-trial cap on tool calls, stored with the run (a
re-grade reproduces its summary) and named by the reason of every trial that went past it."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from wopeval.cli.app import app

QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart" / "suite.yaml"


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


def test_a_run_past_max_tool_calls_fails_naming_the_cap(tmp_path: Path) -> None:
    store = str(tmp_path / "s.db")
    # The quickstart's refund task calls two tools; every other task one.
    code, out = _run("run", str(QUICKSTART), "--store", store, "--json", "--max-tool-calls", "1")
    doc = json.loads(out)
    assert code == 1
    refund = [f for f in doc["failures"] if f["taskId"] == "damaged-order-refund"]
    assert len(refund) == 5  # every trial of it
    assert all("maxToolCalls = 1" in failure["reasons"][0] for failure in refund), refund
    code, graded = _run("grade", doc["runId"], "--store", store, "--json")
    assert code == 0
    assert json.loads(graded) == doc["summary"]


def test_max_tool_calls_must_be_positive(tmp_path: Path) -> None:
    code, out = _run("run", str(QUICKSTART), "--store", str(tmp_path / "s.db"),
                     "--max-tool-calls", "0")  # fmt: skip
    assert code == 2
    assert "--max-tool-calls" in out
