"""``wopeval serve`` says where it listens (the bound port for ``--port 0``) and refuses an
unreachable store in one line, exit 2."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path

import httpx


def _serve(*args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("WOPEVAL_STORE", None)
    command = [sys.executable, "-m", "wopeval", "serve", "--log-level", "warning", *args]
    return subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env)


def test_serve_on_port_0_prints_the_bound_url(tmp_path: Path) -> None:
    proc = _serve(
        "--port", "0", "--store", str(tmp_path / "s.db"), "--api-key", "k-0123456789ab" * 2
    )
    watchdog = threading.Timer(30, proc.kill)  # no line within 30 s: stderr ends, test fails
    watchdog.start()
    try:
        assert proc.stderr is not None
        url = None
        for line in proc.stderr:  # uvicorn logs nothing at warning level: this line is ours
            found = re.search(r"listening on (http://127\.0\.0\.1:(\d+))$", line.strip())
            if found:
                url = found.group(1)
                assert found.group(2) != "0"
                break
        assert url is not None, "no 'listening on' line"
        discovery = httpx.get(url + "/.well-known/openwop", timeout=10)
    finally:
        watchdog.cancel()
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=30)
        if proc.stderr is not None:
            proc.stderr.close()
    assert discovery.status_code == 200
    assert code == 0


def test_serve_with_an_unreachable_store_is_a_one_line_error() -> None:
    proc = _serve("--port", "0", "--store", "postgresql://nobody@127.0.0.1:1/x")
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 3, err  # a store error: the server is away, not the input
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err  # one line: what failed, and where
    assert lines[0].startswith("store error: --store: cannot reach the event store postgresql://")
