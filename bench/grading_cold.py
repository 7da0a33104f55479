"""Cold grading: cold and compiled CPU ms of a 10,000-call trajectory, before and after.

``python3 bench/grading.py --cold-table [--base COMMIT] [--repeats N]`` runs this. Each round
measures every tree (this checkout's ``src`` and, with ``--base``, that commit's, ``git
archive``), the order alternating between rounds, in two ways:

* **in process** (``python bench/grading.py --issue-rows-only``): every cell of
  :func:`bench.grading.cpu_matrix`, :func:`~bench.grading.whole_trial` and
  :func:`~bench.grading.adversarial`, compiled and cold (a fresh copy of the expectation per
  grade), each the minimum of five grades in one process after the cells before it;
* **fresh** (``python bench/grading_cold.py --fresh CELL``): one process per cold cell, which
  builds the workload and grades it once, the first grade of the process: what a user's
  ``wopeval grade`` of an imported trace pays for its one trajectory (its code not yet warmed
  by other grades, the collector's state that of a process that has just built the data). The
  child also counts the full (generation 2) collections the collector ran during that grade
  (``gc.callbacks``, read only).

Per cell: the compiled, the in-process cold and the fresh cold figures, median (min–max), and
``met`` when the compiled and the fresh medians are under 50 ms.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import grading  # noqa: E402

COLD_GOAL_MS = 50
SHAPES = ("shared-first-field", "all-object-fields")


def cell_names() -> list[str]:
    """Every cold cell: mode/argsMatch, whole_trial/mode, adversarial/shape/mode."""
    names = [f"{mode}/{match}" for mode in grading.MODES for match in grading.ARGS_MATCHES]
    names += [f"whole_trial/{mode}" for mode in grading.MODES]
    names += [f"adversarial/{shape}/{mode}" for shape in SHAPES for mode in ("any-order", "subset")]
    return names


def _grade_of(name: str) -> Callable[[], bool]:
    """Build cell ``name``'s workload; the cold grade of it (True: matched / passed)."""
    from wopeval.grading.trajectory import grade_trajectory
    from wopeval.suite.models import TrajectoryExpectation

    parts = name.split("/")
    if parts[0] == "whole_trial":
        return _trial_grade(parts[1])
    if parts[0] == "adversarial":
        observed, expected = grading._quadratic_workload(parts[1], grading.MATRIX_CALLS)
        mode = parts[2]
    else:
        mode = parts[0]
        observed = grading.observed_calls(grading.MATRIX_CALLS)
        expected = grading.matrix_expected(mode, parts[1], observed)  # type: ignore[arg-type]
    expectation = TrajectoryExpectation(match=mode, calls=expected)
    return lambda: grade_trajectory(expectation, observed, grading.AGENT).matched


def _trial_grade(mode: str) -> Callable[[], bool]:
    """A task graded once (``grade_trial``) on the view of its 10,000-event log, read first."""
    from wopeval.grading.trajectory import ObservedCall
    from wopeval.grading.trial import grade_trial
    from wopeval.grading.views import collect_trials
    from wopeval.suite.models import Task

    agent = "core.acme.bench-agent"
    observed = [
        ObservedCall(c.tool, c.inputs, agent) for c in grading.observed_calls(grading.MATRIX_CALLS)
    ]
    calls = grading.matrix_expected(mode, "exact", observed)  # type: ignore[arg-type]
    trajectory = {"match": mode, "calls": [c.model_dump(exclude_none=True) for c in calls]}
    task = Task.model_validate(
        {"taskId": "t", "input": "x", "expected": {"kind": "trajectory", "trajectory": trajectory}}
    )
    view = collect_trials(grading._log(observed, agent))[("t", 0)]
    return lambda: grade_trial(task, view, target_agent_id=agent, pass_score=1.0).passed


def fresh(name: str) -> dict[str, Any]:
    """CPU ms of the first cold grade of cell ``name`` in this process, and the full
    collections run during it."""
    grade = _grade_of(name)
    full = [0]

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start" and info["generation"] == 2:
            full[0] += 1

    gc.callbacks.append(count)
    start = time.process_time()
    matched = grade()
    ms = (time.process_time() - start) * 1000
    gc.callbacks.remove(count)
    assert matched, name
    return {"ms": round(ms, 2), "full_collections": full[0]}


def _fresh_in(src: str, name: str) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": src}
    done = subprocess.run(
        [sys.executable, __file__, "--fresh", name], capture_output=True, text=True, env=env
    )
    if done.returncode != 0:
        return {"error": done.stderr[-600:]}
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def _spread(values: list[float]) -> dict[str, Any]:
    ordered = sorted(values)
    middle = len(ordered) // 2
    median = ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2
    return {"median": round(median, 2), "min": ordered[0], "max": ordered[-1], "n": len(values)}


def _in_process(rounds: list[dict[str, Any]], name: str) -> dict[str, Any]:
    """The in-process figures of cell ``name`` (compiled and cold ms, spreads)."""
    parts = name.split("/")
    if parts[0] == "whole_trial":
        whole = [r["whole_trial_10k"][parts[1]] for r in rounds]
        row = {
            figure: _spread([w[figure] for w in whole])
            for figure in ("collect_trials_ms", "grade_trial_ms", "grade_trial_cold_ms")
        }
        return {
            "compiled_ms": row.pop("grade_trial_ms"),
            "cold_ms": row.pop("grade_trial_cold_ms"),
            **row,
        }
    if parts[0] == "adversarial":
        cells = [r["adversarial_10k"][f"{parts[1]}/{parts[2]}"] for r in rounds]
        return {f: _spread([c[f] for c in cells]) for f in ("compiled_ms", "cold_ms")}
    mode, match = parts
    return {
        "compiled_ms": _spread([r["cpu_10k"][mode][match] for r in rounds]),
        "cold_ms": _spread([r["cpu_10k_cold"][mode][match] for r in rounds]),
    }


def _cells(rounds: list[dict[str, Any]], fresh_rounds: list[dict[str, Any]]) -> dict[str, Any]:
    cells: dict[str, Any] = {}
    for name in cell_names():
        cell = _in_process(rounds, name)
        runs = [r[name] for r in fresh_rounds]
        cell["fresh_cold_ms"] = _spread([r["ms"] for r in runs])
        cell["fresh_full_collections"] = [r["full_collections"] for r in runs]
        cell["met"] = max(cell["compiled_ms"]["median"], cell["fresh_cold_ms"]["median"]) < (
            COLD_GOAL_MS
        )
        cells[name] = cell
    return cells


def _measure(src: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """One round of one tree: the in-process rows, then a fresh process per cold cell."""
    rows = grading._rows_in(src)
    return rows, {name: _fresh_in(src, name) for name in cell_names()}


def cold_table(base: str | None, repeats: int) -> dict[str, Any]:
    """This tree (and ``base``) in ``repeats`` interleaved rounds, alternating the order."""
    here = str(ROOT / "src")
    trees: dict[str, list[tuple[dict[str, Any], dict[str, Any]]]] = {"after": []}
    loads: list[tuple[float, float, float]] = [os.getloadavg()]
    with tempfile.TemporaryDirectory() as tmp:
        sources = {"after": here}
        if base:
            sources["before"] = grading._base_src(base, tmp)
            trees["before"] = []
        for round_index in range(repeats):
            order = sorted(sources, reverse=round_index % 2 == 1)
            for name in order:
                print(f"round {round_index + 1}/{repeats}: {name}", file=sys.stderr)
                trees[name].append(_measure(sources[name]))
            loads.append(os.getloadavg())
    report: dict[str, Any] = {"goal_ms": COLD_GOAL_MS, "repeats": repeats, "base": base}
    for name, measured in trees.items():
        failed = [r["error"] for rows, _ in measured for r in (rows,) if "error" in r]
        failed += [f["error"] for _, cells in measured for f in cells.values() if "error" in f]
        if failed:
            report[name] = {"error": failed[0]}
            continue
        report[name] = _cells([rows for rows, _ in measured], [cells for _, cells in measured])
    after = report["after"]
    if "error" not in after:
        report["all_met"] = all(cell["met"] for cell in after.values())
    report["load_average"] = loads
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--fresh", required=True, help="one cold cell, graded once (a child)")
    args = parser.parse_args()
    print(json.dumps(fresh(args.fresh)))


if __name__ == "__main__":
    main()
