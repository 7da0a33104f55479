"""``wopeval init``: what it writes validates, runs offline and passes, by the very command it
prints; it never overwrites a file without ``--force`` (exit 2, naming the file); ``--json``
lists the written files."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from wopeval.cli.app import app


def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


def _shell(command: str, cwd: Path, store: str | None = None) -> subprocess.CompletedProcess[str]:
    """``command`` in bash, with ``wopeval`` on PATH as this interpreter's CLI."""
    bin_dir = cwd / "bin"
    bin_dir.mkdir(exist_ok=True)
    shim = bin_dir / "wopeval"
    shim.write_text(f'#!/bin/sh\nexec {sys.executable} -m wopeval.cli "$@"\n')
    shim.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
           "WOPEVAL_STORE": store or str(cwd / "store.db")}  # fmt: skip
    return subprocess.run(["bash", "-euo", "pipefail", "-c", command], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)  # fmt: skip


def test_init_writes_a_suite_and_agent_that_pass_by_the_printed_command(
    tmp_path: Path, store_url: str
) -> None:
    done = _shell("wopeval init my-evals", tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "my-evals" / "suite.yaml").is_file()
    assert (tmp_path / "my-evals" / "agent.py").is_file()
    (hint,) = [line for line in done.stdout.splitlines() if line.startswith("run it: ")]
    command = hint.removeprefix("run it: ")
    assert command == "cd my-evals && wopeval run suite.yaml --agent agent:answer"
    checked = _shell("wopeval validate my-evals/suite.yaml", tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    ran = _shell(f"{command} --json", tmp_path, store_url)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    summary = json.loads(ran.stdout)["summary"]
    assert summary["passed"] is True
    (task,) = summary["tasks"]
    assert task["trials"]["passedCount"] == task["trials"]["n"] == 3
    assert task["trajectory"]["matched"] is True
    assert task["fixtureMissCount"] == 0


def test_init_in_the_working_directory_prints_a_command_without_cd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out = _cli("init")
    assert code == 0, out
    assert "run it: wopeval run suite.yaml --agent agent:answer" in out.splitlines()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["agent.py", "suite.yaml"]


def test_init_never_overwrites_without_force(tmp_path: Path) -> None:
    mine = tmp_path / "agent.py"
    mine.write_text("MY AGENT\n")
    code, out = _cli("init", str(tmp_path))
    assert code == 2
    assert f"{mine} already exists (pass --force to overwrite it)" in out
    assert mine.read_text() == "MY AGENT\n"
    assert not (tmp_path / "suite.yaml").exists()  # refused before anything is written
    code, out = _cli("init", str(tmp_path), "--force", "--json")
    assert code == 0, out
    written = json.loads(out)["files"]
    assert written == [str(tmp_path / "suite.yaml"), str(mine)]
    assert "async def answer" in mine.read_text()


def test_init_json_lists_the_files_it_wrote_into_a_new_directory(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b"
    code, out = _cli("init", str(target), "--json")
    assert code == 0, out
    assert json.loads(out) == {"files": [str(target / "suite.yaml"), str(target / "agent.py")]}


def test_init_refuses_a_file_as_its_directory(tmp_path: Path) -> None:
    not_dir = tmp_path / "notes.txt"
    not_dir.write_text("x")
    code, out = _cli("init", str(not_dir))
    assert code == 2
    assert f"DIR: {not_dir} is a file, not a directory" in out
