"""What an agent prints never corrupts ``--json``; a blocked agent never holds up the command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

AGENTS = """
import time

async def chatty(task_input, ctx):
    print("thinking out loud")
    await ctx.call_tool("kb:search", {"q": "x"})
    return "yes"

def plain_chatty(task_input, ctx):
    print("thinking in a thread")
    ctx.call_tool("kb:search", {"q": "x"})
    return "yes"

def blocked(task_input, ctx):
    time.sleep(float(task_input["sleep"]))
    return "yes"
"""
SLEEP = 40.0  # long against a loaded machine: the check compares with the sleep, not a clock


def _suite(path: Path) -> Path:
    task = {
        "taskId": "t",
        "input": {"sleep": SLEEP},
        "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "yes"}},
        "fixtures": {"onMiss": "fail", "toolResponses": [{"tool": "kb:search", "response": 1}]},
    }
    suite = {"suiteId": "core.test.evals.io", "version": "1.0.0", "modes": ["golden"]}
    path.write_text(json.dumps({**suite, "tasks": [task]}))
    return path


def _run(tmp_path: Path, agent: str, *extra: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "user_agents.py").write_text(AGENTS)
    suite = _suite(tmp_path / "suite.json")
    return subprocess.run(
        [sys.executable, "-m", "wopeval", "run", str(suite), "--agent", agent, "--json", *extra],
        cwd=tmp_path,
        env={**os.environ, "WOPEVAL_STORE": str(tmp_path / "s.db")},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("agent", "said"),
    [("user_agents:chatty", "thinking out loud"), ("user_agents:plain_chatty", "in a thread")],
)
def test_agent_prints_go_to_stderr_and_json_stays_clean(
    tmp_path: Path, agent: str, said: str
) -> None:
    done = _run(tmp_path, agent)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["summary"]["passed"] is True
    assert said in done.stderr


def test_a_blocked_plain_agent_times_out_and_the_command_exits(tmp_path: Path) -> None:
    started = time.monotonic()
    done = _run(tmp_path, "user_agents:blocked", "--trial-timeout", "0.3")
    elapsed = time.monotonic() - started
    assert done.returncode == 1, done.stderr
    assert json.loads(done.stdout)["summary"]["passed"] is False
    assert elapsed < SLEEP / 2, elapsed  # neither the trial nor the exit waited for the sleep
    assert "still blocked" in done.stderr
