"""Scale benchmark (issue 13): one command, JSON for every row of the issue's table, before/after.

Every wopeval measurement runs in fresh child processes, once with this tree's ``src``
("after") and once with the base commit's ``src`` ("before", ``git archive BASE`` into a
temporary directory); the peers run in the same invocation. Rows (``"table"`` in the JSON,
``--markdown`` prints it as a markdown table; each row's ``met`` is computed from the figures):

* ``resume``: ``kill -9`` of a real ``wopeval run`` at seeded random points, ``wopeval run
  --resume RUN``; each (taskId, trialIndex) scored once, the summary an uninterrupted run's;
* ``memory``: peak RSS of ``run`` and ``grade`` at 10⁴ and 10⁵ trials, SQLite and PostgreSQL;
* ``firstTrial``: ``execute`` → first agent call of a 100,000-trial suite;
* ``startup``: a whole ``python -m wopeval run`` process, spawn → first agent call;
* ``wholeProcess``: 1,000 trivial trials, log persisted, spawn → exit, against Inspect AI,
  promptfoo and pydantic-evals processes (``bench/scale_peers.py``);
* ``perTrialCpu``: CPU per trial against a stdlib ``sqlite3`` floor loop;
* ``concurrency``: 2,000 × 50 ms at 200, ideal / measured, with pydantic-evals and Inspect;
* ``grading``: ``bench/grading.py`` as a subprocess (merged as printed);
* ``keepalive``: a real ``wopeval serve``, sequential GETs on one keep-alive connection.

Usage: ``python3 bench/scale.py [--quick] [--pg URL] [--markdown] [--rows a,b] [--no-before]``
(``--sizes 10000,100000,1000000`` adds the hour-long 10⁶ memory point). See bench/README.md.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import scale_peers, scale_proc, scale_table  # noqa: E402
from bench.scale_proc import child, median_of  # noqa: E402

ROWS = scale_table.ROWS
StoreFactory = Callable[[], tuple[str, Callable[[], None]]]


@dataclass
class Plan:
    mode: str
    sizes: list[int]
    first_sizes: list[int]
    cpu_trials: int
    repeats: int
    whole_trials: int = 1000
    conc_trials: int = 2000
    peer_conc_trials: int = 2000
    resume_seeds: int = 5
    resume_shape: tuple[int, int, float] = (4, 40, 0.02)  # tasks, trials each, agent sleep s
    requests: int = 200
    rows: list[str] = field(default_factory=lambda: list(ROWS))


def plan_for(args: argparse.Namespace) -> Plan:
    if args.smoke:  # the shape test: tiny, seconds, no figure worth reading
        plan = Plan(
            "smoke",
            [200],
            [200],
            200,
            1,
            whole_trials=50,
            conc_trials=200,
            peer_conc_trials=50,
            resume_seeds=1,
            resume_shape=(2, 10, 0.05),
            requests=5,
        )
    elif args.quick:
        plan = Plan(
            "quick", [10_000], [100_000], 2000, 1, peer_conc_trials=400, resume_seeds=2, requests=50
        )
    else:
        plan = Plan("full", [10_000, 100_000], [10_000, 100_000], 10_000, 3)
    if args.sizes:
        plan.sizes = [int(s) for s in args.sizes.split(",")]
    if args.rows:
        plan.rows = [r for r in args.rows.split(",") if r]
        unknown = set(plan.rows) - set(ROWS)
        if unknown:
            raise SystemExit(f"--rows: unknown {sorted(unknown)}; rows are {', '.join(ROWS)}")
    return plan


# --- stores ------------------------------------------------------------------------------------


def _pg_create(pg: str) -> tuple[str, Callable[[], None]]:
    """A scratch database on the server of ``pg`` (an admin URL); and how to drop it."""
    import asyncio

    import asyncpg

    name = f"wopeval_bench_{secrets.token_hex(4)}"

    async def run(sql: str) -> None:
        conn = await asyncpg.connect(pg)
        try:
            await conn.execute(sql)
        finally:
            await conn.close()

    asyncio.run(run(f'CREATE DATABASE "{name}"'))
    return (
        urlunsplit(urlsplit(pg)._replace(path="/" + name)),
        lambda: asyncio.run(run(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')),
    )


def url_dir(url: str) -> Path:
    """Where a measurement's side files go: beside a SQLite store, else the system's temp."""
    return Path(url).parent if "://" not in url else Path(tempfile.gettempdir())


def store_factories(tmp: Path, pg: str | None) -> dict[str, StoreFactory]:
    def sqlite() -> tuple[str, Callable[[], None]]:
        return str(tmp / f"store-{secrets.token_hex(4)}.db"), lambda: None

    stores: dict[str, StoreFactory] = {"sqlite": sqlite}
    if pg:
        stores["postgres"] = lambda: _pg_create(pg)
    return stores


# --- one tree ----------------------------------------------------------------------------------


def _memory(
    src: Path, plan: Plan, stores: dict[str, StoreFactory], before: bool
) -> list[dict[str, Any]]:
    rows = []
    for name, new_store in stores.items():
        for n in plan.sizes:
            url, drop = new_store()
            try:
                ran = child(src, "run", url, str(n), "0", "16")
                otlp = url_dir(url) / f"otlp-{secrets.token_hex(4)}.jsonl"
                reads: dict[str, Any] = {}
                if "runId" in ran:
                    run_id = ran["runId"]
                    reads["grade"] = child(src, "grade", url, run_id)
                    reads["export"] = child(src, "export", url, run_id, str(otlp))  # to the file
                    reads["record"] = child(src, "record", url, run_id)
                # The run's OTLP export graded back (``wopeval import-otlp``), from its file; a
                # base before 500ac40 imports quadratically (10,000 traces: over 15 minutes).
                if otlp.exists() and not (before and n > 10_000):
                    reads["import"] = child(src, "import", str(otlp), str(n), timeout=1800)
            finally:
                otlp.unlink(missing_ok=True)
                drop()
            ran.pop("runId", None)
            rows.append({"store": name, "trials": n, "run": ran, **reads})
    return rows


def _first_trial(src: Path, plan: Plan, tmp: Path, before: bool) -> list[dict[str, Any]]:
    rows = []
    for n in plan.first_sizes:
        repeats = 1 if before and n >= 100_000 else plan.repeats  # the base needs a minute each
        runs = [
            child(src, "first", str(tmp / f"first-{secrets.token_hex(4)}.db"), str(n))
            for _ in range(repeats)
        ]
        rows.append(
            {
                "trials": n,
                "seconds": median_of(runs, "firstTrialSeconds"),
                "runs": [r.get("firstTrialSeconds", r.get("error")) for r in runs],
                "wopevalFrom": runs[0].get("wopevalFrom"),
            }
        )
    return rows


def _per_trial_cpu(src: Path, plan: Plan, tmp: Path) -> dict[str, Any]:
    ratios, ours, floors = [], [], []
    same_ratios: list[float] = []
    same_floors: list[float] = []
    for _ in range(plan.repeats):
        run = child(
            src, "run", str(tmp / f"cpu-{secrets.token_hex(4)}.db"), str(plan.cpu_trials), "0", "16"
        )
        if "cpuMsPerTrial" not in run:
            return {"error": run.get("error")}
        floor = child(
            src,
            "floor",
            str(tmp / f"floor-{secrets.token_hex(4)}.db"),
            str(plan.cpu_trials),
            str(round(run["eventRowsPerTrial"])),
        )
        # The check on the floor: the same loop writing wopeval's very rows (10 a trial, as
        # the benchmark suite's run writes them), not compact ones.
        same = child(
            src, "floor-rows", str(tmp / f"floor-rows-{secrets.token_hex(4)}.db"),
            str(plan.cpu_trials),
        )  # fmt: skip
        ours.append(run["cpuMsPerTrial"])
        floors.append(floor["cpuMsPerTrial"])
        ratios.append(run["cpuMsPerTrial"] / floor["cpuMsPerTrial"])
        if "cpuMsPerTrial" in same and run["eventRowsPerTrial"] == same["rowsPerTrial"]:
            same_floors.append(same["cpuMsPerTrial"])
            same_ratios.append(run["cpuMsPerTrial"] / same["cpuMsPerTrial"])
    return {
        "trials": plan.cpu_trials,
        "wopevalMs": round(statistics.median(ours), 4),
        "floorMs": round(statistics.median(floors), 4),
        "ratio": round(statistics.median(ratios), 2),
        "ratios": [round(r, 2) for r in ratios],
        "sameRowsFloorMs": round(statistics.median(same_floors), 4) if same_floors else None,
        "sameRowsRatio": round(statistics.median(same_ratios), 2) if same_ratios else None,
        "wopevalFrom": run.get("wopevalFrom"),
    }


def _concurrency(src: Path, plan: Plan, tmp: Path) -> dict[str, Any]:
    runs = [
        child(
            src,
            "run",
            str(tmp / f"conc-{secrets.token_hex(4)}.db"),
            str(plan.conc_trials),
            "0.05",
            "200",
        )
        for _ in range(plan.repeats)
    ]
    over = median_of(runs, "measuredOverIdeal")
    return {
        "trials": plan.conc_trials,
        "measuredOverIdeal": over,
        "efficiency": round(1 / over, 3) if over else None,
        "runs": [r.get("measuredOverIdeal", r.get("error")) for r in runs],
    }


def measure(
    trees: dict[str, Path],
    plan: Plan,
    stores: dict[str, StoreFactory],
    tmp: Path,
    peers: dict[str, Callable[[], Any]],
    checkpoint: Callable[[dict[str, Any]], None] = lambda partial: None,
) -> dict[str, dict[str, Any]]:
    """Every row of ``plan`` on every tree, row by row (``after`` then ``before`` for each
    row, then that row's peers), so a row's figures meet the same load on this shared machine."""
    out: dict[str, dict[str, Any]] = {name: {"src": str(src)} for name, src in trees.items()}
    out["peers"] = {}

    def steps(src: Path, before: bool) -> dict[str, Callable[[], Any]]:
        return {
            "resume": lambda: scale_proc.resume(
                src, tmp, stores, plan.resume_seeds, *plan.resume_shape
            ),
            "memory": lambda: _memory(src, plan, stores, before),
            "firstTrial": lambda: _first_trial(src, plan, tmp, before),
            "startup": lambda: scale_proc.startup(src, tmp, 1 if plan.mode == "smoke" else 3),
            "wholeProcess": lambda: scale_proc.whole_run(src, tmp, plan.whole_trials, plan.repeats),
            "perTrialCpu": lambda: _per_trial_cpu(src, plan, tmp),
            "concurrency": lambda: _concurrency(src, plan, tmp),
            "keepalive": lambda: scale_proc.keepalive(src, tmp, plan.requests),
        }

    for row in steps(tmp, False):
        if row not in plan.rows:
            continue
        for name, src in trees.items():
            started = time.perf_counter()
            try:
                out[name][row] = steps(src, name == "before")[row]()
            except Exception as exc:  # one broken row is reported, the others still measured
                out[name][row] = {"error": f"{type(exc).__name__}: {exc}"[:300]}
            took = round(time.perf_counter() - started, 1)
            out[name].setdefault("secondsPerRow", {})[row] = took
            progress(f"{name} {row}: {took} s")
            checkpoint(out)
        if row in peers:
            out["peers"][row] = peers[row]()
            progress(f"peers {row}")
            checkpoint(out)
    if "startup" in plan.rows and "inspectImport" in peers:
        out["peers"]["inspectImport"] = peers["inspectImport"]()
    return out


def progress(line: str) -> None:
    """A line on stderr while the benchmark runs (stdout is the JSON)."""
    print(
        f"scale: {time.strftime('%H:%M:%S')} {line} (load {os.getloadavg()[0]:.1f})",
        file=sys.stderr,
        flush=True,
    )


def _before_src(tmp: Path, base: str) -> Path:
    before = tmp / "before"
    before.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", base, "src"], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(before)], input=archive, check=True)
    return before / "src"


def _peers(plan: Plan, enabled: bool) -> dict[str, Callable[[], Any]]:
    """The peers' part of each row that names peers, run right after that row."""
    return {
        "wholeProcess": lambda: scale_peers.whole_process(plan.whole_trials, plan.repeats, enabled),
        "concurrency": lambda: scale_peers.concurrency(plan.peer_conc_trials, enabled),
        "inspectImport": lambda: scale_peers.inspect_import(enabled),
    }


def compile_tree(src: Path) -> None:
    """Byte-compile a tree first, as an installed package is (pip compiles on install): with
    ``PYTHONDONTWRITEBYTECODE`` set, as on this machine, every ``python -m wopeval`` would
    otherwise compile each module it imports from source (~20% of its start-up)."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(src)], check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, one repeat (minutes)")
    parser.add_argument("--smoke", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--sizes", default=None, help="memory trial counts, comma-separated")
    parser.add_argument("--rows", default=None, help=f"only these rows: {','.join(ROWS)}")
    parser.add_argument(
        "--pg",
        default=os.environ.get("WOPEVAL_TEST_POSTGRES_URL"),
        help="PostgreSQL admin URL (default $WOPEVAL_TEST_POSTGRES_URL)",
    )
    parser.add_argument("--no-pg", action="store_true", help="SQLite only")
    parser.add_argument("--base", default="061ccbb", help="the 'before' commit")
    parser.add_argument("--no-before", action="store_true", help="measure this tree only")
    parser.add_argument("--no-peers", action="store_true", help="do not run the peers")
    parser.add_argument("--markdown", action="store_true", help="print the table as markdown")
    parser.add_argument(
        "--out", type=Path, default=None, help="also write the JSON here (after every row too)"
    )
    parser.add_argument(
        "--table-from",
        type=Path,
        default=None,
        help="re-render the table of a saved JSON report (no measuring)",
    )
    args = parser.parse_args()
    if args.table_from:
        saved = json.loads(args.table_from.read_text())
        saved["table"] = scale_table.build(saved)
        print(
            scale_table.markdown(saved["table"]) if args.markdown else json.dumps(saved, indent=2)
        )
        return
    plan = plan_for(args)
    pg = None if args.no_pg else args.pg
    started = time.perf_counter()
    report: dict[str, Any] = {
        "benchmark": "scale (issue 13)",
        "mode": plan.mode,
        "machine": {"cpus": os.cpu_count(), "loadAverageBefore": os.getloadavg()},
        "plan": {k: v for k, v in vars(plan).items()},
        "stores": ["sqlite", "postgres"] if pg else ["sqlite"],
        "base": None if args.no_before else args.base,
    }
    with tempfile.TemporaryDirectory(prefix="wopeval-bench-scale-") as tmp_name:
        tmp = Path(tmp_name)
        stores = store_factories(tmp, pg)
        trees = {"after": ROOT / "src"}
        if not args.no_before:
            trees["before"] = _before_src(tmp, args.base)
        for tree in trees.values():
            compile_tree(tree)

        def checkpoint(partial: dict[str, Any]) -> None:  # a long run killed keeps its rows
            if args.out:
                args.out.write_text(json.dumps({**report, **partial, "partial": True}, indent=2))

        peers = _peers(plan, not args.no_peers)
        report.update(measure(trees, plan, stores, tmp, peers, checkpoint))
        grading: dict[str, Any] = {}
        if "grading" in plan.rows:
            grading["after"] = scale_peers.grading(
                trees["after"], quick=plan.mode != "full", with_peer=not args.no_peers
            )
            if "before" in trees:  # the base's quadratic cases take minutes at 10,000 calls
                grading["before"] = scale_peers.grading(
                    trees["before"], quick=True, with_peer=False
                )
            progress("grading done")
        report["grading"] = grading
    report["table"] = scale_table.build(report)
    report["machine"]["loadAverageAfter"] = os.getloadavg()
    report["wallSeconds"] = round(time.perf_counter() - started, 1)
    text = json.dumps(report, indent=2)
    if args.out:
        args.out.write_text(text + "\n")
    print(scale_table.markdown(report["table"]) if args.markdown else text)


if __name__ == "__main__":
    main()
