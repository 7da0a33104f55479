"""``bench/flat_memory.py`` prints issue 32 goal 2's figures: each peak, ``met`` from them.

The real script, tiny, this tree only, SQLite only, no export: the JSON's shape and ``met``
computed from the figures printed beside it. No figure is asserted (no timing).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_flat_memory_prints_every_peak_and_met_from_them() -> None:
    args = ["--sizes", "20", "--repeats", "1", "--no-before", "--no-pg", "--no-export"]
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "flat_memory.py"), *args],
                          capture_output=True, text=True, timeout=300, cwd=str(ROOT))  # fmt: skip
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    (point,) = report["points"]
    assert point["store"] == "sqlite"
    assert point["trials"] == 20
    peaks = point["peakRssMb"]
    assert set(peaks) == {"run", "grade.after", "hostSummary"}
    assert all(value > 0 for value in peaks.values())
    assert point["reproducesStored"] is True
    assert point["hostSummaryIsStored"] is True
    assert point["gradeSpeedup"] is None  # no base tree to compare with
    assert point["gradeCpuSeconds"]["after"]["n"] == 1
    under = all(value < report["limitMb"] for value in peaks.values())
    assert point["met"] == (under and not point["errors"])
    assert report["met"] == point["met"]
