"""``wopeval fork RUN --task T --trial I --at N`` through the CLI on stored runs (SQLite and
PostgreSQL): the new run and its link (``--json``, ``show``), a readable 80-column text, the
re-grade's bytes, the divergence, and each refusal's exit 2 naming the option."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from rich.cells import cell_len
from typer.testing import CliRunner

from tests.service import fork_agents
from wopeval.cli.app import app

AGENT = "tests.service.fork_agents:walker"
TOOL = "step=tests.service.fork_agents:step"


@pytest.fixture(autouse=True)
def _fresh_tool(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fork_agents, "LIVE", [])
    monkeypatch.setattr(fork_agents, "DIVERGE_AT", None)


def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "80"})
    return result.exit_code, result.output


def _original(tmp_path: Path, store: str, *, trials: bool = True) -> str:
    """A stored run of one task calling ``step`` three times (two trials, or with ``trials``
    False the plainest suite: no ``trials`` block, no fixtures)."""
    suite: dict[str, Any] = {
        "suiteId": "core.test.evals.fork-cli",
        "version": "1.0.0",
        "modes": ["golden"],
        "tasks": [
            {
                "taskId": "walk",
                "input": {"steps": 3},
                "expected": {
                    "kind": "golden",
                    "match": {"strategy": "contains", "value": '"done":true'},
                },
            }
        ],
    }
    if trials:
        suite["trials"] = {"count": 2}
    path = tmp_path / "suite.json"
    path.write_text(json.dumps(suite))
    code, out = _cli("run", str(path), "--agent", AGENT, "--tool", TOOL, "--store", store, "--json")
    assert code == 0, out
    run_id: str = json.loads(out)["runId"]
    return run_id


def _stored(store: str, run_id: str) -> dict[str, Any]:
    code, out = _cli("show", run_id, "--store", store, "--json", "--events")
    assert code == 0, out
    doc: dict[str, Any] = json.loads(out)
    return doc


def test_fork_json_gives_the_new_run_its_link_and_summary(tmp_path: Path, store_url: str) -> None:
    run_id = _original(tmp_path, store_url)
    before = _stored(store_url, run_id)
    code, out = _cli(
        "fork", run_id, "--task", "walk", "--trial", "1", "--at", "2",
        "--tool", TOOL, "--store", store_url, "--json",
    )  # fmt: skip
    assert code == 0, out
    doc = json.loads(out)
    link = {"runId": run_id, "taskId": "walk", "trialIndex": 1, "at": 2}
    assert doc["forkedFrom"] == link
    assert doc["summary"]["taskCount"] == 1
    assert doc["summary"]["passed"] is True
    assert doc["gate"]["passed"] is True
    assert doc["failures"] == []
    assert len(fork_agents.LIVE) == 6 + 1  # the original's six calls, then the fork's last one
    shown = _stored(store_url, doc["runId"])
    assert shown["forkedFrom"] == link
    assert shown["summary"] == doc["summary"]
    code, graded = _cli("grade", doc["runId"], "--store", store_url)
    assert code == 0, graded
    assert _stored(store_url, run_id) == before  # the original is unchanged


def test_fork_text_reads_at_80_columns_and_show_names_the_original(
    tmp_path: Path, store_url: str
) -> None:
    run_id = _original(tmp_path, store_url, trials=False)
    code, out = _cli(
        "fork", run_id, "--task", "walk", "--trial", "0", "--at", "1",
        "--tool", TOOL, "--store", store_url,
    )  # fmt: skip
    assert code == 0, out
    assert all(cell_len(line) <= 80 for line in out.splitlines()), out
    assert f"forked from run {run_id}: task walk, trial 0, at call 1" in out
    assert "PASSED" in out
    new_id = next(line.split()[1] for line in out.splitlines() if line.startswith("run local/"))
    code, shown = _cli("show", new_id, "--store", store_url)
    assert code == 0, shown
    assert f"forked from {run_id}: task walk, trial 0, at call 1" in " ".join(shown.split())
    assert all(cell_len(line) <= 80 for line in shown.splitlines()), shown


def test_fork_a_divergence_exits_1_naming_the_call(
    tmp_path: Path, store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id = _original(tmp_path, store_url)
    monkeypatch.setattr(fork_agents, "DIVERGE_AT", 0)
    code, out = _cli(
        "fork", run_id, "--task", "walk", "--trial", "0", "--at", "3",
        "--tool", TOOL, "--store", store_url, "--json",
    )  # fmt: skip
    assert code == 1, out
    (failure,) = json.loads(out)["failures"]
    reasons = " ".join(failure["reasons"])
    assert "call 0 of the prefix (step) differs from the recorded call at args.oops" in reasons
    assert len(fork_agents.LIVE) == 6  # the original's calls only


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (("local/r-none", "--task", "walk", "--trial", "0", "--at", "0"), "RUN: "),
        (("RUN", "--task", "nope", "--trial", "0", "--at", "0"), "--task: "),
        (("RUN", "--task", "walk", "--trial", "7", "--at", "0"), "--trial: "),
        (("RUN", "--task", "walk", "--trial", "0", "--at", "-1"), "--at: -1 "),
        (("RUN", "--task", "walk", "--trial", "0", "--at", "4"), "recorded 3 tool call(s)"),
    ],
)
def test_fork_refusals_exit_2_naming_the_option(
    tmp_path: Path, args: tuple[str, ...], said: str
) -> None:
    store = str(tmp_path / "s.db")
    run_id = _original(tmp_path, store)
    given = [run_id if a == "RUN" else a for a in args]
    code, out = _cli("fork", *given, "--tool", TOOL, "--store", store)
    assert code == 2, out
    assert said in " ".join(out.split())
    code, listed = _cli("runs", "--store", store, "--json")
    assert code == 0
    assert len(json.loads(listed)["runs"]) == 1  # nothing was recorded


def test_fork_a_hostile_task_name_is_quoted_not_interpreted(tmp_path: Path) -> None:
    """Rich markup and a terminal escape in --task are shown as text, never acted on."""
    store = str(tmp_path / "s.db")
    run_id = _original(tmp_path, store)
    code, out = _cli("fork", run_id, "--task", "[red]x\x1b[31m", "--trial", "0", "--at", "0",
                     "--store", store)  # fmt: skip
    assert code == 2, out
    assert "\x1b" not in out
    assert "has no task '[red]x\\x1b[31m'" in out
    code, out = _cli("fork", run_id, "--task", "walk", "--trial", "-1", "--at", "0",
                     "--store", store)  # fmt: skip
    assert code == 2, out
    assert "--trial: -1 is not a trial index" in out
