"""Real ``wopeval serve`` processes: two hosts on one store, and SIGTERM (issue 14, 4 and 5).

Two hosts share a store: the second leaves the first one's live run alone (the first owns it
and renews its lease), and takes over a run whose owner was killed once the lease runs out.
SIGTERM drains: a run that ends within ``shutdownGraceSeconds`` completes, one that does not is
failed ``wopeval.interrupted``; either way its SSE stream ends with the terminal event, and
the process exits 0.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import anyio
import httpx

from tests.host.helpers import free_port
from wopeval.events.store import EventStore
from wopeval.wire.events import TERMINAL_TYPES

KEY = "robust-test-key-0123456789abcdef"
HEADERS = {"Authorization": f"Bearer {KEY}", "OpenWOP-Version": "2.0"}
AGENT = "test.slow"


def _config(tmp_path: Path, sleep: float, **extra: Any) -> Path:
    suites = tmp_path / "suites"
    suites.mkdir(exist_ok=True)
    match = {"strategy": "exact", "value": "late"}
    task = {"taskId": "wait", "input": {"sleep": sleep, "output": "late"},
            "expected": {"kind": "golden", "match": match}}  # fmt: skip
    suite = {"suiteId": "core.robust.evals.slow", "version": "1.0.0", "modes": ["golden"],
             "tasks": [task]}  # fmt: skip
    (suites / "slow.json").write_text(json.dumps(suite), encoding="utf-8")
    config = {"apiKeys": [{"key": KEY, "tenant": "acme"}], "suiteDirectories": [str(suites)],
              "builtinSuites": False, "agents": {AGENT: "tests.host.agents:slow_agent"},
              **extra}  # fmt: skip
    path = tmp_path / f"config-{sleep}-{len(extra)}.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


class Serve:
    def __init__(self, config: Path, store_url: str) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        env.pop("WOPEVAL_STORE", None)
        command = [sys.executable, "-m", "wopeval.host", "--log-level", "warning",
                   "--port", str(self.port), "--store", store_url,
                   "--config", str(config)]  # fmt: skip
        self.proc = subprocess.Popen(command, stderr=subprocess.DEVNULL, env=env)
        # One client for every request: a bare httpx.get makes a new SSL context each time
        # (~25 ms of CPU here), taken from the server starting beside it.
        self.client = httpx.Client(base_url=self.base, headers=HEADERS, timeout=10)
        deadline = time.monotonic() + 30
        while True:
            assert self.proc.poll() is None, "wopeval serve exited"
            assert time.monotonic() < deadline, "wopeval serve did not come up"
            try:
                self.client.get("/.well-known/openwop", timeout=1)
                return
            except httpx.TransportError:
                time.sleep(0.05)

    def create(self) -> str:
        body = {"mode": "eval", "evalSuiteRef": "suite://core.robust.evals.slow", "agentId": AGENT}
        response = self.client.post("/runs", json=body)
        assert response.status_code == 201, response.text
        return str(response.json()["runId"])

    def poll(self, run_id: str, after: int = -1) -> dict[str, Any]:
        path = f"/runs/{run_id.replace('/', '~2F')}/events/poll?timeout=1"
        if after >= 0:
            path += f"&afterSequence={after}"
        body: dict[str, Any] = self.client.get(path).json()
        return body

    def events(self, run_id: str) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        while True:
            page = self.poll(run_id, found[-1]["sequence"] if found else -1)
            found += page["events"]
            if not page["events"]:
                return found

    def wait_status(self, run_id: str, statuses: set[str], timeout: float = 30) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            status = str(self.poll(run_id)["status"])
            if status in statuses:
                return status
            time.sleep(0.1)
        raise AssertionError(f"run {run_id} never reached {statuses}")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 30) -> int:
        self.client.close()
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise


def _terminals(events: list[dict[str, Any]]) -> list[str]:
    return [e["type"] for e in events if e["type"] in TERMINAL_TYPES]


def test_two_hosts_share_a_store_and_only_take_over_abandoned_runs(
    tmp_path: Path, store_url: str
) -> None:
    # Take-over fails an abandoned run here (resuming it: tests/host/test_resume_restart.py).
    config = _config(tmp_path, 3.0, leaseSeconds=2, resumeInterrupted=False)
    first = Serve(config, store_url)
    second: Serve | None = None
    try:
        live = first.create()
        first.wait_status(live, {"running"})
        second = Serve(config, store_url)  # start-up and two lease periods: hands off
        assert first.wait_status(live, {"completed", "failed"}) == "completed"
        events = second.events(live)
        assert _terminals(events) == ["run.completed"]
        assert events[-1]["type"] == "run.completed"  # nothing after it
        assert [e["sequence"] for e in events] == list(range(len(events)))
        # The owner dies: once its lease runs out the other host fails the run, once.
        abandoned = first.create()
        first.wait_status(abandoned, {"running"})
        first.proc.kill()
        first.proc.wait(timeout=10)
        assert second.wait_status(abandoned, {"failed", "completed"}, timeout=15) == "failed"
        events = second.events(abandoned)
        assert _terminals(events) == ["run.failed"]
        assert events[-1]["payload"]["error"]["code"] == "wopeval.interrupted"
    finally:
        first.stop()
        if second is not None:
            assert second.stop() == 0


def _stream(base: str, run_id: str, into: list[str], streaming: threading.Event) -> None:
    path = f"/runs/{run_id.replace('/', '~2F')}/events"
    with httpx.stream("GET", base + path, headers=HEADERS, timeout=60) as response:
        for line in response.iter_lines():
            if line.startswith("event: "):
                into.append(line.removeprefix("event: "))
                streaming.set()


def _sigterm_while_streaming(serve: Serve, run_id: str) -> tuple[int, float, list[str]]:
    serve.wait_status(run_id, {"running"})
    seen: list[str] = []
    streaming = threading.Event()  # the first event arrived: the stream is open
    reader = threading.Thread(
        target=_stream, args=(serve.base, run_id, seen, streaming), daemon=True
    )
    reader.start()
    assert streaming.wait(timeout=30), "the event stream did not open"
    started = time.monotonic()
    code = serve.stop(signal.SIGTERM)
    elapsed = time.monotonic() - started
    reader.join(timeout=10)
    return code, elapsed, seen


def test_sigterm_lets_a_run_finish_within_the_grace_period(tmp_path: Path, store_url: str) -> None:
    serve = Serve(_config(tmp_path, 1.5, shutdownGraceSeconds=20), store_url)
    code, _, seen = _sigterm_while_streaming(serve, serve.create())
    assert code == 0
    assert seen[-1] == "run.completed"


def test_sigterm_with_no_connection_open_still_gives_the_grace_period(tmp_path: Path) -> None:
    """The server leaves its lifespan as soon as no connection is open: that must not cut the
    drain short (it used to fail the run within half a second of the SIGTERM). On SQLite only:
    what differs from the test above is the server's lifespan, not the store; the drain's
    writes are proven on both backends there."""
    store_url = str(tmp_path / "store.db")
    serve = Serve(_config(tmp_path, 1.5, shutdownGraceSeconds=20), store_url)
    run_id = serve.create()
    serve.wait_status(run_id, {"running"})
    assert serve.stop(signal.SIGTERM) == 0
    types = anyio.run(_stored_types, store_url, run_id)
    assert [t for t in types if t in TERMINAL_TYPES] == ["run.completed"]


async def _stored_types(store_url: str, run_id: str) -> list[str]:
    async with await EventStore.open(store_url) as store:
        return [event.type for event in await store.events(run_id)]


def test_sigterm_interrupts_what_outlives_the_grace_period(tmp_path: Path, store_url: str) -> None:
    serve = Serve(_config(tmp_path, 60.0, shutdownGraceSeconds=1), store_url)
    code, elapsed, seen = _sigterm_while_streaming(serve, serve.create())
    assert code == 0
    assert seen[-1] == "run.failed"
    assert elapsed < 15  # the grace period, not the run's 60 s
