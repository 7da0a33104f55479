"""A store whose disk fills up during a run: the run stops with one line naming the full disk,
exit 3 (a store error), never a traceback or an exception group. The disk is a 1 MB tmpfs (the
test needs root to mount it, as in the project's container)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

SUITE = """\
suiteId: core.test.evals.full-disk
version: 1.0.0
modes: [golden]
trials: {count: 400, k: 1}
tasks:
  - taskId: t
    input: {output: hello}
    expected: {kind: golden, match: {strategy: exact, value: hello}}
"""


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", str(disk)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=True)


def test_a_full_disk_is_one_line_and_exit_3(tmp_path: Path, tiny_disk: Path) -> None:
    suite = tmp_path / "suite.yaml"
    suite.write_text(SUITE)
    env = {**os.environ}
    env.pop("WOPEVAL_STORE", None)
    command = [sys.executable, "-m", "wopeval", "run", str(suite), "--store",
               str(tiny_disk / "w.db"), "--agent", "core.conformance.agents.scripted",
               "--override-target"]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 3, done.stderr
    assert "Traceback" not in done.stderr
    assert "ExceptionGroup" not in done.stderr
    (line,) = done.stderr.splitlines()  # one line: the store, and why it failed
    assert line.startswith(f"outage: the event store {tiny_disk / 'w.db'} failed mid-run")
    assert line.endswith("database or disk is full")


def test_the_host_docs_give_serve_the_store_exit_codes_it_has() -> None:
    """``serve`` refuses a ``--store`` it cannot open with exit 2, one it cannot reach with 3
    (tests/host/test_startup_safety.py, tests/cli/test_serve_cli.py): docs/host.md says so."""
    doc = (Path(__file__).resolve().parents[2] / "docs" / "host.md").read_text(encoding="utf-8")
    paragraph = doc[doc.index("Exit codes: `0` after a clean stop") :].split("\n\n")[0]
    bad_input, store_error = paragraph.split("`3`")
    assert "a `--store` that\ncannot be opened" in bad_input
    assert "cannot be reached" in store_error
