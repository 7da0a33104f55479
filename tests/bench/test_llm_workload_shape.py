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
    assert report["workload"]["idealWallS"] == 0.6  # 3 waves of 2 trials x 2 calls of 100 ms
    results = report["results"]
    for name in ("floor", "wopeval"):
        figures = results[name]
        assert "error" not in figures, figures
        assert figures["passed"] == [6]
        assert figures["requests"]["median"] == 12  # 6 trials x 2 model calls
        assert 1 <= figures["connections"]["median"] <= 2  # one pool, sized to the concurrency
        assert figures["peakRssMb"]["median"] > 0
        assert figures["serverCpuS"]["median"] > 0  # the server's own CPU for these requests
        # The CPU-bound wall is at least the client's CPU (its loop is one thread).
        client_cpu_s = figures["cpuMsPerTrial"]["median"] * 6 / 1000
        assert figures["cpuBoundWallS"]["median"] >= client_cpu_s * (1 - 1e-9)
    for peer in ("inspect", "pydantic-evals"):
        assert results[peer] == {"unavailable": "--no-peers"}  # said, never estimated
    assert set(report["ratiosToFloor"]) == {"wopeval"}
    assert report["goal"]["checks"]["ahead of inspect"] is False  # not measured: not met
