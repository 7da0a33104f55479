"""The README's code blocks are executed, so they cannot drift from the code.

* the two set-up commands: the first one's ``wopeval`` part runs on the bundled example; the
  second is exactly the test command that ``.ci/run`` calls (running it here would recurse);
* every ``sh`` block of the tour runs in order in one scratch directory, with ``wopeval serve``
  started in the background for the blocks that need a host;
* the ``python`` block runs as a script;
* every ``yaml`` block is a complete suite: it validates, and runs and passes with the agent it
  names;
* every ``wopeval`` command of a ``text`` block (those that need a model server or a browser) is
  parsed by the real command line: its command and options exist and take what they are given.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import typer
import yaml
from typer import _click
from typer.core import TyperGroup

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```(sh|python)\n(.*?)```", README, flags=re.S)
WOPEVAL = [sys.executable, "-m", "wopeval.cli"]
SUITES = re.findall(r"```yaml\n(.*?)```", README, flags=re.S)
TEXT_COMMANDS = [
    line
    for body in re.findall(r"```text\n(.*?)```", README, flags=re.S)
    for line in body.splitlines()
    if line.startswith("wopeval ")
]


def _env(store: Path) -> dict[str, str]:
    return {**os.environ, "WOPEVAL_STORE": str(store), "COLUMNS": "120"}


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    os.symlink(ROOT / "examples", tmp_path / "examples")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "wopeval"
    shim.write_text(f'#!/bin/sh\nexec {sys.executable} -m wopeval.cli "$@"\n')
    shim.chmod(0o755)
    return tmp_path


def _sh(script: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    env = {**env, "PATH": f"{cwd / 'bin'}{os.pathsep}{env['PATH']}"}
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_readme_opens_with_the_two_setup_commands() -> None:
    first, second = BLOCKS[0][1].strip(), BLOCKS[1][1].strip()
    assert first.startswith("pip install -e . && wopeval run examples/quickstart/suite.yaml")
    assert second == "pip install -e '.[test]' && python3 -m pytest -q"
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert second in ci.splitlines()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _wait_for(port: int) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise AssertionError(f"nothing listens on {port}")


def test_readme_blocks_run(scratch: Path) -> None:
    env = _env(scratch / "store.db")
    first = BLOCKS[0][1].strip().split(" && ", 1)[1]
    done = _sh(first, scratch, env)
    assert done.returncode == 0, done.stderr
    port = _free_port()
    server: subprocess.Popen[str] | None = None
    try:
        for lang, body in BLOCKS[2:]:
            if lang == "python":
                ran = subprocess.run(
                    [sys.executable, "-c", body],
                    cwd=scratch,
                    env=env,
                    capture_output=True,
                    text=True,
                    timeout=120,
                )
                assert ran.returncode == 0, ran.stderr
                continue
            script = body.replace("8080", str(port))
            if script.strip().startswith("wopeval serve"):
                server = subprocess.Popen(
                    [*WOPEVAL, *script.split()[1:]],
                    cwd=scratch,
                    env=env,
                    text=True,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                )
                _wait_for(port)
                continue
            done = _sh(script, scratch, env)
            assert done.returncode == 0, (script, done.stdout[-2000:], done.stderr[-2000:])
    finally:
        if server is not None:
            server.terminate()
            server.wait(timeout=20)
    assert (scratch / "report.html").exists()
    assert (scratch / "spans.jsonl").read_text().strip()


@pytest.mark.parametrize("index", range(len(SUITES)))
def test_readme_suites_are_complete_and_pass(scratch: Path, index: int) -> None:
    doc = yaml.safe_load(SUITES[index])
    assert {"suiteId", "version", "modes", "tasks"} <= set(doc)
    path = scratch / f"readme-{index}.yaml"
    path.write_text(SUITES[index], encoding="utf-8")
    env = _env(scratch / "store.db")
    checked = _sh(f"wopeval validate {path.name}", scratch, env)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    ran = _sh(f"wopeval run {path.name} --json", scratch, env)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert json.loads(ran.stdout)["summary"]["passed"] is True


def test_readme_text_commands_parse() -> None:
    from wopeval.cli.app import app

    assert TEXT_COMMANDS, "the README's text blocks name wopeval commands"
    root = typer.main.get_command(app)
    assert isinstance(root, TyperGroup)
    for line in TEXT_COMMANDS:
        args = shlex.split(line, comments=True)[1:]
        with root.make_context("wopeval", list(args)) as ctx:
            name, command, rest = root.resolve_command(ctx, args)
            assert command is not None, line
            try:
                command.make_context(name, rest, parent=ctx)
            except _click.exceptions.UsageError as exc:
                raise AssertionError(f"{line!r}: {exc.format_message()}") from None
