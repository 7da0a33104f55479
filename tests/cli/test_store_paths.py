"""Commands that only read a store never create one: a missing SQLite file is bad input."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from wopeval.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
QUICKSTART = str(ROOT / "examples" / "quickstart" / "suite.yaml")
RUN_ID = "local/r0000000000000000000000000"

READERS = [
    ("runs",),
    ("show", RUN_ID),
    ("grade", RUN_ID),
    ("export", RUN_ID),
    ("report", RUN_ID),
    ("compare", RUN_ID, RUN_ID),
]


@pytest.mark.parametrize("command", READERS, ids=lambda args: args[0])
def test_reading_a_missing_store_says_so_and_creates_nothing(
    command: tuple[str, ...], tmp_path: Path
) -> None:
    missing = tmp_path / "nowhere" / "s.db"
    result = CliRunner().invoke(app, [*command, "--store", str(missing)])
    assert result.exit_code == 2, result.output
    assert "there is no event store at" in " ".join(result.output.split())
    assert not missing.parent.exists()


def test_the_default_store_is_not_created_by_reading_but_is_by_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("WOPEVAL_STORE", raising=False)
    result = CliRunner().invoke(app, ["runs"])
    assert result.exit_code == 2, result.output
    assert not (tmp_path / ".wopeval").exists()
    result = CliRunner().invoke(app, ["run", QUICKSTART, "--json"])
    assert result.exit_code in (0, 1), result.output
    assert (tmp_path / ".wopeval" / "wopeval.db").is_file()
    result = CliRunner().invoke(app, ["runs"])
    assert result.exit_code == 0, result.output
    assert "support-quickstart" in result.output


def test_a_directory_is_refused_before_opening(tmp_path: Path) -> None:
    for args in (["runs"], ["run", QUICKSTART]):
        result = CliRunner().invoke(app, [*args, "--store", str(tmp_path)])
        assert result.exit_code == 2, result.output
        assert "is a directory, not an event store" in " ".join(result.output.split())
