"""A Kubernetes Indexed Job's pod retry: a shard sent SIGTERM mid-run is interrupted, not
cancelled, and the same ``wopeval run --shard i/N --group G`` command again continues that run
instead of starting a second copy, so ``merge`` grades the group with every pair scored once.
An unfinished copy of the shard with another suite is refused, naming it. The pod and its retry
are real processes; the other shard, the refused copy and the merge run the command line in the
test's process (:func:`tests.cli.in_process.wopeval_here`)."""

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
import pytest

from tests.cli.in_process import wopeval_here
from tests.service.crash_worker import AGENT
from wopeval.events.store import EventStore
from wopeval.wire.events import EvalScored

ROOT = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}


def _suite(path: Path, output: str = "ok") -> Path:
    fixture = {"toolResponses": [{"tool": "kb:read", "response": {"ok": 1}}] * 2}
    task = {
        "input": {"tools": ["kb:read", "kb:read"], "pause": 0.15, "output": output},
        "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}},
        "fixtures": fixture,
    }
    doc = {
        "suiteId": "core.test.evals.retry",
        "version": "1.0.0",
        "modes": ["golden"],
        "trials": {"count": 6},
        "tasks": [{"taskId": f"t{i}", **task} for i in range(4)],
    }
    path.write_text(json.dumps(doc))
    return path


def _args(suite: Path, shard: str, store: str) -> list[str]:
    return ["run", str(suite), "--agent", AGENT, "--concurrency", "2", "--shard", shard,
            "--group", "job-7", "--store", store, "--json"]  # fmt: skip


def _command(suite: Path, shard: str, store: str) -> list[str]:
    return [sys.executable, "-m", "wopeval", *_args(suite, shard, store)]


def _wopeval(command: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=120)


async def _progress(store_url: str) -> dict[str, int]:
    async with await EventStore.open(store_url) as store:
        return {r.run_id: await store.last_sequence(r.run_id) for r in await store.list_runs()}


async def _scored(store_url: str, run_id: str) -> Counter[tuple[str, int]]:
    async with await EventStore.open(store_url) as store:
        events = await store.events(run_id)
    return Counter(
        (p.taskId, p.trialIndex or 0) for e in events if isinstance(p := e.typed, EvalScored)
    )


def test_a_retried_shard_continues_its_interrupted_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    store = str(tmp_path / "job.db")
    suite = _suite(tmp_path / "suite.json")
    first = wopeval_here(*_args(suite, "0/2", store))
    assert first.returncode == 0, first.stderr
    done = json.loads(first.stdout)["runId"]
    pod = subprocess.Popen(
        _command(suite, "1/2", store), cwd=ROOT, env=ENV,
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # until the pod has recorded a few trials
        counts = anyio.run(_progress, store)
        if len(counts) == 2 and min(counts.values()) > 12:
            break
        time.sleep(0.1)
    pod.send_signal(signal.SIGTERM)
    out, _ = pod.communicate(timeout=60)
    assert pod.returncode == 1
    interrupted = json.loads(out)
    assert interrupted["status"] == "interrupted"

    changed = wopeval_here(*_args(_suite(tmp_path / "other.json", "changed"), "1/2", store))
    assert changed.returncode == 2
    assert f"left unfinished by run {interrupted['runId']}" in changed.stderr

    retried = _wopeval(_command(suite, "1/2", store))  # the pod's retry: the same command
    assert retried.returncode == 0, retried.stderr
    assert f"continuing run {interrupted['runId']}" in retried.stderr
    assert json.loads(retried.stdout)["runId"] == interrupted["runId"]
    for run_id, pairs in ((done, 12), (interrupted["runId"], 12)):
        scored = anyio.run(_scored, store, run_id)
        assert len(scored) == pairs
        assert set(scored.values()) == {1}
    merged = wopeval_here("merge", "--group", "job-7", "--store", store, "--json")
    assert merged.returncode == 0, merged.stderr
    doc = json.loads(merged.stdout)
    assert doc["summary"]["passed"] is True
    assert doc["missingTrials"] == 0
