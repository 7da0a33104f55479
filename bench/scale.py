"""Scale benchmark (issue 13): one command, JSON for every row, before and after, same run.

Every measurement runs in a fresh child process (so peak RSS is its own), once with this
tree's ``src`` ("after") and once with the base commit's ``src`` ("before", extracted with
``git archive BASE`` into a temporary directory). Rows:

* ``memory``: peak RSS (``ru_maxrss``) of a ``run`` of N trials (one task, 3 fixtured tool
  calls, an instant scripted agent) and of a ``grade`` of that run, SQLite and PostgreSQL.
* ``firstTrial``: seconds from ``execute`` to the first agent call in that run.
* ``perTrialCpu``: CPU ms per trial of the run, against a stdlib floor loop (``sqlite3``,
  the same tool lookups, the same number of JSON rows per trial, committed per 100 rows).
* ``startup``: a whole ``python -m wopeval run`` process, spawn to the first agent call, and
  whether the host, numpy, the exports or the conformance kit were imported by then.
* ``concurrency``: 2,000 trials of a 50 ms agent at concurrency 200: ideal / measured.
* grading and the peers: ``bench/grading.py`` and ``bench/engine.py`` (run separately; their
  JSON is merged in with ``--with-peers``).

Usage: ``python3 bench/scale.py [--sizes 10000,100000] [--pg URL] [--base REF] [--with-peers]``
(10⁶ trials: ``--sizes 1000000``, about an hour here).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import secrets
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CALLS = [{"tool": f"kb:tool-{i}", "args": {"i": i}} for i in range(3)]
HEAVY = ("wopeval.host", "numpy", "wopeval.exports", "wopeval.conformance")


# --- child side ------------------------------------------------------------------------------


def _suite_doc(trials: int, script: dict[str, Any], fixtured: bool) -> dict[str, Any]:
    task: dict[str, Any] = {
        "taskId": "t",
        "input": script,
        "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}},
    }
    if fixtured:
        task["fixtures"] = {
            "onMiss": "fail",
            "toolResponses": [{"tool": c["tool"], "response": {"ok": True}} for c in CALLS] * 1,
        }
    return {
        "suiteId": "core.bench.evals.scale",
        "version": "1.0.0",
        "modes": ["golden"],
        "tasks": [task],
        "trials": {"count": trials},
    }


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child_main(argv: list[str]) -> None:
    import anyio

    kind = argv[0]
    if kind == "run":
        store_url, trials, sleep_s, concurrency = (
            argv[1],
            int(argv[2]),
            float(argv[3]),
            int(argv[4]),
        )
        started = time.perf_counter()
        result = anyio.run(_child_run_timed, store_url, trials, sleep_s, concurrency, started)
    elif kind == "grade":
        result = anyio.run(_child_grade, argv[1], argv[2])
    elif kind == "floor":
        result = floor_loop(argv[1], int(argv[2]), int(argv[3]))
    else:
        raise SystemExit(f"unknown child {kind}")
    result["peakRssMb"] = round(_peak_mb(), 1)
    print(json.dumps(result))


async def _child_run_timed(
    store_url: str, trials: int, sleep_s: float, concurrency: int, started: float
) -> Any:
    import anyio

    from wopeval.engine.registry import SCRIPTED_AGENT_ID, Registry
    from wopeval.engine.run import RunHandle, RunSettings
    from wopeval.events.store import EventStore
    from wopeval.service.runs import create_run_record, execute
    from wopeval.suite import parse_suite

    first: list[float] = []
    registry = Registry()
    scripted = registry.resolve(SCRIPTED_AGENT_ID)

    async def agent(task_input: Any, ctx: Any) -> Any:
        if not first:
            first.append(time.perf_counter())
        if sleep_s:
            await anyio.sleep(sleep_s)
            return "ok"
        return await scripted(task_input, ctx)

    registry.register_agent("bench.agent", agent)
    script = {} if sleep_s else {"calls": CALLS, "output": "ok"}
    suite = parse_suite(_suite_doc(trials, script, fixtured=not sleep_s))
    store = await EventStore.open(store_url)
    settings = RunSettings(concurrency=concurrency)
    record = await create_run_record(store, suite, "bench.agent", settings)
    cpu, wall = time.process_time(), time.perf_counter()
    summary = await execute(
        store, RunHandle(record.run_id), suite, "bench.agent", registry, settings
    )
    cpu, end = time.process_time() - cpu, time.perf_counter()
    rows = await store.last_sequence(record.run_id) + 1
    await store.close()
    if summary is None or not summary.passed:
        raise SystemExit("the benchmark run must complete and pass")
    return {
        "runId": record.run_id,
        "trials": trials,
        "wallSeconds": round(end - wall, 3),
        "cpuSeconds": round(cpu, 3),
        "cpuMsPerTrial": round(1000 * cpu / trials, 4),
        "firstTrialSeconds": round(first[0] - wall, 4),
        "eventRowsPerTrial": round(rows / trials, 2),
        "concurrency": concurrency,
        "measuredOverIdeal": round((end - wall) / (trials * sleep_s / concurrency), 3)
        if sleep_s
        else None,
    }


async def _child_grade(store_url: str, run_id: str) -> Any:
    from wopeval.events.store import EventStore
    from wopeval.service.runs import regrade

    store = await EventStore.open(store_url)
    cpu, wall = time.process_time(), time.perf_counter()
    graded = await regrade(store, run_id)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    await store.close()
    return {
        "reproducesStored": graded.reproduces_stored,
        "cpuSeconds": round(cpu, 3),
        "wallSeconds": round(wall, 3),
    }


def floor_loop(path: str, trials: int, rows_per_trial: int) -> dict[str, Any]:
    """The stdlib floor: the same tool lookups and the same rows, ``sqlite3`` with WAL."""
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute(
        "CREATE TABLE events (run_id TEXT, sequence INTEGER, event_id TEXT, type TEXT, "
        "timestamp TEXT, causation_id TEXT, payload TEXT, PRIMARY KEY (run_id, sequence))"
    )
    fixtures = {c["tool"]: {"ok": True} for c in CALLS}
    cpu = time.process_time()
    sequence, pending = 0, []
    for trial in range(trials):
        root = secrets.token_hex(8)
        outputs = [fixtures[c["tool"]] for c in CALLS]
        for row in range(rows_per_trial):
            payload = {"trial": trial, "row": row, "inputs": CALLS[row % 3]["args"]}
            if row < len(outputs):
                payload["outcome"] = outputs[row]
            pending.append((
                "r", sequence, secrets.token_hex(8), "agent.tool-called",
                time.strftime("%Y-%m-%dT%H:%M:%SZ"), root, json.dumps(payload),
            ))  # fmt: skip
            sequence += 1
        if len(pending) >= 100:
            db.executemany("INSERT INTO events VALUES (?,?,?,?,?,?,?)", pending)
            db.commit()
            pending = []
    db.executemany("INSERT INTO events VALUES (?,?,?,?,?,?,?)", pending)
    db.commit()
    cpu = time.process_time() - cpu
    return {"trials": trials, "cpuMsPerTrial": round(1000 * cpu / trials, 4)}


# --- parent side -----------------------------------------------------------------------------


def _child(src: Path, *args: str, timeout: float = 7200) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    done = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--child", *args],
        env=env, capture_output=True, text=True, timeout=timeout, cwd=str(src.parent),
    )  # fmt: skip
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1:] or ["failed"]}
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _startup(src: Path, tmp: Path) -> dict[str, Any]:
    """Spawn → first agent call of ``python -m wopeval run`` on a one-task suite."""
    agent_mod = tmp / "bench_first_agent.py"
    marker = tmp / "first.json"
    agent_mod.write_text(
        "import json, sys, time\n"
        "async def agent(task_input, ctx):\n"
        f"    heavy = [m for m in {HEAVY!r} if m in sys.modules]\n"
        f"    open({str(marker)!r}, 'w').write(json.dumps([time.time(), heavy]))\n"
        "    return 'ok'\n"
    )
    suite = tmp / "one.json"
    doc = _suite_doc(1, {}, fixtured=False)
    doc.pop("trials")
    suite.write_text(json.dumps(doc))
    env = {**os.environ, "PYTHONPATH": f"{src}{os.pathsep}{tmp}"}
    best: dict[str, Any] = {}
    for _ in range(3):
        marker.unlink(missing_ok=True)
        store = tmp / f"startup-{secrets.token_hex(4)}.db"
        spawned = time.time()
        subprocess.run(
            [sys.executable, "-m", "wopeval", "run", str(suite), "--agent",
             "bench_first_agent:agent", "--store", str(store), "--json"],
            env=env, capture_output=True, text=True, timeout=120, cwd=str(tmp),
        )  # fmt: skip
        if not marker.exists():
            return {"error": "the agent was never called"}
        at, heavy = json.loads(marker.read_text())
        seconds = at - spawned
        if not best or seconds < best["seconds"]:
            best = {"seconds": round(seconds, 3), "heavyImported": heavy}
    return best


def _pg_database(pg: str) -> tuple[str, str]:
    import asyncio

    import asyncpg

    name = f"wopeval_bench_{secrets.token_hex(4)}"

    async def create() -> None:
        conn = await asyncpg.connect(pg)
        await conn.execute(f'CREATE DATABASE "{name}"')
        await conn.close()

    asyncio.run(create())
    return name, pg.rsplit("/", 1)[0] + "/" + name


def _drop_pg(pg: str, name: str) -> None:
    import asyncio

    import asyncpg

    async def drop() -> None:
        conn = await asyncpg.connect(pg)
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await conn.close()

    asyncio.run(drop())


def measure(src: Path, sizes: list[int], pg: str | None, tmp: Path) -> dict[str, Any]:
    out: dict[str, Any] = {"memory": [], "startup": _startup(src, tmp)}
    stores = [("sqlite", None)] + ([("postgres", pg)] if pg else [])
    for name, server in stores:
        for n in sizes:
            if server is None:
                url, db = str(tmp / f"{src.parent.name}-{n}.db"), None
            else:
                db, url = _pg_database(server)
            ran = _child(src, "run", url, str(n), "0", "16")
            graded = _child(src, "grade", url, ran["runId"]) if "runId" in ran else {}
            if db is not None and server is not None:
                _drop_pg(server, db)
            ran.pop("runId", None)
            out["memory"].append({"store": name, "trials": n, "run": ran, "grade": graded})
    small = min(sizes)
    sqlite_run = next(r["run"] for r in out["memory"] if r["store"] == "sqlite")
    floor = _child(
        src, "floor", str(tmp / f"floor-{secrets.token_hex(4)}.db"), str(small),
        str(round(sqlite_run.get("eventRowsPerTrial", 10))),
    )  # fmt: skip
    out["perTrialCpu"] = {
        "wopevalMs": sqlite_run.get("cpuMsPerTrial"),
        "floorMs": floor.get("cpuMsPerTrial"),
        "ratio": round(sqlite_run["cpuMsPerTrial"] / floor["cpuMsPerTrial"], 2)
        if "cpuMsPerTrial" in sqlite_run and "cpuMsPerTrial" in floor
        else None,
    }
    conc = _child(src, "run", str(tmp / f"conc-{secrets.token_hex(4)}.db"), "2000", "0.05", "200")
    out["concurrency"] = {
        "measuredOverIdeal": conc.get("measuredOverIdeal"),
        "efficiency": round(1 / conc["measuredOverIdeal"], 3)
        if conc.get("measuredOverIdeal")
        else None,
        "error": conc.get("error"),
    }
    return out


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child_main(sys.argv[2:])
        return
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000", help="trial counts, comma-separated")
    parser.add_argument("--pg", default=None, help="PostgreSQL admin URL (e.g. …/test)")
    parser.add_argument("--base", default="061ccbb", help="the 'before' commit")
    parser.add_argument("--no-before", action="store_true", help="measure this tree only")
    parser.add_argument("--with-peers", action="store_true", help="also run engine/grading")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    report: dict[str, Any] = {"loadAverageBefore": os.getloadavg(), "sizes": sizes}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        report["after"] = measure(ROOT / "src", sizes, args.pg, tmp)
        if not args.no_before:
            before = tmp / "before"
            before.mkdir()
            archive = subprocess.run(
                ["git", "-C", str(ROOT), "archive", args.base, "src"],
                capture_output=True, check=True,
            ).stdout  # fmt: skip
            subprocess.run(["tar", "-x", "-C", str(before)], input=archive, check=True)
            report["before"] = measure(before / "src", sizes, args.pg, tmp)
    if args.with_peers:
        for script in ("engine.py", "grading.py"):
            done = subprocess.run(
                [sys.executable, str(ROOT / "bench" / script)], capture_output=True, text=True
            )
            report[script.removesuffix(".py")] = (
                json.loads(done.stdout) if done.stdout else {"error": done.stderr[-400:]}
            )
    report["loadAverageAfter"] = os.getloadavg()
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
