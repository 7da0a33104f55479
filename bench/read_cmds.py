"""Start-up of the reading commands (issue 32, goal 5): ``wopeval runs`` and ``wopeval show RUN``
wall time from spawn to exit, before and after in one invocation, against floors.

Each command is a fresh ``python -m wopeval …`` process on a store holding one completed
one-task run (made once, by the after tree). Rows: ``runs``, ``runs --json``, ``show RUN``,
``show RUN --json``, and ``--help`` (kept fast too). Floors, same invocation: ``python -c pass``
(the interpreter), ``python -c "import sqlalchemy.ext.asyncio, aiosqlite, pydantic, typer"``
(what any command reading the store imports before wopeval's own code; each reading row's
``wall_vs_store_floor`` and ``cpu_vs_store_floor`` are its medians over that floor's), and the
same with ``from pydantic import BaseModel`` (pydantic's model machinery, which ``import
pydantic`` alone defers and any typed record needs). Each repeat runs
every row for every tree, the trees in alternating order; figures are the median of the
repeats with min–max, wall seconds and CPU seconds (user + system, ``RUSAGE_CHILDREN``: less
moved by other work on the machine than wall time). ``met``: the after tree's median wall of
every ``runs``/``show`` row under 0.5 s; read it against ``machine.loadBefore``: the goal is
for an idle machine. ``metCpu``: the same for CPU seconds, which a loaded machine still measures.

Usage: ``python3 bench/read_cmds.py [--repeats N] [--base REF] [--no-before]``.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.scale import _before_src, compile_tree  # noqa: E402

BASE = "32a78fa"  # main when issue 32's start-up work started
GOAL_S = 0.5
SCRIPTED = "core.conformance.agents.scripted"
STORE_FLOOR = "import sqlalchemy.ext.asyncio, aiosqlite, pydantic, typer"
# ``import pydantic`` defers its models' machinery until a model is first made; a command that
# reads a typed record cannot, so this floor adds it.
MODELS_FLOOR = f"{STORE_FLOOR}; from pydantic import BaseModel"


def _timed(command: list[str], env: dict[str, str], cwd: Path) -> dict[str, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, timeout=120)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{command} exited {done.returncode}: {done.stderr[-500:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall_s": wall, "cpu_s": cpu}


def _env(src: Path) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(src), "NO_COLOR": "1", "COLUMNS": "80"}


def _stored_run(src: Path, tmp: Path) -> tuple[str, str]:
    suite = {
        "suiteId": "core.bench.evals.read",
        "version": "1.0.0",
        "modes": ["golden"],
        "tasks": [{"taskId": "t", "input": {"output": "ok"},
                   "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}}}],
    }  # fmt: skip
    (tmp / "one.json").write_text(json.dumps(suite))
    store = str(tmp / "read.db")
    wopeval = [sys.executable, "-m", "wopeval"]
    subprocess.run([*wopeval, "run", "one.json", "--agent", SCRIPTED, "--store", store, "--json"],
                   env=_env(src), cwd=tmp, capture_output=True, check=True)  # fmt: skip
    listed = subprocess.run([*wopeval, "runs", "--store", store, "--json"], env=_env(src),
                            cwd=tmp, capture_output=True, text=True, check=True)  # fmt: skip
    return store, str(json.loads(listed.stdout)["runs"][0]["runId"])


def _rows(store: str, run_id: str) -> dict[str, list[str]]:
    return {
        "runs": ["runs", "--store", store],
        "runs --json": ["runs", "--store", store, "--json"],
        "show RUN": ["show", run_id, "--store", store],
        "show RUN --json": ["show", run_id, "--store", store, "--json"],
        "--help": ["--help"],
    }


def _spread(values: list[float]) -> dict[str, float]:
    return {
        "median": round(statistics.median(values), 3),
        "min": round(min(values), 3),
        "max": round(max(values), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--base", default=BASE, help="the 'before' commit")
    parser.add_argument("--no-before", action="store_true", help="measure this tree only")
    args = parser.parse_args()
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="wopeval-bench-read-") as tmp_name:
        tmp = Path(tmp_name)
        trees = {} if args.no_before else {"before": _before_src(tmp, args.base)}
        trees["after"] = ROOT / "src"
        for tree in trees.values():
            compile_tree(tree)
        store, run_id = _stored_run(trees["after"], tmp)
        rows = _rows(store, run_id)
        floors = {"python -c pass": ["-c", "pass"], "store imports": ["-c", STORE_FLOOR],
                  "store and models imports": ["-c", MODELS_FLOOR]}  # fmt: skip
        samples: dict[str, dict[str, list[dict[str, float]]]] = {
            name: {row: [] for row in rows} for name in trees
        }
        floor_samples: dict[str, list[dict[str, float]]] = {row: [] for row in floors}
        for repeat in range(args.repeats):
            for row, argv in floors.items():
                floor_samples[row].append(_timed([sys.executable, *argv], _env(tmp), tmp))
            order = list(trees) if repeat % 2 == 0 else list(reversed(trees))
            for name in order:
                for row, argv in rows.items():
                    command = [sys.executable, "-m", "wopeval", *argv]
                    samples[name][row].append(_timed(command, _env(trees[name]), tmp))

    def summary(runs: list[dict[str, float]]) -> dict[str, Any]:
        return {key: _spread([r[key] for r in runs]) for key in ("wall_s", "cpu_s")}

    report: dict[str, Any] = {
        name: {row: summary(runs) for row, runs in by_row.items()}
        for name, by_row in samples.items()
    }
    after = report["after"]
    reading = [row for row in rows if row != "--help"]
    floors_summary = {row: summary(runs) for row, runs in floor_samples.items()}
    floor = floors_summary["store imports"]
    for by_row in report.values():  # above the store's own imports: wopeval's part
        for row in reading:
            for key in ("wall_s", "cpu_s"):
                ratio = by_row[row][key]["median"] / floor[key]["median"]
                by_row[row][f"{key.split('_')[0]}_vs_store_floor"] = round(ratio, 2)
    machine = {"cpus": os.cpu_count(), "loadBefore": load_before, "loadAfter": os.getloadavg()}
    result = {
        "benchmark": "reading commands start-up (issue 32, goal 5)",
        "machine": machine,
        "base": None if args.no_before else args.base,
        "repeats": args.repeats,
        "floors": floors_summary,
        **report,
        "goal": f"after median wall of {', '.join(reading)} < {GOAL_S} s on an idle machine",
        "met": all(after[row]["wall_s"]["median"] < GOAL_S for row in reading),
        # CPU seconds are what an idle machine's wall time comes down to (one thread, local
        # files): the check that a loaded machine can still make.
        "metCpu": all(after[row]["cpu_s"]["median"] < GOAL_S for row in reading),
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
