"""``bench/scale.py``'s report: every issue-13 row present, ``met`` computed from the figures.

No timing is asserted: the table is built from synthetic figures on either side of each goal
(so a ``met`` typed in, or compared the wrong way, fails), and one tiny end-to-end run of the
real script (two cheap rows, this tree only, no peers) checks the JSON's shape.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bench import scale_table

ROOT = Path(__file__).resolve().parents[2]
ROWS = list(scale_table.ROWS)


def _grading(ms_at_10k: float, growth: float, ratio: float) -> dict[str, Any]:
    per_s = 1000 / ms_at_10k
    results = [
        {"observed": 10_000, "mode": m, "wopeval_per_s": per_s}
        for m in ("exact", "in-order", "any-order", "subset")
    ]
    results.append({"observed": 1000, "mode": "exact", "wopeval_per_s": 10 * per_s, "ratio": ratio})
    return {
        "results": results,
        "quadratic_cases": [
            {
                "cpu_s": {"1000": ms_at_10k / 1e4, "10000": ms_at_10k / 1e3},
                "growth": {"1000->10000": growth},
            }
        ],
        "peer": {"version": "0.0.9"},
    }


def _resume_store(once: bool) -> dict[str, Any]:
    seed = {"seed": 0, "exactlyOnce": once, "summaryEqual": True, "resumeSeconds": 1.0}
    return {"seeds": [seed], "killedMidRun": 1, "medianResumeSeconds": 1.0}


def _report(good: bool) -> dict[str, Any]:
    """Figures just inside (``good``) or just outside every goal."""
    mb = 150.0 if good else 250.0
    after = {
        "resume": {"stores": {"sqlite": _resume_store(good), "postgres": _resume_store(True)}},
        "memory": [
            {"store": s, "trials": n, "run": {"peakRssMb": mb}, "grade": {"peakRssMb": 100.0}}
            for s in ("sqlite", "postgres")
            for n in (10_000, 100_000)
        ],
        "firstTrial": [{"trials": 100_000, "seconds": 0.5 if good else 1.5}],
        "startup": {"seconds": 0.4 if good else 0.6, "heavyImported": []},
        "wholeProcess": {"trials": 1000, "seconds": 1.0},
        "perTrialCpu": {"wopevalMs": 0.3, "floorMs": 0.1, "ratio": 3.9 if good else 4.1},
        "concurrency": {"trials": 2000, "efficiency": 0.95 if good else 0.85},
        "keepalive": {"medianMs": 2.0 if good else 41.0},
    }
    peers = {
        "wholeProcess": {
            "inspect": {"processSeconds": 41.0 if good else 39.0},
            "promptfoo": {"processSeconds": 16.0},
            "pydantic_evals": {"processSeconds": 1.1},
        },
        "concurrency": {"pydantic_evals": {"efficiency": 0.37, "trials": 2000}},
    }
    grading = _grading(20.0 if good else 60.0, 10.0, 150.0)
    return {
        "after": after,
        "before": copy.deepcopy(after),
        "peers": peers,
        "grading": {"after": grading, "before": grading},
    }


def test_every_row_met_when_every_figure_is_inside_its_goal() -> None:
    table = scale_table.build(_report(good=True))
    assert [r["row"] for r in table] == ROWS
    assert {r["row"]: r["met"] for r in table} == dict.fromkeys(ROWS, True)


def test_every_row_missed_when_every_figure_is_outside_its_goal() -> None:
    table = scale_table.build(_report(good=False))
    assert {r["row"]: r["met"] for r in table} == dict.fromkeys(ROWS, False)


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("peers", "wholeProcess", "promptfoo"), {"error": "not installed"}),
        (("grading", "after", "quadratic_cases", 0, "growth"), {"1000->10000": 95.0}),
        (("after", "memory", 3, "grade", "peakRssMb"), 200.0),
    ],
)
def test_one_missing_or_failing_figure_fails_its_row(path: tuple[Any, ...], value: Any) -> None:
    report = _report(good=True)
    target: Any = report
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    met = {r["row"]: r["met"] for r in scale_table.build(report)}
    assert sorted(row for row, ok in met.items() if not ok) == [
        {"peers": "wholeProcess", "grading": "grading", "after": "memory"}[path[0]]
    ]


def test_memory_row_needs_both_stores_at_100000() -> None:
    report = _report(good=True)
    report["after"]["memory"] = [m for m in report["after"]["memory"] if m["store"] == "sqlite"]
    row = next(r for r in scale_table.build(report) if r["row"] == "memory")
    assert row["met"] is False
    assert "sqlite" in row["note"]


def test_markdown_has_a_line_per_row() -> None:
    text = scale_table.markdown(scale_table.build(_report(good=True)))
    assert len(text.splitlines()) == 2 + len(ROWS)
    assert all(line.endswith("| yes |") for line in text.splitlines()[2:])


def test_scale_script_end_to_end_prints_every_row(tmp_path: Path) -> None:
    """The real script, two cheap rows of this tree: JSON with all nine rows, ``met`` bools."""
    out = tmp_path / "scale.json"
    done = subprocess.run(
        [
            sys.executable,
            str(ROOT / "bench" / "scale.py"),
            "--smoke",
            "--no-before",
            "--no-peers",
            "--no-pg",
            "--rows",
            "firstTrial,perTrialCpu",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=str(ROOT),
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report == json.loads(out.read_text())
    assert [r["row"] for r in report["table"]] == ROWS
    assert all(isinstance(r["met"], bool) for r in report["table"])
    assert report["after"]["src"] == str(ROOT / "src")
    first = report["after"]["firstTrial"][0]
    assert first["trials"] == 200
    assert first["wopevalFrom"] == str(ROOT / "src")  # the tree under test, not an install
    assert isinstance(first["seconds"], float)
    cpu = report["after"]["perTrialCpu"]
    assert cpu["ratio"] == pytest.approx(cpu["ratios"][0])
    not_run = {r["row"] for r in report["table"] if r["after"] == "not measured"}
    assert not_run == set(ROWS) - {"firstTrial", "perTrialCpu"}
