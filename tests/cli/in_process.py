"""``wopeval`` in this process (typer's runner), for tests about what a command prints and
returns rather than about the process: from a working directory, with its environment."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path

from typer.testing import CliRunner

from wopeval.cli.app import app


@dataclass(frozen=True)
class Done:
    """What the command left, named as :class:`subprocess.CompletedProcess` names it."""

    returncode: int
    stdout: str
    stderr: str


def wopeval(cwd: Path, env: dict[str, str], *args: str) -> Done:
    """``wopeval ARGS`` run from ``cwd`` with ``env`` added to the environment; an exception
    other than the command's exit is raised, so a crash never passes for an exit code."""
    with contextlib.chdir(cwd):
        result = CliRunner().invoke(app, list(args), env=env)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return Done(result.exit_code, result.stdout, result.stderr)
