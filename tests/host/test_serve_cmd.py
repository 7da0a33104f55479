"""``wopeval serve`` as a process: start-up key, a real socket, and a clean stop on SIGINT."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
import typer
from typer.testing import CliRunner

from tests.host.helpers import SUITES, free_port
from wopeval.cli.serve_cmd import register


def _serve(*args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("WOPEVAL_STORE", None)
    command = [sys.executable, "-m", "wopeval.host", "--log-level", "warning", *args]
    return subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env)


def _stop(proc: subprocess.Popen[str]) -> int:
    proc.send_signal(signal.SIGINT)
    try:
        return proc.wait(timeout=30)
    finally:
        if proc.stderr is not None:
            proc.stderr.close()


def _wait_up(base_url: str, proc: subprocess.Popen[str]) -> None:
    deadline = time.monotonic() + 30
    # One client for the whole wait: each bare httpx.get builds an SSL context (~24 ms of CPU),
    # which a poll every 50 ms takes from the server starting beside it.
    with httpx.Client(timeout=1) as client:
        while time.monotonic() < deadline:
            assert proc.poll() is None, "wopeval serve exited"
            try:
                client.get(base_url + "/.well-known/openwop")
                return
            except httpx.TransportError:
                time.sleep(0.05)
    raise AssertionError("wopeval serve did not come up")


def test_serve_prints_a_dev_key_serves_and_stops_cleanly(store_url: str) -> None:
    port = free_port()
    proc = _serve("--port", str(port), "--store", store_url)
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        assert "dev API key (tenant 'local')" in line
        key = line.rsplit(": ", 1)[1].strip()
        base = f"http://127.0.0.1:{port}"
        _wait_up(base, proc)
        discovery = httpx.get(base + "/.well-known/openwop").json()
        headers = {"Authorization": f"Bearer {key}"}
        created = httpx.post(
            base + "/runs",
            headers=headers,
            json={
                "mode": "eval",
                "evalSuiteRef": "suite://conformance-eval-trajectory",
                "agentId": "core.conformance.agents.scripted",
            },
        )
        refused = httpx.post(base + "/runs", json={}, headers={"Authorization": "Bearer nope"})
    finally:
        code = _stop(proc)
    assert "conformance-eval-trials" in discovery["fixtures"]
    assert created.status_code == 201, created.text
    assert created.json()["runId"].startswith("local/")
    assert refused.status_code == 401
    assert code == 0


def test_serve_with_config_and_api_key(tmp_path: Path, store_url: str) -> None:
    config = tmp_path / "host.yaml"
    config.write_text(
        f"suiteDirectories: [{SUITES}]\nbuiltinSuites: false\nevalSuite: {{trials: false}}\n"
    )
    port = free_port()
    proc = _serve("--port", str(port), "--store", store_url, "--config", str(config),
                  "--api-key", "dev-key-0123456789")  # fmt: skip
    try:
        base = f"http://127.0.0.1:{port}"
        _wait_up(base, proc)
        facet = httpx.get(base + "/.well-known/openwop").json()["agents"]["evalSuite"]
        snapshot = httpx.get(
            base + "/runs/local~2Fr0000000000000000",
            headers={"Authorization": "Bearer dev-key-0123456789"},
        )
    finally:
        code = _stop(proc)
    assert "trials" not in facet
    assert snapshot.status_code == 404  # authenticated: the key was accepted
    assert code == 0


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--config", "/nonexistent/host.yaml"], "cannot read"),
        (["--api-key", "has space"], "visible ASCII"),
        (["--api-key", "k"], "at least 16"),
        (["--api-key", "k" * 32], "distinct"),
    ],
)
def test_serve_bad_input_exits_2(args: list[str], needle: str) -> None:
    app = typer.Typer()
    register(app)
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    assert needle in result.output
