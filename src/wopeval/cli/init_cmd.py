"""``wopeval init``: a starter suite and the agent stub that passes it, ready to run offline."""

from __future__ import annotations

import json
import shlex
from importlib.resources import files
from pathlib import Path
from typing import Annotated

import typer

from wopeval.cli.common import EXIT_OK, fail_input

# What is written (from the package's ``data/starter``), in order.
STARTER = ("suite.yaml", "agent.py")
AGENT_REF = "agent:answer"


def init(
    directory: Annotated[
        Path, typer.Argument(metavar="DIR", help="Where to write (created when missing).")
    ] = Path("."),
    force: Annotated[
        bool, typer.Option("--force", help="Overwrite files that are already there.")
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the written files as JSON only.")
    ] = False,
) -> None:
    """Write a starter suite and an agent stub that pass at once (suite.yaml, agent.py).

    Then, in DIR: wopeval run suite.yaml --agent agent:answer. Existing files are never
    overwritten without --force.
    """
    if directory.exists() and not directory.is_dir():
        fail_input(f"DIR: {directory} is a file, not a directory")
    targets = [directory / name for name in STARTER]
    if not force:
        for target in targets:
            if target.exists() or target.is_symlink():
                fail_input(f"{target} already exists (pass --force to overwrite it)")
    source = files("wopeval.data.starter")
    try:
        directory.mkdir(parents=True, exist_ok=True)
        for name, target in zip(STARTER, targets, strict=True):
            target.write_text(source.joinpath(name).read_text(encoding="utf-8"), encoding="utf-8")
    except OSError as exc:
        fail_input(f"DIR: cannot write to {directory}: {exc.strerror or exc}")
    if as_json:
        typer.echo(json.dumps({"files": [str(target) for target in targets]}))
        raise typer.Exit(EXIT_OK)
    for target in targets:
        typer.echo(f"wrote {target}")
    where = (
        ""
        if directory.resolve() == Path.cwd().resolve()
        else f"cd {shlex.quote(str(directory))} && "
    )
    typer.echo(f"run it: {where}wopeval run suite.yaml --agent {AGENT_REF}")


def register(app: typer.Typer) -> None:
    app.command()(init)


__all__ = ["register"]
