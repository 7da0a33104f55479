"""Every command's ``--help`` reads at 80 columns: nothing wider, every option's names shown
whole (typer's rich panels cut them off there: ``--no-override-t…``), no source markup."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from wopeval.cli.app import COMMANDS, app
from wopeval.cli.lazy import load_commands


@pytest.mark.parametrize("command", [None, *COMMANDS])
def test_help_fits_80_columns(command: str | None) -> None:
    args = ["--help"] if command is None else [command, "--help"]
    result = CliRunner().invoke(app, args, env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert max(len(line) for line in result.output.splitlines()) <= 80, result.output
    assert "``" not in result.output
    if command is not None:
        click_command = load_commands(COMMANDS[command].module)[command]
        names = [o for p in click_command.params for o in (*p.opts, *p.secondary_opts)]
        shown = result.output.replace("\n", " ")
        missing = [n for n in names if n.startswith("-") and n not in shown]
        assert not missing, result.output
