"""Issue 13's "1,000 trivial trials, log persisted, whole process" row, before and after.

A whole ``python -m wopeval run`` process (spawn to exit: imports, store open, the run, the
summary, the report) on a suite of N trials of the scripted agent making 3 fixtured tool
calls, every event durably in a fresh SQLite store; this tree's ``src`` ("after") and the base
commit's (``--base``, extracted with ``git archive``: "before"), alternated, best of
``--repeat``. Prints JSON. The peers' whole-process figures come from ``bench/engine.py``
(Inspect AI's ``eval()`` plus its import, promptfoo's CLI process, pydantic-evals in process).

Usage: ``python3 bench/whole_process.py [--trials 1000] [--base REF] [--repeat 3]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SCRIPTED = "core.conformance.agents.scripted"
CALLS = [{"tool": f"kb:tool-{i}", "args": {"i": i}} for i in range(3)]


def _suite(trials: int) -> dict[str, Any]:
    return {
        "suiteId": "core.bench.evals.whole",
        "version": "1.0.0",
        "modes": ["golden"],
        "tasks": [{
            "taskId": "t",
            "input": {"calls": CALLS, "output": "ok"},
            "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}},
            "fixtures": {"onMiss": "fail", "toolResponses": [
                {"tool": c["tool"], "response": {"ok": True}} for c in CALLS]},
        }],
        "trials": {"count": trials},
    }  # fmt: skip


def _once(src: Path, suite: Path, store: Path) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "wopeval", "run", str(suite), "--agent", SCRIPTED,
         "--concurrency", "16", "--store", str(store), "--json"],
        env=env, capture_output=True, text=True, timeout=600, cwd=str(suite.parent),
    )  # fmt: skip
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1:]}
    passed = json.loads(done.stdout)["summary"]["passed"]
    return {"seconds": round(seconds, 3), "passed": passed}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--base", default="402dd97", help="the 'before' commit")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    report: dict[str, Any] = {"loadAverageBefore": os.getloadavg(), "trials": args.trials}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        before = tmp / "before"
        before.mkdir()
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", args.base, "src"], capture_output=True, check=True
        ).stdout
        subprocess.run(["tar", "-x", "-C", str(before)], input=archive, check=True)
        suite = tmp / "suite.json"
        suite.write_text(json.dumps(_suite(args.trials)))
        runs: dict[str, list[dict[str, Any]]] = {"after": [], "before": []}
        for i in range(args.repeat):
            for name, src in (("after", ROOT / "src"), ("before", before / "src")):
                runs[name].append(_once(src, suite, tmp / f"{name}-{i}.db"))
    for name, found in runs.items():
        seconds = [r["seconds"] for r in found if "seconds" in r]
        report[name] = {
            "runs": found,
            "bestSeconds": min(seconds) if seconds else None,
            "trialsPerSecond": round(args.trials / min(seconds), 1) if seconds else None,
        }
    after, before_s = report["after"]["bestSeconds"], report["before"]["bestSeconds"]
    if after and before_s:
        report["speedup"] = round(before_s / after, 2)
    report["loadAverageAfter"] = os.getloadavg()
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
