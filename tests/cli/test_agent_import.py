"""``--agent module:attr`` finds modules in the working directory, as ``python -m`` would.

The README's agent and its command line are taken from the README itself and run through the
installed ``wopeval`` console script (whose ``sys.path`` does not contain the working directory).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
CONSOLE_SCRIPT = Path(sys.executable).parent / "wopeval"


def _readme_agent() -> str:
    block = re.search(r"```python\n(.*?)```", README, flags=re.S)
    assert block is not None
    agent = block.group(1).split("\nresult = ")[0]  # the imports and my_agent, not the eval call
    assert "async def my_agent(" in agent
    return agent


def _readme_command() -> list[str]:
    line = re.search(r"`(wopeval run [^`]*--agent mypackage\.agents:my_agent[^`]*)`", README)
    assert line is not None, "the README shows the CLI line for its agent"
    return shlex.split(line.group(1))


def test_readme_agent_runs_from_the_working_directory(tmp_path: Path) -> None:
    (tmp_path / "mypackage").mkdir()
    (tmp_path / "mypackage" / "agents.py").write_text(_readme_agent())
    os.symlink(ROOT / "examples", tmp_path / "examples")
    command = _readme_command()
    assert CONSOLE_SCRIPT.is_file()
    env = {**os.environ, "WOPEVAL_STORE": str(tmp_path / "s.db")}
    env.pop("PYTHONPATH", None)
    done = subprocess.run(
        [str(CONSOLE_SCRIPT), *command[1:], "--json"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode in (0, 1), done.stderr
    summary = json.loads(done.stdout)["summary"]
    assert summary["taskCount"] == 3
    assert summary["passedCount"] >= 1  # the README's agent does the quickstart's work
