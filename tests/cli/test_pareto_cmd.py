"""``wopeval pareto`` and the efficiency members of ``run``/``show``, on hand-made stored runs
(the scripted agent: each trial passes or fails as written and reports the cost it is given)."""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from rich.cells import cell_len
from typer.testing import CliRunner

from tests.cli.gate_runs import suite_doc, write_suite
from wopeval.cli.app import app
from wopeval.grading.intervals import clopper_pearson


def _cli(*args: str) -> Any:
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "80", "NO_COLOR": "1"})


def _run(tmp: Path, store: str, outcomes: list[bool], cost: float, name: str) -> dict[str, Any]:
    """A stored run of one task whose trial ``i`` passes when ``outcomes[i]``, each trial costing
    ``cost`` (one provider.usage of 1 + 1 tokens)."""
    folder = tmp / name
    folder.mkdir()
    doc = suite_doc([outcomes], cost_usd=cost)
    ran = _cli("run", str(write_suite(folder, doc)), "--store", store, "--json")
    assert ran.exit_code in (0, 1), ran.output
    result: dict[str, Any] = json.loads(ran.stdout)
    return result


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, dict[str, Any]]]:
    tmp = tmp_path_factory.mktemp("pareto")
    store = str(tmp / "s.db")
    made = {
        # 2 of 4 at 0.1 a trial: 0.4 over 2 = 0.2 per success
        "a": _run(tmp, store, [True, True, False, False], 0.1, "a"),
        # 3 of 4 at 0.3: 1.2 over 3 = 0.4: more successful, dearer: on the frontier too
        "b": _run(tmp, store, [True, True, True, False], 0.3, "b"),
        # 1 of 4 at 0.1: 0.4 per success: a is as cheap... cheaper and more successful
        "c": _run(tmp, store, [True, False, False, False], 0.1, "c"),
        # no success: 0.2 spent, cost per success undefined
        "d": _run(tmp, store, [False, False, False, False], 0.05, "d"),
        # a at twice the price
        "a2": _run(tmp, store, [True, True, False, False], 0.2, "a2"),
    }
    return store, made


def _pareto(store: str, *names: str, made: dict[str, dict[str, Any]]) -> dict[str, Any]:
    done = _cli("pareto", *(made[n]["runId"] for n in names), "--store", store, "--json")
    assert done.exit_code == 0, done.output
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def test_run_json_has_exact_efficiency(runs: tuple[str, dict[str, dict[str, Any]]]) -> None:
    _, made = runs
    eff = made["a"]["efficiency"]
    suite = eff["suite"]
    assert (suite["trials"], suite["successes"], suite["successRate"]) == (4, 2, 0.5)
    assert suite["totalCostUsd"] == float(4 * Fraction(0.1))
    assert suite["costPerSuccessUsd"] == float(4 * Fraction(0.1) / 2)
    assert suite["tokensPerSuccess"] == 4  # 8 tokens over 2 successes
    rate = clopper_pearson(2, 4)
    assert suite["successRateInterval"] == {"low": rate.low, "high": rate.high}
    assert suite["latencyP50Ms"]["value"] <= suite["latencyP95Ms"]["value"]
    assert eff["tasks"][0]["taskId"] == "task-0"
    assert "efficiency" not in made["a"]["summary"]  # never on the wire


def test_frontier_is_exact_on_hand_made_runs(runs: tuple[str, dict[str, dict[str, Any]]]) -> None:
    store, made = runs
    doc = _pareto(store, "a", "b", "c", "d", made=made)
    by_id = {row["runId"]: row for row in doc["runs"]}
    rows = [by_id[made[n]["runId"]] for n in ("a", "b", "c", "d")]
    assert [row["onFrontier"] for row in rows] == [True, True, False, False]
    assert doc["frontier"] == [made["a"]["runId"], made["b"]["runId"]]
    assert [row["costPerSuccessUsd"] for row in rows] == [
        float(4 * Fraction(0.1) / 2), float(4 * Fraction(0.3) / 3),
        float(4 * Fraction(0.1) / 1), None,
    ]  # fmt: skip
    assert [row["successRate"] for row in rows] == [0.5, 0.75, 0.25, 0.0]
    assert rows[3]["costPerSuccessInterval"]["high"] is None  # unbounded, never 0


def test_zero_success_run_shows_no_success(runs: tuple[str, dict[str, dict[str, Any]]]) -> None:
    store, made = runs
    text = _cli("pareto", made["d"]["runId"], made["a"]["runId"], "--store", store)
    assert text.exit_code == 0, text.output
    assert "no success" in text.stdout
    assert all(cell_len(line) <= 80 for line in text.stdout.splitlines()), text.stdout
    md = _cli("pareto", made["d"]["runId"], "--store", store, "--markdown")
    assert md.exit_code == 0
    assert "| no success [" in md.stdout
    assert "∞)" in md.stdout


def test_changing_a_price_changes_only_cost_columns(
    runs: tuple[str, dict[str, dict[str, Any]]],
) -> None:
    store, made = runs
    (one,) = _pareto(store, "a", made=made)["runs"]
    (two,) = _pareto(store, "a2", made=made)["runs"]
    changed = {key for key in one if one[key] != two[key]}
    assert changed == {"runId", "totalCostUsd", "costPerSuccessUsd", "costPerSuccessInterval"}
    assert two["costPerSuccessUsd"] == 2 * one["costPerSuccessUsd"]
    # side by side, the frontier (a cost column too) keeps the cheaper of two equal rates
    both = _pareto(store, "a", "a2", made=made)
    assert both["frontier"] == [made["a"]["runId"]]
    a, a2 = made["a"]["efficiency"], made["a2"]["efficiency"]
    assert {key for key in a["suite"] if a["suite"][key] != a2["suite"][key]} <= {
        "totalCostUsd", "costPerSuccessUsd", "costPerSuccessInterval", "latencyP50Ms",
        "latencyP95Ms",
    }  # fmt: skip


def test_show_efficiency_recomputes_from_the_log(
    runs: tuple[str, dict[str, dict[str, Any]]],
) -> None:
    store, made = runs
    run_id = made["b"]["runId"]
    shown = _cli("show", run_id, "--store", store, "--json", "--efficiency")
    assert shown.exit_code == 0, shown.output
    assert json.loads(shown.stdout)["efficiency"] == made["b"]["efficiency"]
    assert "efficiency" not in json.loads(_cli("show", run_id, "--store", store, "--json").stdout)
    text = _cli("show", run_id, "--store", store, "--efficiency")
    assert "cost/success" in text.stdout
    assert all(cell_len(line) <= 80 for line in text.stdout.splitlines()), text.stdout
    md = _cli("export", run_id, "--format", "markdown", "--store", store)
    assert "#### Efficiency (informational, never gated)" in md.stdout
    assert "| **suite** | 3/4 | 0.4 [" in md.stdout


def test_plainest_run_without_cost(tmp_path: Path) -> None:
    store = str(tmp_path / "s.db")
    ran = _cli("run", str(write_suite(tmp_path, suite_doc([[True]]))), "--store", store, "--json")
    run_id = json.loads(ran.stdout)["runId"]
    (row,) = _pareto(store, "x", made={"x": {"runId": run_id}})["runs"]
    assert (row["trials"], row["successes"], row["costPerSuccessUsd"]) == (1, 1, 0.0)
    assert row["costPerSuccessInterval"] == {"low": 0.0, "high": 0.0}
    assert row["onFrontier"] is True
    shown = _cli("show", run_id, "--store", store, "--efficiency")
    assert shown.exit_code == 0, shown.output
    assert all(cell_len(line) <= 80 for line in shown.stdout.splitlines()), shown.stdout
    suite_row = next(line for line in shown.stdout.splitlines() if line.startswith("suite"))
    assert suite_row.split()[3:6] == ["1/1", "0", "[0,"]  # 0 per success, interval [0, 0]


def test_bad_input_exits_2(runs: tuple[str, dict[str, dict[str, Any]]], tmp_path: Path) -> None:
    store, made = runs
    assert _cli("pareto", "--store", store).exit_code == 2  # no run
    assert _cli("pareto", "nope", "--store", store).exit_code == 2
    other = suite_doc([[True]])
    other["suiteId"] = "core.test.evals.other"
    ran = _cli("run", str(write_suite(tmp_path, other)), "--store", store, "--json")
    mixed = _cli("pareto", made["a"]["runId"], json.loads(ran.stdout)["runId"], "--store", store)
    assert mixed.exit_code == 2
    assert "different suites" in mixed.output
