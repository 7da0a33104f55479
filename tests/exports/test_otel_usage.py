"""The OTLP export carries each trial's model usage on its agent span (tokens as
``gen_ai.usage.*``, the call count and estimated cost as ``openwop.usage.*``), and
``import-otlp`` reads it back: the same cost, tokens and model calls as the run recorded. They
used to come back as 0 (the import read usage from model spans only)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from wopeval.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = ROOT / "examples" / "quickstart" / "suite.yaml"


def _usage(summary: dict[str, object]) -> dict[str, object]:
    tasks = summary["tasks"]
    assert isinstance(tasks, list)
    return {
        "totalCostUsd": summary["totalCostUsd"],
        "tasks": {t["taskId"]: (t["costUsd"], t["efficiency"]) for t in tasks},
    }


def test_model_usage_survives_the_otlp_round_trip(tmp_path: Path) -> None:
    runner = CliRunner()
    store = str(tmp_path / "s.db")
    result = runner.invoke(app, ["run", str(QUICKSTART), "--store", store, "--json"])
    recorded = json.loads(result.output)
    assert recorded["summary"]["totalCostUsd"] > 0  # the example's agent reports usage
    exported = tmp_path / "run.otel.jsonl"
    result = runner.invoke(app, ["export", recorded["runId"], "--format", "otel", "-o",
                                 str(exported), "--store", store])  # fmt: skip
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["import-otlp", str(exported), "--suite", str(QUICKSTART),
                                 "--json"])  # fmt: skip
    assert result.exit_code in (0, 1), result.output
    assert _usage(json.loads(result.output)) == _usage(recorded["summary"])
