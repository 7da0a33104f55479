"""Peak RSS of ``run`` and ``grade`` only (the ``memory`` row of ``bench/scale.py``), for iterating.

Runs ``bench/scale.py``'s own children (the same suite, the same measurement: ``ru_maxrss`` of a
fresh process) for each size on SQLite and, with ``--pg``, on PostgreSQL, and prints JSON with
the load average. ``--src`` measures another tree's ``src`` (e.g. a ``git archive`` of main).

Usage: ``python3 bench/memory_probe.py [--sizes 10000] [--pg URL] [--src PATH]``
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
CHILD = ROOT / "bench" / "scale_child.py"  # the children bench/scale.py runs


def _child(src: Path, *args: str) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    done = subprocess.run(
        [sys.executable, str(CHILD), *args],
        env=env, capture_output=True, text=True, timeout=7200, cwd=str(src.parent),
    )  # fmt: skip
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-3:] or ["failed"]}
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _pg(admin: str, sql: str) -> None:
    import asyncio

    import asyncpg

    async def go() -> None:
        conn = await asyncpg.connect(admin)
        await conn.execute(sql)
        await conn.close()

    asyncio.run(go())


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", default="10000")
    parser.add_argument("--pg", default=None, help="PostgreSQL admin URL (…/test)")
    parser.add_argument("--src", default=str(ROOT / "src"), help="the tree's src to measure")
    parser.add_argument("--no-sqlite", action="store_true")
    args = parser.parse_args()
    src = Path(args.src).resolve()
    rows: list[dict[str, Any]] = []
    report: dict[str, Any] = {"loadAverageBefore": os.getloadavg(), "src": str(src)}
    with tempfile.TemporaryDirectory() as tmp:
        for n in [int(s) for s in args.sizes.split(",")]:
            stores = [] if args.no_sqlite else [("sqlite", None)]
            stores += [("postgres", args.pg)] if args.pg else []
            for name, admin in stores:
                db = None
                if admin is None:
                    url = str(Path(tmp) / f"probe-{n}.db")
                else:
                    db = f"wopeval_probe_{secrets.token_hex(4)}"
                    _pg(admin, f'CREATE DATABASE "{db}"')
                    url = admin.rsplit("/", 1)[0] + "/" + db
                ran = _child(src, "run", url, str(n), "0", "16")
                graded = _child(src, "grade", url, ran["runId"]) if "runId" in ran else {}
                if db is not None and admin is not None:
                    _pg(admin, f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)')
                rows.append({
                    "store": name, "trials": n,
                    "runPeakRssMb": ran.get("peakRssMb"), "gradePeakRssMb": graded.get("peakRssMb"),
                    "runWallSeconds": ran.get("wallSeconds"),
                    "gradeWallSeconds": graded.get("wallSeconds"),
                    "reproducesStored": graded.get("reproducesStored"),
                    "errors": [e for e in (ran.get("error"), graded.get("error")) if e],
                })  # fmt: skip
    report["memory"] = rows
    report["loadAverageAfter"] = os.getloadavg()
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
