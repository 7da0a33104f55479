"""The README's compare gate, run as written: it passes the same agent and fails a real regression.

The README block's ``wopeval compare`` command runs in a scratch directory after ``run.json``
(the bundled agent) and ``candidate.json`` (an agent that fails every task, or the bundled agent
again) are made, as ``tests/test_readme.py`` runs every block. The bundled agent's ``run.json``
(and the store holding its run) is made once for the module; each test copies them into a
scratch directory of its own.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
GATE = next(
    body for body in re.findall(r"```sh\n(.*?)```", README, flags=re.S) if "wopeval compare" in body
)
COMPARE = next(line for line in GATE.splitlines() if line.startswith("wopeval compare"))
SUITE = "examples/quickstart/suite.yaml"


def _sh(script: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "WOPEVAL_STORE": str(cwd / "store.db"),
        "PATH": f"{cwd / 'bin'}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


def _directory(path: Path) -> Path:
    """``path`` with the examples and a ``wopeval`` on its ``bin``, as a user's checkout."""
    os.symlink(ROOT / "examples", path / "examples")
    (path / "bin").mkdir()
    shim = path / "bin" / "wopeval"
    shim.write_text(f'#!/bin/sh\nexec {sys.executable} -m wopeval.cli "$@"\n')
    shim.chmod(0o755)
    return path


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory holding the bundled agent's ``run.json`` and the store with its run."""
    directory = _directory(tmp_path_factory.mktemp("baseline"))
    done = _sh(f"wopeval run {SUITE} --json > run.json", directory)
    assert done.returncode == 0, done.stderr
    return directory


@pytest.fixture
def scratch(tmp_path: Path, baseline: Path) -> Path:
    directory = _directory(tmp_path)
    for made in (baseline / "run.json", *baseline.glob("store.db*")):
        shutil.copy(made, directory)
    return directory


def test_0244_F_readme_gate_fails_a_real_regression(scratch: Path) -> None:
    broken = "--agent tests.compare.agents:broken_agent --override-target"
    made = _sh(f"wopeval run {SUITE} {broken} --json > candidate.json || true", scratch)
    assert made.returncode == 0, made.stderr
    gate = _sh(COMPARE, scratch)
    assert gate.returncode == 1, (gate.stdout, gate.stderr)
    assert "verdict regressed" in " ".join(gate.stdout.split())


def test_readme_gate_passes_the_same_agent(scratch: Path) -> None:
    made = _sh(f"wopeval run {SUITE} --json > candidate.json", scratch)
    assert made.returncode == 0, made.stderr
    gate = _sh(COMPARE, scratch)
    assert gate.returncode == 0, (gate.stdout, gate.stderr)
