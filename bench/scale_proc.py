"""Whole-process rows of ``bench/scale.py``: real ``python -m wopeval`` processes, spawn to exit.

* :func:`startup`: spawn → first agent call of ``wopeval run`` on a one-task suite, and which
  heavy modules were imported by then;
* :func:`whole_run`: ``wopeval run`` of N trivial trials (3 fixtured tool calls, the log
  persisted to SQLite), spawn to exit;
* :func:`resume`: ``kill -9`` of a real ``wopeval run`` at seeded random points, then
  ``wopeval run --resume RUN``; every (taskId, trialIndex) scored exactly once and the summary
  equal to an uninterrupted run's;
* :func:`keepalive`: a real ``wopeval serve`` child, N sequential GETs of the discovery document
  on one keep-alive connection.
"""

from __future__ import annotations

import json
import os
import random
import re
import secrets
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.scale_child import CALLS, HEAVY, suite_doc

CHILD = Path(__file__).resolve().parent / "scale_child.py"
SCRIPTED = "core.conformance.agents.scripted"
TERMINAL = ("completed", "failed", "cancelled", "canceled")


def env_for(src: Path, *extra: Path) -> dict[str, str]:
    path = os.pathsep.join(str(p) for p in (src, *extra))
    return {**os.environ, "PYTHONPATH": path, "NO_COLOR": "1"}


def child(src: Path, *args: str, timeout: float = 7200) -> dict[str, Any]:
    """One ``scale_child.py`` measurement in a fresh process; ``{"error": …}`` if it failed."""
    try:
        done = subprocess.run(
            [sys.executable, str(CHILD), *args],
            env=env_for(src),
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=str(src.parent),
        )
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout} s"}
    lines = done.stdout.strip().splitlines()
    if done.returncode != 0 or not lines:
        return {"error": last_line(done.stderr)}
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def last_line(stderr: str) -> str:
    """The last line of ``stderr`` that says something (rich's error box drawn away)."""
    lines = [line.strip(" │╭╮╰╯─\t") for line in stderr.splitlines()]
    said = [line for line in lines if line]
    return (said[-1] if said else "failed")[:300]


def median_of(runs: list[dict[str, Any]], key: str) -> float | None:
    values = [r[key] for r in runs if isinstance(r.get(key), int | float)]
    return round(statistics.median(values), 4) if values else None


def _wopeval(
    src: Path, tmp: Path, *args: str, timeout: float = 600, env: dict[str, str] | None = None
) -> tuple[float, Any]:
    """``python -m wopeval ARGS``: (wall seconds spawn → exit, the completed process)."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "wopeval", *args],
        env=env or env_for(src, tmp),
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=str(tmp),
    )
    return time.perf_counter() - started, done


def startup(src: Path, tmp: Path, repeats: int) -> dict[str, Any]:
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
    doc = suite_doc(1, {}, fixtured=False)
    doc.pop("trials")
    suite.write_text(json.dumps(doc))
    runs: list[dict[str, Any]] = []
    for _ in range(repeats):
        marker.unlink(missing_ok=True)
        store = tmp / f"startup-{secrets.token_hex(4)}.db"
        spawned = time.time()
        _wopeval(
            src,
            tmp,
            "run",
            str(suite),
            "--agent",
            "bench_first_agent:agent",
            "--store",
            str(store),
            "--json",
            timeout=120,
        )
        if not marker.exists():
            return {"error": "the agent was never called"}
        at, heavy = json.loads(marker.read_text())
        runs.append({"seconds": round(at - spawned, 3), "heavyImported": heavy})
    return {
        "seconds": median_of(runs, "seconds"),
        "runs": [r["seconds"] for r in runs],
        "heavyImported": sorted({m for r in runs for m in r["heavyImported"]}),
    }


def _trivial_suite(tmp: Path, trials: int) -> Path:
    suite = tmp / f"trivial-{trials}.json"
    suite.write_text(json.dumps(suite_doc(trials, {"calls": CALLS, "output": "ok"}, True)))
    return suite


def whole_run(src: Path, tmp: Path, trials: int, repeats: int) -> dict[str, Any]:
    """``wopeval run`` of ``trials`` trivial trials at concurrency 16, spawn to exit."""
    suite = _trivial_suite(tmp, trials)
    runs: list[dict[str, Any]] = []
    for _ in range(repeats):
        store = tmp / f"whole-{secrets.token_hex(4)}.db"
        seconds, done = _wopeval(
            src,
            tmp,
            "run",
            str(suite),
            "--agent",
            SCRIPTED,
            "--concurrency",
            "16",
            "--store",
            str(store),
            "--json",
        )
        if done.returncode != 0:
            return {"error": last_line(done.stderr)}
        runs.append({"seconds": round(seconds, 3)})
    return {
        "trials": trials,
        "seconds": median_of(runs, "seconds"),
        "runs": [r["seconds"] for r in runs],
    }


# --- resume after kill -9 ----------------------------------------------------------------------

RESUME_AGENT = """\
import os, time
import anyio
from wopeval.engine.registry import SCRIPTED_AGENT_ID, Registry

_scripted = Registry().resolve(SCRIPTED_AGENT_ID)

async def agent(task_input, ctx):
    mark = os.environ.get("BENCH_FIRST_MARK")
    if mark and not os.path.exists(mark):
        with open(mark, "w") as out:
            out.write(str(time.time()))
    if mark:
        with open(mark + ".last", "w") as out:
            out.write(str(time.time()))
    await anyio.sleep({sleep})
    return await _scripted(task_input, ctx)
"""


def _without_latency(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_latency(v) for k, v in value.items() if "atency" not in k}
    if isinstance(value, list):
        return [_without_latency(v) for v in value]
    return value


def _summary(done: Any) -> Any:
    lines = done.stdout.strip().splitlines()
    return json.loads(lines[-1]).get("summary") if lines else None


def resume(
    src: Path,
    tmp: Path,
    store_urls: dict[str, Callable[[], tuple[str, Callable[[], None]]]],
    seeds: int,
    tasks: int = 4,
    trials: int = 40,
    sleep_s: float = 0.02,
) -> dict[str, Any]:
    """Per store and seed: kill -9 a real ``wopeval run`` at a random point, then resume it.

    The agent sleeps ``sleep_s`` and then makes the 3 fixtured calls (fixtures only, so a trial
    in flight at the kill may be re-run); 4 at a time."""
    (tmp / "bench_resume_agent.py").write_text(RESUME_AGENT.format(sleep=sleep_s))
    suite = tmp / "resume-suite.json"
    suite.write_text(json.dumps(suite_doc(trials, {"calls": CALLS, "output": "ok"}, True, tasks)))
    run_args = ["run", str(suite), "--agent", "bench_resume_agent:agent", "--concurrency", "4"]
    out: dict[str, Any] = {"tasks": tasks, "trialsPerTask": trials, "stores": {}}
    for store_name, new_store in store_urls.items():
        url, drop = new_store()
        mark = tmp / f"first-{secrets.token_hex(4)}"
        try:
            env = {**env_for(src, tmp), "BENCH_FIRST_MARK": str(mark)}
            clean_s, clean = _wopeval(src, tmp, *run_args, "--store", url, "--json", env=env)
            clean_summary = _summary(clean)
            # first → last agent call of the uninterrupted run: the window the kills fall in
            last = Path(f"{mark}.last")
            window = float(last.read_text()) - float(mark.read_text()) if last.exists() else 0.0
        finally:
            drop()
        if clean.returncode != 0 or clean_summary is None:
            out["stores"][store_name] = {"error": clean.stderr.strip()[-300:]}
            continue
        per_seed = [
            _one_seed(src, tmp, run_args, new_store, seed, window, clean_summary, tasks * trials)
            for seed in range(seeds)
        ]
        ok = [s for s in per_seed if "exactlyOnce" in s]
        out["stores"][store_name] = {
            "uninterruptedSeconds": round(clean_s, 3),
            "firstToLastAgentCallSeconds": round(window, 3),
            "seeds": per_seed,
            "allExactlyOnce": bool(ok) and all(s["exactlyOnce"] for s in ok),
            "allSummariesEqual": bool(ok) and all(s["summaryEqual"] for s in ok),
            "killedMidRun": len(ok),
            "medianResumeSeconds": median_of(ok, "resumeSeconds"),
        }
    return out


def _crash(
    src: Path, tmp: Path, run_args: list[str], url: str, delay_of_window: float, window: float
) -> tuple[float, str | None, str]:
    """Start ``wopeval run``, SIGKILL it ``delay_of_window × window`` s after its first agent
    call; (delay, run id or None, its status after the kill)."""
    mark = tmp / f"first-{secrets.token_hex(4)}"
    env = {**env_for(src, tmp), "BENCH_FIRST_MARK": str(mark)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "wopeval", *run_args, "--store", url, "--json"],
        env=env,
        cwd=str(tmp),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    spawned = time.perf_counter()
    while not mark.exists() and proc.poll() is None and time.perf_counter() - spawned < 120:
        time.sleep(0.002)
    delay = delay_of_window * window
    time.sleep(delay)
    exited = proc.poll() is not None
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    listed = subprocess.run(
        [sys.executable, "-m", "wopeval", "runs", "--store", url, "--json"],
        env=env_for(src, tmp),
        cwd=str(tmp),
        capture_output=True,
        text=True,
    )
    rows = json.loads(listed.stdout).get("runs", []) if listed.returncode == 0 else []
    if not rows:
        return delay, None, "not recorded"
    return delay, rows[0]["runId"], "exited" if exited else rows[0]["status"]


def _one_seed(
    src: Path,
    tmp: Path,
    run_args: list[str],
    new_store: Callable[[], tuple[str, Callable[[], None]]],
    seed: int,
    window: float,
    clean_summary: Any,
    pairs: int,
) -> dict[str, Any]:
    """One seed: up to 3 kill points drawn from ``Random(seed)`` until one lands mid-run (a
    kill after the run ended proves nothing), then ``--resume`` and the checks."""
    rng = random.Random(seed)
    missed: list[str] = []
    for _ in range(3):
        url, drop = new_store()
        try:
            delay, run_id, status = _crash(src, tmp, run_args, url, rng.uniform(0.05, 0.8), window)
            if run_id is None or status in (*TERMINAL, "exited"):
                missed.append(f"kill at {delay:.3f} s: run {status}")
                continue
            return {
                "seed": seed,
                "killedAfterFirstTrialS": round(delay, 3),
                "statusAfterKill": status,
                "missedKills": missed,
                **_resume_and_check(src, tmp, url, run_id, clean_summary, pairs),
            }
        finally:
            drop()
    return {"seed": seed, "note": "no kill landed mid-run", "missedKills": missed}


def _resume_and_check(
    src: Path, tmp: Path, url: str, run_id: str, clean_summary: Any, pairs: int
) -> dict[str, Any]:
    seconds, done = _wopeval(src, tmp, "run", "--resume", run_id, "--store", url, "--json")
    if done.returncode != 0 and _summary_or_none(done) is None:
        return {
            "resumeSupported": "No such option" not in done.stderr,
            "error": last_line(done.stderr),
        }
    scored = child(src, "scored", url, run_id, timeout=600)
    return {
        "resumeSeconds": round(seconds, 3),
        "pairsScored": scored.get("pairs"),
        "scoredTimes": scored.get("scoredTimes"),
        "exactlyOnce": scored.get("pairs") == pairs and scored.get("scoredTimes") == [1],
        "summaryEqual": _without_latency(_summary(done)) == _without_latency(clean_summary),
    }


def _summary_or_none(done: Any) -> Any:
    try:
        return _summary(done)
    except (ValueError, AttributeError):
        return None


# --- HTTP keep-alive ---------------------------------------------------------------------------


def keepalive(src: Path, tmp: Path, requests: int) -> dict[str, Any]:
    """``wopeval serve --port 0``; ``requests`` sequential GETs on one keep-alive connection."""
    import httpx

    store = tmp / f"serve-{secrets.token_hex(4)}.db"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "wopeval",
            "serve",
            "--port",
            "0",
            "--store",
            str(store),
            "--log-level",
            "warning",
        ],
        env=env_for(src, tmp),
        cwd=str(tmp),
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        url = None
        deadline = time.perf_counter() + 60
        while url is None and time.perf_counter() < deadline:
            line = proc.stderr.readline()
            if not line:
                break
            found = re.search(r"listening on (http://\S+)", line)
            url = found.group(1) if found else None
        if url is None:
            return {"error": "wopeval serve never printed its address"}
        limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
        times: list[float] = []
        with httpx.Client(base_url=url, limits=limits, timeout=10) as client:
            client.get("/.well-known/openwop").raise_for_status()  # opens the connection
            for _ in range(requests):
                started = time.perf_counter()
                client.get("/.well-known/openwop").raise_for_status()
                times.append(1000 * (time.perf_counter() - started))
        return {
            "requests": requests,
            "medianMs": round(statistics.median(times), 3),
            "p90Ms": round(sorted(times)[int(0.9 * (len(times) - 1))], 3),
        }
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
