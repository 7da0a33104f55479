"""``wopeval view``: serves the viewer on the loopback interface and prints its URL."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import anyio
import httpx
from typer.testing import CliRunner

from tests.viewer.test_viewer_pages import DATA, make_run
from wopeval.cli.app import app


def test_view_serves_the_runs_of_a_local_store_on_loopback(tmp_path: Path) -> None:
    store = str(tmp_path / "local.db")
    run_id = anyio.run(make_run, store, DATA / "suite.yaml", "local")
    proc = subprocess.Popen(
        [sys.executable, "-m", "wopeval", "view", "--store", store, "--port", "0"],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        line = ""
        deadline = time.monotonic() + 30
        while "wopeval view: " not in line and time.monotonic() < deadline:
            line = proc.stderr.readline()
            assert line or proc.poll() is None, "wopeval view exited early"
        url = line.split("wopeval view: ", 1)[1].strip()
        assert url.startswith("http://127.0.0.1:")
        assert url.endswith("/")
        page = httpx.get(url, timeout=10)
        assert page.status_code == 200
        assert run_id in page.text
        run = httpx.get(url + "run", params={"id": run_id}, timeout=10)
        assert run.status_code == 200
        assert 'id="grid"' in run.text
    finally:
        proc.terminate()
        proc.wait(timeout=15)
        if proc.stderr is not None:
            proc.stderr.close()


def test_view_refuses_a_store_that_is_not_there(tmp_path: Path) -> None:
    missing = tmp_path / "none.db"
    answer = CliRunner().invoke(app, ["view", "--store", str(missing), "--port", "0"])
    assert answer.exit_code == 2
    assert "no event store" in answer.output
    assert not missing.exists()
