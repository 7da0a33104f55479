"""The peers of ``bench/scale.py``, run in the same invocation as wopeval.

* :func:`whole_process`: 1,000 trivial trials, whole process (spawn to exit): Inspect AI and
  pydantic-evals through ``python -m bench.peers.oneshot``, promptfoo's own CLI process
  (``promptfoo_peer.run_overhead``, whose ``seconds`` is the whole ``promptfoo eval``);
* :func:`concurrency`: 2,000 (or fewer with ``--quick``) trials of a 50 ms agent at concurrency
  200 through pydantic-evals and Inspect AI, ideal / measured;
* :func:`grading`: ``bench/grading.py`` as a subprocess, its JSON merged as it is printed.

A peer that is not installed or fails is reported as ``{"error": "…"}``, never left out.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def _oneshot(peer: str, workload: str, trials: int, timeout: float = 1800) -> dict[str, Any]:
    started = time.perf_counter()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "bench.peers.oneshot", peer, workload, str(trials)],
            cwd=str(ROOT),
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout} s"}
    seconds = time.perf_counter() - started
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        tail = (done.stderr.strip().splitlines() or ["failed"])[-1]
        return {"error": tail[:300]}
    result: dict[str, Any] = json.loads(lines[-1])
    result["processSeconds"] = round(seconds, 3)
    return result


def _promptfoo_overhead(trials: int) -> dict[str, Any]:
    try:
        from bench.peers import promptfoo_peer

        promptfoo_peer.ensure_installed()
        result: dict[str, Any] = dict(promptfoo_peer.run_overhead(trials))
        result["version"] = promptfoo_peer.version()
        result["processSeconds"] = round(result["seconds"], 3)
        return result
    except Exception as exc:  # a peer that cannot run is reported, not fatal
        return {"error": f"{type(exc).__name__}: {exc}"[:300]}


def _median_runs(runs: list[dict[str, Any]]) -> dict[str, Any]:
    good = [r for r in runs if "processSeconds" in r]
    if not good:
        return runs[0] if runs else {"error": "not run"}
    middle = sorted(good, key=lambda r: r["processSeconds"])[len(good) // 2]
    return {
        **middle,
        "processSeconds": round(statistics.median(r["processSeconds"] for r in good), 3),
        "runs": [r["processSeconds"] for r in good],
    }


def whole_process(trials: int, repeats: int, enabled: bool) -> dict[str, Any]:
    if not enabled:
        off = {"error": "not run (--no-peers)"}
        return {"inspect": off, "promptfoo": off, "pydantic_evals": off}
    out: dict[str, Any] = {}
    for peer in ("inspect", "pydantic_evals"):
        runs = []
        for _ in range(repeats):
            runs.append(_oneshot(peer, "overhead", trials))
            if "error" in runs[-1]:
                break
        out[peer] = _median_runs(runs)
    runs = []
    for _ in range(repeats):
        runs.append(_promptfoo_overhead(trials))
        if "error" in runs[-1]:
            break
    out["promptfoo"] = _median_runs(runs)
    return out


def inspect_import(enabled: bool) -> dict[str, Any]:
    """Seconds for a fresh interpreter to ``import inspect_ai`` (the floor of its start-up)."""
    if not enabled:
        return {"error": "not run (--no-peers)"}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", "import inspect_ai"], capture_output=True)
    if done.returncode != 0:
        return {"error": done.stderr.decode().strip()[-200:] or "import failed"}
    return {"importSeconds": round(time.perf_counter() - started, 3)}


def concurrency(trials: int, enabled: bool) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for peer in ("pydantic_evals", "inspect"):
        if not enabled:
            out[peer] = {"error": "not run (--no-peers)"}
            continue
        result = _oneshot(peer, "concurrency", trials)
        if "measuredOverIdeal" in result:
            result["efficiency"] = round(1 / result["measuredOverIdeal"], 3)
            result["trials"] = trials
        out[peer] = result
    return out


def grading(src: Path, quick: bool, with_peer: bool, timeout: float = 3600) -> dict[str, Any]:
    """``bench/grading.py`` on the ``src`` tree, its JSON as printed (or the failure)."""
    import os

    args = [sys.executable, str(ROOT / "bench" / "grading.py")]
    args += ["--quick"] if quick else []
    args += [] if with_peer else ["--no-peers"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join((str(src), str(ROOT)))}
    started = time.perf_counter()
    try:
        done = subprocess.run(
            args, cwd=str(ROOT), env=env, capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return {"error": f"bench/grading.py timed out after {timeout} s", "args": args[2:]}
    try:
        report: dict[str, Any] = json.loads(done.stdout)
    except ValueError:
        tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return {"error": f"bench/grading.py exited {done.returncode}: {tail[:300]}"}
    report["invokedWith"] = args[2:]
    report["processSeconds"] = round(time.perf_counter() - started, 1)
    return report
