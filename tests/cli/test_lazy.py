"""``wopeval --help`` imports no command: the listed table matches the modules it names."""

from __future__ import annotations

import json
import subprocess
import sys

from typer.testing import CliRunner

from wopeval.cli.app import COMMANDS, app
from wopeval.cli.lazy import load_commands

HEAVY = ("sqlalchemy", "fastapi", "numpy", "uvicorn", "wopeval.engine", "wopeval.host")


def test_help_imports_no_heavy_module() -> None:
    probe = (
        "import json, sys\n"
        "sys.argv = ['wopeval', '--help']\n"
        "from wopeval.cli.app import main\n"
        "try:\n    main()\nexcept SystemExit as exc:\n    code = exc.code\n"
        f"print(json.dumps([code, [m for m in {HEAVY!r} if m in sys.modules]]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    code, loaded = json.loads(done.stdout.splitlines()[-1])
    assert code == 0
    assert "Commands" in done.stdout
    assert loaded == []


def test_python_dash_m_wopeval_is_the_command() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "wopeval", "--help"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    for name in COMMANDS:
        assert name in done.stdout
    version = subprocess.run(
        [sys.executable, "-m", "wopeval", "--version"], capture_output=True, text=True, timeout=60
    )
    assert version.returncode == 0
    assert version.stdout.startswith("wopeval ")


def test_the_table_matches_the_command_modules() -> None:
    found: dict[str, tuple[str, str]] = {}
    for module in sorted({spec.module for spec in COMMANDS.values()}):
        for name, command in load_commands(module).items():
            found[name] = (module, (command.help or "").strip().splitlines()[0])
    assert found == {name: (spec.module, spec.help) for name, spec in COMMANDS.items()}


def test_a_command_help_loads_the_real_command() -> None:
    result = CliRunner().invoke(app, ["export", "--help"])
    assert result.exit_code == 0
    assert "--format" in result.output  # an option only the real command has
