"""``bench/before_after.py``: each figure's median (min–max) per tree from saved reports, the
ratio after ÷ before, and which way is worse (a time that grew, a throughput that fell)."""

from __future__ import annotations

import json
from pathlib import Path

from bench.before_after import Table, add_pair, add_scale, markdown


def _report(before_runs: list[float], after_runs: list[float]) -> dict[str, object]:
    return {
        "machine": {"loadAverageBefore": [2.0, 1.0, 1.0], "loadAverageAfter": [4.0, 2.0, 1.0]},
        "before": {"wholeProcess": {"trials": 1000, "runs": before_runs}},
        "after": {"wholeProcess": {"trials": 1000, "runs": after_runs}},
    }


def test_samples_of_several_reports_pool_into_one_median_per_tree(tmp_path: Path) -> None:
    table = Table()
    # before: 2, 4, 6 and 8 → median 5; after: 5, 6, 7 and 100 → median 6.5 (ratio 1.3)
    add_scale(table, _report([2.0, 4.0], [5.0, 100.0]), tmp_path / "none.err")
    err = tmp_path / "second.err"
    err.write_text("scale: 20:41:44 after wholeProcess: 15.9 s (load 15.9)\n")
    add_scale(table, _report([6.0, 8.0], [6.0, 7.0]), err)
    (row,) = (r.figures() for r in table.rows.values())
    assert row["before"] == {"median": 5.0, "min": 2.0, "max": 8.0, "n": 4}
    assert row["after"] == {"median": 6.5, "min": 5.0, "max": 100.0, "n": 4}
    assert row["ratio"] == 1.3
    assert round(row["worse"], 10) == 0.3  # seconds: a larger figure is worse
    assert row["load"] == [2.0, 15.9]  # the first report's ends, the second's progress line
    text = "\n".join(markdown([row]))
    assert "| 5 (2–8, n=4) | 6.5 (5–100, n=4) | 1.300 | +30.0 % **> 10 %** |" in text


def test_a_throughput_that_falls_is_worse_and_one_that_rises_is_not(tmp_path: Path) -> None:
    for tree, per_s in (("before", 200.0), ("after", 160.0)):
        doc = {"wopeval": {"overhead": {"trials": 300, "trialsPerSecond": per_s},
                           "concurrency": {"trials": 400, "measuredOverIdeal": 1.0}}}  # fmt: skip
        (tmp_path / f"engine-{tree}-1.json").write_text(json.dumps(doc))
    (tmp_path / "engine-after-1.uptime").write_text(" 21:00 up 1 min, load average: 3.50, 2, 1")
    table = Table()
    add_pair(table, tmp_path)
    rows = {r.name: r.figures() for r in table.rows.values()}
    over = rows["engine.py: 300 instant trials in process"]
    assert over["ratio"] == 0.8
    assert round(over["worse"], 10) == 0.25  # 200 / 160 − 1: a quarter slower
    assert over["load"] == [3.5, 3.5]
    conc = rows["engine.py: 400 × 50 ms at 200, measured ÷ ideal"]
    assert conc["worse"] == 0.0
    assert "**" not in "\n".join(markdown([conc]))


def test_a_missing_tree_leaves_the_ratio_out(tmp_path: Path) -> None:
    table = Table()
    add_scale(table, {"after": {"startup": {"runs": [1.5]}}}, tmp_path / "none.err")
    (row,) = (r.figures() for r in table.rows.values())
    assert row["before"] is None
    assert "ratio" not in row
    assert "| — | 1.5 (1.5–1.5, n=1) | — | — |" in "\n".join(markdown([row]))
