"""``wopeval run`` and ``show`` at 80 columns, piped, under ``CI=true``: nothing is cut. The
commands run in process, their output not a terminal, as when piped."""

from __future__ import annotations

import json
import re
from pathlib import Path

from rich.cells import cell_len

from tests.cli.in_process import Done, wopeval

SCRIPTED = "core.conformance.agents.scripted"
LONG_ID = "a-rather-long-task-identifier-that-cannot-fit-its-column"
HEADERS = ("task", "result", "score", "trials", "pass@3", "pass^3", "path", "miss", "tools")


def _failing_suite(path: Path) -> Path:
    calls = [{"tool": "crm:lookup-order", "args": {"orderId": "A-1"}}]
    trajectory = {"match": "exact", "calls": [{"tool": "billing:refund"}], "forbidden": ["crm:*"]}
    tasks = [
        {
            "taskId": task_id,
            "input": {"calls": calls, "output": "no"},
            "expected": {
                "kind": "golden",
                "match": {"strategy": "exact", "value": "yes"},
                "trajectory": trajectory,
            },
            "fixtures": {"onMiss": "fail", "toolResponses": []},
        }
        for task_id in ("short", LONG_ID)
    ]
    suite = {
        "suiteId": "core.test.evals.a-suite-with-a-fairly-long-identifier",
        "version": "1.0.0",
        "modes": ["golden"],
        "trials": {"count": 3, "k": 3},
        "tasks": tasks,
    }
    path.write_text(json.dumps(suite))
    return path


def _wopeval(*args: str, cwd: Path) -> Done:
    return wopeval(cwd, {"COLUMNS": "80", "CI": "true", "WOPEVAL_STORE": str(cwd / "s.db")}, *args)


def _check_readable(out: str) -> None:
    lines = out.splitlines()
    assert all(cell_len(line) <= 80 for line in lines), out
    assert "…" not in out, out
    start = next(i for i, line in enumerate(lines) if line.startswith("task "))
    assert lines[start].split() == list(HEADERS), out
    width = lines[start].index("result")  # the task column: a long id folds, whole
    body = lines[start + 2 : next(i for i, line in enumerate(lines) if line.startswith("FAILED"))]
    assert LONG_ID in "".join(line[:width].strip() for line in body), out
    assert re.search(r"^FAILED  aggregate", out, re.MULTILINE), out


def test_run_and_show_fit_80_columns_when_piped(tmp_path: Path) -> None:
    suite = _failing_suite(tmp_path / "suite.json")
    done = _wopeval("run", str(suite), "--agent", SCRIPTED, cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    _check_readable(done.stdout)
    run_id = re.search(r"run (local/\S+)", done.stdout)
    assert run_id is not None, done.stdout
    shown = _wopeval("show", run_id.group(1), cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    _check_readable(shown.stdout)


def test_compare_fits_80_columns_when_piped(tmp_path: Path) -> None:
    suite = _failing_suite(tmp_path / "suite.json")
    ids = []
    for _ in range(2):
        done = _wopeval("run", str(suite), "--agent", SCRIPTED, "--json", cwd=tmp_path)
        ids.append(json.loads(done.stdout)["runId"])
    done = _wopeval("compare", *ids, "--accept-undecidable", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert all(cell_len(line) <= 80 for line in lines), done.stdout
    assert "…" not in done.stdout, done.stdout
    assert "Δ mean" in done.stdout
    header = next(i for i, line in enumerate(lines) if line.lstrip().startswith("task "))
    body = "".join(line.split()[0] for line in lines[header + 2 :] if line.strip())
    assert LONG_ID in body, done.stdout
    assert any(line.startswith("verdict ") for line in lines), done.stdout
