"""``bench/llm_workload.py``'s JSON on a tiny workload: the floor and this tree against its real
fake server (its own process), each in its own child; the server's counts say what each sent
and how many connections it opened. No timing is asserted."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_llm_workload_counts_each_contenders_requests_and_connections() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "llm_workload.py"), "--trials", "6",
         "--concurrency", "2", "--repeats", "1", "--no-before", "--no-peers"],
        capture_output=True, text=True, timeout=600, check=True,
    )  # fmt: skip
    report = json.loads(done.stdout)
    results = report["results"]
    for name in ("floor", "wopeval"):
        figures = results[name]
        assert "error" not in figures, figures
        assert figures["passed"] == [6]
        assert figures["requests"]["median"] == 12  # 6 trials x 2 model calls
        assert 1 <= figures["connections"]["median"] <= 2  # one pool, sized to the concurrency
        assert figures["peakRssMb"]["median"] > 0
    for peer in ("inspect", "pydantic-evals"):
        assert results[peer] == {"unavailable": "--no-peers"}  # said, never estimated
    assert set(report["ratiosToFloor"]) == {"wopeval"}
    assert report["goal"]["checks"]["ahead of inspect"] is False  # not measured: not met
