"""The ``wopeval`` process leaves with ``os._exit`` once its command is done
(:mod:`wopeval.cli.exiting`), and loses nothing by it: its exit code, its output (to a pipe and
to a file), its store, the ``atexit`` callbacks of the agent it ran, and a non-daemon thread
that agent started (waited for, as the interpreter does)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from wopeval.cli import exiting

ROOT = Path(__file__).resolve().parents[2]
SUITE = {
    "suiteId": "core.wopeval.evals.exiting",
    "version": "1.0.0",
    "modes": ["golden"],
    "tasks": [
        {
            "taskId": "t",
            "input": {},
            "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}},
        }
    ],
}
AGENT = """\
import atexit, pathlib, threading, time

OUT = pathlib.Path({out!r})

def _late_write():
    time.sleep(0.3)
    (OUT / "thread.txt").write_text("the thread finished")

atexit.register(lambda: (OUT / "atexit.txt").write_text("atexit ran"))

async def agent(task_input, ctx):
    if {start_thread!r}:
        threading.Thread(target=_late_write, daemon=False).start()
    return {answer!r}
"""


def _wopeval(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "wopeval", *args, "--store", str(tmp_path / "s.db")],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": os.pathsep.join((str(tmp_path), str(ROOT / "src")))},
    )  # fmt: skip


def _run(tmp_path: Path, *, answer: str, start_thread: bool) -> subprocess.CompletedProcess[str]:
    suite = tmp_path / "suite.json"
    suite.write_text(json.dumps(SUITE))
    (tmp_path / "exit_agent.py").write_text(
        AGENT.format(out=str(tmp_path), answer=answer, start_thread=start_thread)
    )
    return _wopeval(tmp_path, "run", str(suite), "--agent", "exit_agent:agent", "--json")


@pytest.mark.parametrize(("answer", "code"), [("ok", 0), ("wrong", 1)])
def test_the_code_the_output_and_the_agents_atexit_survive_the_fast_exit(
    tmp_path: Path, answer: str, code: int
) -> None:
    done = _run(tmp_path, answer=answer, start_thread=False)
    assert done.returncode == code, done.stderr
    printed = json.loads(done.stdout)  # the whole document reached the pipe
    assert printed["summary"]["passed"] is (code == 0)
    out = tmp_path / "summary.json"
    exported = _wopeval(tmp_path, "export", printed["runId"], "-f", "summary", "-o", str(out))
    assert exported.returncode == 0, exported.stderr
    assert json.loads(out.read_text()) == printed["summary"]  # the store, and a file, complete
    assert (tmp_path / "atexit.txt").read_text() == "atexit ran"


def test_a_non_daemon_thread_the_agent_started_is_waited_for(tmp_path: Path) -> None:
    done = _run(tmp_path, answer="ok", start_thread=True)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "thread.txt").read_text() == "the thread finished"
    assert (tmp_path / "atexit.txt").read_text() == "atexit ran"


def test_main_itself_still_raises_system_exit_in_the_callers_process() -> None:
    def main() -> None:
        raise SystemExit("not a plain code")

    with pytest.raises(SystemExit, match="not a plain code"):
        exiting.command(main)  # not a code: the ordinary exit, which prints it


def test_exit_now_returns_while_another_non_daemon_thread_runs() -> None:
    import threading

    release = threading.Event()
    worker = threading.Thread(target=release.wait, daemon=False)
    worker.start()
    try:
        exiting.exit_now(0)  # returned: this test's process is still here
    finally:
        release.set()
        worker.join()
