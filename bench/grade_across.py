"""``wopeval grade`` across trees: runs of every kind (``bench/grade_kinds.py``) made by a base
commit's CLI, then graded by this tree's CLI and by the base's own; is each stored summary
printed back byte for byte?

Every CLI call is a fresh ``python -m wopeval`` process with the tree's ``src`` first on
``PYTHONPATH`` (the base: ``git archive BASE src`` into a temporary directory). The stored text
is read from the store's ``runs`` table with sqlite3 / asyncpg. A kind that needs a ``run``
option the base lacks is reported as skipped. The OTLP kind compares the base's
``import-otlp --json`` with ``grade-log`` of the log it wrote, by each tree.

Usage: ``python3 bench/grade_across.py [--base REF] [--pg URL] [--out FILE]`` (JSON on stdout).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "src"), str(ROOT)]  # the servers are this tree's

from bench import grade_kinds  # noqa: E402
from bench.grade_kinds import Cli, Kind  # noqa: E402


def tree_cli(src: Path, cwd: Path) -> Cli:
    env = {**os.environ, "PYTHONPATH": str(src), "NO_COLOR": "1", "COLUMNS": "100"}

    def cli(argv: Sequence[str]) -> tuple[int, str]:
        done = subprocess.run(
            [sys.executable, "-m", "wopeval", *argv],
            env=env,
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=600,
        )
        return done.returncode, done.stdout

    return cli


def tree_unfinished(src: Path) -> Callable[[str, str], str]:
    def unfinished(store: str, suite: str) -> str:
        done = subprocess.run(
            [sys.executable, str(Path(grade_kinds.__file__)), store, suite],
            env={**os.environ, "PYTHONPATH": str(src)},
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout.strip().splitlines()[-1]

    return unfinished


def extract(base: str, into: Path) -> Path:
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", base, "src"], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into / "src"


@contextmanager
def pg_scratch(admin: str) -> Iterator[str]:
    """A fresh database on ``admin``'s server for one kind, dropped after."""
    import asyncpg

    name = f"wopeval_across_{secrets.token_hex(4)}"

    async def run(sql: str) -> None:
        conn = await asyncpg.connect(admin)
        try:
            await conn.execute(sql)
        finally:
            await conn.close()

    asyncio.run(run(f'CREATE DATABASE "{name}"'))
    try:
        yield urlunsplit(urlsplit(admin)._replace(path="/" + name))
    finally:
        asyncio.run(run(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@contextmanager
def sqlite_scratch(directory: Path) -> Iterator[str]:
    yield str(directory / "store.db")


def one_kind(
    kind: Kind, store: str, directory: Path, base: Path, after: Path, urls: dict[str, str]
) -> dict[str, Any]:
    made_by = tree_cli(base, directory)
    grade_kinds.write_suites(kind, directory, urls["agent_url"])
    made = grade_kinds.make(
        kind, made_by, store, directory, unfinished=tree_unfinished(base), urls=urls
    )
    out: dict[str, Any] = {"kind": kind.name, "exits": made.exits, "runs": []}
    for run_id in made.runs:
        out["runs"].append(
            {
                "afterGrades": grade_kinds.grade_bytes(tree_cli(after, directory), store, run_id),
                "baseGrades": grade_kinds.grade_bytes(made_by, store, run_id),
            }
        )
    if made.logs is not None and kind.log_check is not None:
        imported, base_log = made.logs
        values = {"store": store, "dir": str(directory)}
        argv = [a.format(**values) for a in kind.log_check[1]]
        _, after_log = tree_cli(after, directory)(argv)
        out["log"] = {
            "importedTasks": len(grade_kinds.last_json(imported).get("tasks") or ()),
            "baseGradeLogSame": base_log == imported,
            "afterGradeLogSame": after_log == imported,
        }
        if after_log != imported:
            out["log"]["difference"] = grade_kinds.first_difference(imported, after_log)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--base", default="e185588", help="the commit whose CLI makes the runs")
    parser.add_argument("--pg", default=os.environ.get("WOPEVAL_TEST_POSTGRES_URL"))
    parser.add_argument("--out", type=Path, default=None, help="also write the JSON here")
    args = parser.parse_args()
    started = time.perf_counter()
    report: dict[str, Any] = {"benchmark": "grade across trees", "base": args.base, "stores": {}}
    after = ROOT / "src"
    with tempfile.TemporaryDirectory(prefix="wopeval-grade-across-") as tmp_name:
        tmp = Path(tmp_name)
        base = extract(args.base, tmp)
        help_text = tree_cli(base, tmp)(["run", "--help"])[1]
        stores: dict[str, Callable[[Path], Any]] = {"sqlite": sqlite_scratch}
        if args.pg:
            stores["postgres"] = lambda _: pg_scratch(args.pg)
        with grade_kinds.servers() as urls:
            for store_name, scratch in stores.items():
                rows = []
                for kind in grade_kinds.KINDS:
                    missing = [o for o in kind.options if o not in help_text]
                    if missing:
                        rows.append({"kind": kind.name, "skipped": f"base lacks {missing}"})
                        continue
                    directory = tmp / f"{store_name}-{kind.name}"
                    directory.mkdir()
                    with scratch(directory) as store:
                        rows.append(one_kind(kind, store, directory, base, after, urls))
                    print(f"across: {store_name} {kind.name}", file=sys.stderr, flush=True)
                report["stores"][store_name] = rows
    graded = [r for rows in report["stores"].values() for k in rows for r in k.get("runs", ())]
    report["totals"] = {
        "runs": len(graded),
        "afterSame": sum(r["afterGrades"]["same"] for r in graded),
        "baseSame": sum(r["baseGrades"]["same"] for r in graded),
        "skippedKinds": sorted(
            {k["kind"] for rows in report["stores"].values() for k in rows if "skipped" in k}
        ),
    }
    report["wallSeconds"] = round(time.perf_counter() - started, 1)
    text = json.dumps(report, indent=2)
    if args.out:
        args.out.write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
