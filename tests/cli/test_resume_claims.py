"""``wopeval run --resume`` of a run another ``wopeval run`` process is executing is refused
(exit 2, naming that process), and the same resume succeeds at once after that process is
killed: every (taskId, trialIndex) scored exactly once. The run is a real process, killed; the
resumes run in process (typer's runner), on both stores."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import anyio
from typer.testing import CliRunner, Result

from tests.service.crash_worker import AGENT
from wopeval.cli.app import app
from wopeval.events.store import EventStore
from wopeval.wire.events import EvalScored

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}


def _suite(path: Path, gate: Path) -> Path:
    """Four tasks of six trials; the last task's trials wait while ``gate`` exists, so the
    run cannot end before the test has tried to resume it."""
    fixture = {"toolResponses": [{"tool": "kb:read", "response": {"ok": 1}}] * 2}
    plan = {"tools": ["kb:read", "kb:read"], "pause": 0.05, "output": "ok"}
    task = {
        "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}},
        "fixtures": fixture,
    }
    tasks = [{"taskId": f"t{i}", "input": plan, **task} for i in range(3)]
    tasks.append({"taskId": "t3", "input": {**plan, "holdWhile": str(gate)}, **task})
    doc = {
        "suiteId": "core.test.evals.claims",
        "version": "1.0.0",
        "modes": ["golden"],
        "trials": {"count": 6},
        "tasks": tasks,
    }
    path.write_text(json.dumps(doc))
    return path


def _wopeval(*args: str) -> Result:
    result = CliRunner().invoke(app, list(args))
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result


async def _first_run(url: str) -> tuple[str, int] | None:
    async with await EventStore.open(url) as store:
        # The session's PostgreSQL database holds other tests' runs, finished ones of this
        # suite too: the child's is this suite's unfinished one.
        found = await store.list_runs()
        runs = [r for r in found if r.suite_id == "core.test.evals.claims" and not r.terminal]
        if not runs:
            return None
        return runs[0].run_id, await store.last_sequence(runs[0].run_id)


async def _scored(url: str, run_id: str) -> Counter[tuple[str, int]]:
    async with await EventStore.open(url) as store:
        events = await store.events(run_id)
    return Counter(
        (p.taskId, p.trialIndex or 0) for e in events if isinstance(p := e.typed, EvalScored)
    )


def test_a_run_still_executing_is_not_resumed_but_a_killed_one_is(
    tmp_path: Path, store_url: str
) -> None:
    gate = tmp_path / "gate"
    gate.touch()
    suite = _suite(tmp_path / "suite.json", gate)
    child = subprocess.Popen(
        [sys.executable, "-m", "wopeval", "run", str(suite), "--agent", AGENT,
         "--concurrency", "2", "--store", store_url, "--json"],
        cwd=ROOT, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        found = None
        while time.monotonic() < deadline:  # until it has recorded some trials
            found = anyio.run(_first_run, store_url)
            if found is not None and found[1] > 20:
                break
            time.sleep(0.1)
        assert found is not None, "the run was never created"
        run_id = found[0]
        refused = _wopeval("run", "--resume", run_id, "--store", store_url, "--json")
        assert child.poll() is None, "the run ended while its last task's trials were held"
        assert refused.exit_code == 2, refused.stderr
        assert "is being executed by another process" in refused.stderr
        assert f":{child.pid}:" in refused.stderr  # the process that holds it
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    gate.unlink()
    resumed = _wopeval("run", "--resume", run_id, "--store", store_url, "--json")
    assert resumed.exit_code == 0, resumed.stderr
    assert json.loads(resumed.stdout)["summary"]["passed"] is True
    scored = anyio.run(_scored, store_url, run_id)
    assert set(scored) == {(f"t{i}", k) for i in range(4) for k in range(6)}
    assert set(scored.values()) == {1}
