"""``wopeval plan``: the tables at 80 columns, ``--json``, and bad input (exit 2, naming the
option), on a stored run made by the real engine and on assumed rates."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from rich.cells import cell_len
from typer.testing import CliRunner

from tests.cli.gate_runs import suite_doc, write_suite
from wopeval.cli.app import app

FAST = ("--method", "sign-test", "--method", "mcnemar")


def _cli(*args: str) -> Any:
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "80", "NO_COLOR": "1"})


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path, str]:
    """A one-task, one-trial suite (no trials block) and its completed run."""
    tmp = tmp_path_factory.mktemp("plan")
    store = str(tmp / "s.db")
    path = write_suite(tmp, suite_doc([[True]]))
    ran = _cli("run", str(path), "--store", store, "--json")
    assert ran.exit_code == 0, ran.output
    return store, path, json.loads(ran.stdout)["runId"]


def test_plan_from_a_plain_baseline_prints_tables_at_80_columns(
    stored: tuple[str, Path, str],
) -> None:
    store, path, run_id = stored
    done = _cli("plan", str(path), "--baseline", run_id, "--store", store, "--mde", "0.5", *FAST)
    assert done.exit_code == 0, done.output
    lines = done.stdout.splitlines()
    assert max(cell_len(line) for line in lines) <= 80
    text = done.stdout
    assert "Task gates: trials per task to decide passRule 'all'" in text
    task_row = next(line for line in lines if line.startswith("task-0"))
    assert task_row.split()[:4] == ["task-0", "1.000", "1/1", "5"]  # 0.5^5 ≤ 0.05 < 0.5^4
    suite_row = next(line for line in lines if line.startswith("suite "))
    assert suite_row.split()[:4] == ["suite", "5", "1.000", "0.031"]
    sign_row = next(line for line in lines if line.startswith("sign-test"))
    assert sign_row.split()[:3] == ["sign-test", "15", "0.849"]
    assert "exact" in sign_row
    assert "mde 0.5, alpha 0.05, power 0.8" in text


def test_plan_json(stored: tuple[str, Path, str]) -> None:
    store, path, run_id = stored
    done = _cli("plan", str(path), "--baseline", run_id, "--store", store, "--mde", "0.5",
                "--json", *FAST)  # fmt: skip
    assert done.exit_code == 0, done.output
    data = json.loads(done.stdout)
    assert data["suite"] == {"suiteId": "core.test.evals.gate", "version": "1.0.0"}
    assert (data["mde"], data["alpha"], data["power"]) == (0.5, 0.05, 0.8)
    assert data["tasks"][0]["taskId"] == "task-0"
    assert data["tasks"][0]["source"] == "1/1"
    assert data["tasks"][0]["passRule"]["trials"] == 5
    assert [g["gate"] for g in data["suiteGates"]] == ["suite", "lower-bound"]
    methods = data["regression"]["methods"]
    assert [(m["method"], m["tasks"], m["how"]) for m in methods] == [
        ("sign-test", 15, "exact"),
        ("mcnemar", 15, "exact"),
    ]


def test_plan_with_assumed_and_file_rates_and_a_simulated_method(tmp_path: Path) -> None:
    path = write_suite(tmp_path, suite_doc([[True] * 5, [True] * 5], pass_rule="mean",
                                           pass_score=0.7))  # fmt: skip
    assumed = _cli("plan", str(path), "--assume-rate", "0.9", "--mde", "0.3", "--json",
                   "--method", "paired-t", "--simulations", "50")  # fmt: skip
    assert assumed.exit_code == 0, assumed.output
    (method,) = json.loads(assumed.stdout)["regression"]["methods"]
    assert (method["method"], method["how"], method["simulations"]) == ("paired-t", "simulated", 50)
    rates = tmp_path / "rates.json"
    rates.write_text(json.dumps({"task-0": 0.9, "task-1": 0.9}), encoding="utf-8")
    given = _cli("plan", str(path), "--rates", str(rates), "--mde", "0.3", "--json",
                 "--method", "paired-t", "--simulations", "50")  # fmt: skip
    assert given.exit_code == 0, given.output
    assert json.loads(given.stdout)["regression"] == json.loads(assumed.stdout)["regression"]
    table = _cli("plan", str(path), "--assume-rate", "0.9", "--mde", "0.3", "--method",
                 "paired-t", "--simulations", "50")  # fmt: skip
    assert table.exit_code == 0, table.output
    assert "simulated ×50" in table.stdout
    assert max(cell_len(line) for line in table.stdout.splitlines()) <= 80


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (("--assume-rate", "0.9", "--mde", "0"), "--mde"),
        (("--assume-rate", "0.9", "--mde", "1.5"), "--mde"),
        (("--assume-rate", "0.9", "--power", "0.05"), "--power"),
        (("--assume-rate", "0.9", "--alpha", "0.2", "--power", "0.1"), "--power"),
        (("--assume-rate", "0.9", "--mde", "nan"), "--mde"),
        (
            (
                "--assume-rate",
                "1.5",
            ),
            "--assume-rate",
        ),
        (("--assume-rate", "0.9", "--method", "z-test"), "--method"),
        ((), "give exactly one of --baseline"),
        (("--assume-rate", "0.9", "--baseline", "local/r1"), "got --baseline, --assume-rate"),
    ],
)
def test_bad_input_exits_2_naming_the_option(
    stored: tuple[str, Path, str], args: tuple[str, ...], named: str
) -> None:
    _, path, _ = stored
    done = _cli("plan", str(path), *args, *FAST)
    assert done.exit_code == 2, done.output
    assert named in done.stderr


def test_bad_baselines_exit_2(stored: tuple[str, Path, str], tmp_path: Path) -> None:
    store, path, run_id = stored
    missing = _cli("plan", str(path), "--baseline", "local/r00000000000000000000000000",
                   "--store", store, *FAST)  # fmt: skip
    assert missing.exit_code == 2
    assert "--baseline: run 'local/r00000000000000000000000000' is not in the store" in (
        missing.stderr.replace("\n", " ")
    )
    other_doc = suite_doc([[True]])
    other_doc["suiteId"] = "core.test.evals.other"
    other = write_suite(tmp_path, other_doc)
    foreign = _cli("plan", str(other), "--baseline", run_id, "--store", store, *FAST)
    assert foreign.exit_code == 2
    assert "not of 'core.test.evals.other'" in foreign.stderr.replace("\n", " ")


@pytest.mark.parametrize("content", ["not json", "[0.9]", '{"task-0": "high"}', '{"x": 0.5}'])
def test_hostile_rate_files_exit_2(stored: tuple[str, Path, str], tmp_path: Path,
                                   content: str) -> None:  # fmt: skip
    _, path, _ = stored
    rates = tmp_path / "rates.json"
    rates.write_text(content, encoding="utf-8")
    done = _cli("plan", str(path), "--rates", str(rates), *FAST)
    assert done.exit_code == 2, done.output
    assert "--rates" in done.stderr
