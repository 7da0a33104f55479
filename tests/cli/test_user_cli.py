"""``wopeval run`` / ``show`` / Markdown on a suite with a scripted user: the user side is a
line of its own, readable at 80 columns; a plain suite's output has none."""

from __future__ import annotations

import json
from pathlib import Path

from bench.grade_kinds import CONVERSATION, PLAIN
from typer.testing import CliRunner

from wopeval.cli.app import app


def _cli(*argv: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(argv), env={"COLUMNS": "80"})
    return result.exit_code, result.stdout


def test_33_2_run_show_and_markdown_say_the_user_side(tmp_path: Path) -> None:
    suite = tmp_path / "talk.json"
    suite.write_text(json.dumps(CONVERSATION), encoding="utf-8")
    store = str(tmp_path / "s.db")
    code, out = _cli("run", str(suite), "--store", store)
    assert code == 1  # two of the three tasks fail
    line = "user side: 1 user-miss, 0 user-error; pass rate 0.333, 0.500 without them"
    assert line in out.splitlines()
    assert all(len(text) <= 80 for text in out.splitlines())
    code, out = _cli("run", str(suite), "--store", store, "--json")
    side = json.loads(out)["summary"]["x-wopeval-userSide"]
    assert (side["userMiss"], side["userError"], side["trials"]) == (1, 0, 3)
    run_id = json.loads(out)["runId"]
    code, out = _cli("show", run_id, "--store", store)
    assert line in out.splitlines()
    assert "user miss (onMiss: fail)" in out
    rows = [line.split() for line in out.splitlines()]
    names = ("talks", "off-script", "too-long")
    grid = {row[0]: row[1] for row in rows if len(row) == 2 and row[0] in names}
    assert grid == {"talks": "✓", "off-script": "!", "too-long": "E"}  # a miss fails closed
    code, out = _cli("export", run_id, "-f", "markdown", "--store", store)
    assert line in out


def test_33_2_a_plain_suite_has_no_user_side(tmp_path: Path) -> None:
    suite = tmp_path / "plain.json"
    suite.write_text(json.dumps(PLAIN), encoding="utf-8")
    code, out = _cli("run", str(suite), "--store", str(tmp_path / "s.db"), "--json")
    assert code == 0
    assert "x-wopeval-userSide" not in json.loads(out)["summary"]
