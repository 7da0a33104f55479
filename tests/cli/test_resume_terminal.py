"""On a terminal, ``wopeval run`` says its run id as it starts (the id to resume it by), and
``wopeval run --resume`` says what the log kept and shows the trials left as a bar."""

from __future__ import annotations

from pathlib import Path

import anyio

from tests.cli.test_import_progress import _on_a_terminal
from tests.cli.test_resume_cmd import QUICKSTART, _created_not_executed


def test_a_run_on_a_terminal_says_its_id_and_a_resume_what_is_left(tmp_path: Path) -> None:
    store = str(tmp_path / "s.db")
    code, _, err = _on_a_terminal("run", str(QUICKSTART), "--store", store)
    assert code in (0, 1), err
    assert "run local/r" in err
    run_id = anyio.run(_created_not_executed, store)
    code, _, err = _on_a_terminal("run", "--resume", run_id, "--store", store)
    assert code in (0, 1), err
    said = " ".join(err.split())
    assert f"resuming run {run_id}: 0 trial(s) scored already;" in said
    assert "to run" in said
    assert "trials" in err  # the bar
