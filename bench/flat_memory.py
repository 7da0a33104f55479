"""Flat memory and grading speed at 10⁴ and 10⁵ trials, SQLite and PostgreSQL, before and after.

For each store and size, one run of the benchmark suite (``bench/scale_child.py``'s: one task,
N trials, 3 fixtured tool calls, an instant agent) with this tree, then in fresh child
processes, each its peak RSS (``ru_maxrss``):

* ``run``: the run itself (its end-of-run summary included, as the host builds it);
* ``grade``: ``regrade`` of the stored run, ``--repeats`` times for each tree, the base's
  (``git archive BASE``) and this one's interleaved, with CPU seconds; both must reproduce the
  stored summary byte for byte (so each tree's summary equals the other's);
* ``export``: ``wopeval export --format otel`` to the null device, and ``record``:
  ``wopeval record`` of the run, through the CLI;
* ``hostSummary``: the host app's ``GET /runs/{id}/eval-summary`` of that run.

Each row's ``met`` holds when every peak is under ``--limit-mb`` (150) and both trees reproduce
the stored summary; ``gradeSpeedup`` is the base's median grade CPU over this tree's (min-max of
the repeats beside it). The load average is printed before and after each store; on a shared
machine read CPU seconds, not wall time.

Usage: ``python3 bench/flat_memory.py [--sizes 10000,100000] [--pg URL] [--repeats 3]
[--base COMMIT] [--no-export] [--out FILE]`` (``--sizes …,1000000`` adds the hour-long 10⁶ point).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.scale import _before_src, compile_tree, store_factories  # noqa: E402
from bench.scale_proc import child  # noqa: E402

LIMIT_MB = 150.0


def _spread(values: list[float]) -> dict[str, Any]:
    if not values:
        return {"median": None, "min": None, "max": None, "n": 0}
    return {
        "median": round(statistics.median(values), 3),
        "min": round(min(values), 3),
        "max": round(max(values), 3),
        "n": len(values),
    }


def _progress(line: str) -> None:
    load = os.getloadavg()[0]
    print(f"flat_memory: {time.strftime('%H:%M:%S')} {line} (load {load:.1f})", file=sys.stderr)


def measure_point(
    trees: dict[str, Path], url: str, trials: int, repeats: int, exports: bool, limit: float
) -> dict[str, Any]:
    """Every figure of one (store, size) point; the run is made by the ``after`` tree."""
    after = trees["after"]
    ran = child(after, "run", url, str(trials), "0", "16")
    if "runId" not in ran:
        return {"trials": trials, "error": ran.get("error")}
    run_id = ran["runId"]
    _progress(f"{trials} trials run: {ran.get('peakRssMb')} MB")
    grades: dict[str, list[dict[str, Any]]] = {name: [] for name in trees}
    for _ in range(repeats):
        for name in ("before", "after"):
            if name in trees:
                grades[name].append(child(trees[name], "grade", url, run_id))
    _progress(f"{trials} trials graded {repeats}× per tree")
    reads: dict[str, dict[str, Any]] = {"hostSummary": child(after, "host-summary", url, run_id)}
    if exports:
        reads["export"] = child(after, "export", url, run_id)
        reads["record"] = child(after, "record", url, run_id)
    peaks = {"run": ran.get("peakRssMb")}
    for name, runs in grades.items():
        peaks[f"grade.{name}"] = max((g.get("peakRssMb") or 0.0) for g in runs)
    peaks |= {name: read.get("peakRssMb") for name, read in reads.items()}
    cpu = {
        name: _spread([g["cpuSeconds"] for g in runs if "cpuSeconds" in g])
        for name, runs in grades.items()
    }
    reproduces = all(g.get("reproducesStored") is True for runs in grades.values() for g in runs)
    before, now = cpu.get("before", {}).get("median"), cpu["after"]["median"]
    speedup = round(before / now, 2) if before and now else None
    ours = [v for k, v in peaks.items() if k != "grade.before"]
    errors = [r["error"] for r in [ran, *reads.values()] if "error" in r]
    errors += [g["error"] for runs in grades.values() for g in runs if "error" in g]
    return {
        "trials": trials,
        "peakRssMb": peaks,
        "gradeCpuSeconds": cpu,
        "gradeSpeedup": speedup,
        "gradeSpeedupRange": [
            round(cpu["before"]["min"] / cpu["after"]["max"], 2),
            round(cpu["before"]["max"] / cpu["after"]["min"], 2),
        ]
        if speedup
        else None,
        "runCpuSeconds": ran.get("cpuSeconds"),
        "hostSummaryIsStored": reads["hostSummary"].get("isStored"),
        "reproducesStored": reproduces,
        "met": not errors
        and reproduces
        and all(isinstance(v, int | float) and v < limit for v in ours),
        "errors": errors,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--pg", default=os.environ.get("WOPEVAL_TEST_POSTGRES_URL"))
    parser.add_argument("--no-pg", action="store_true")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--base", default="2bcb0ff", help="the 'before' commit")
    parser.add_argument("--no-before", action="store_true")
    parser.add_argument("--no-export", action="store_true", help="skip export and record")
    parser.add_argument("--limit-mb", type=float, default=LIMIT_MB)
    parser.add_argument(
        "--out", type=Path, default=None, help="also write the JSON here, after every point too"
    )
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    report: dict[str, Any] = {
        "benchmark": "flat memory and grading speed",
        "base": None if args.no_before else args.base,
        "limitMb": args.limit_mb,
        "cpus": os.cpu_count(),
        "points": [],
    }
    with tempfile.TemporaryDirectory(prefix="wopeval-bench-flat-") as tmp_name:
        tmp = Path(tmp_name)
        trees = {"after": ROOT / "src"}
        if not args.no_before:
            trees["before"] = _before_src(tmp, args.base)
        for tree in trees.values():
            compile_tree(tree)
        stores = store_factories(tmp, None if args.no_pg else args.pg)
        for store, make in stores.items():
            for trials in sizes:
                url, drop = make()
                load_before = os.getloadavg()
                try:
                    point = measure_point(
                        trees, url, trials, args.repeats, not args.no_export, args.limit_mb
                    )
                finally:
                    drop()
                point = {"store": store, **point, "loadAverage": [load_before, os.getloadavg()]}
                report["points"].append(point)
                _progress(f"{store} {trials}: met={point.get('met')}")
                if args.out:  # a run stopped early keeps the points it measured
                    args.out.write_text(json.dumps({**report, "partial": True}, indent=2))
    report["met"] = all(p.get("met") for p in report["points"])
    text = json.dumps(report, indent=2)
    if args.out:
        args.out.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
