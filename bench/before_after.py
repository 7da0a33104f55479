"""Before/after tables from saved benchmark reports: each figure's median (min–max) per tree.

Reads ``bench/scale.py`` reports (``--out`` JSON, each with an ``after`` and a ``before`` tree
measured in the same invocation) and, optionally, a directory of paired single-tree runs
(``engine-{after,before}-N.json`` from ``bench/engine.py --quick --no-peers`` and
``grading-{after,before}-N.json`` from ``bench/grading.py --issue-rows-only``, each with an
``.uptime`` file beside it). Every sample of a figure goes into its tree's median; the ratio is
after / before of the medians, and ``worse`` says by how much after is worse (a time or a size
that grew, a throughput that fell). Prints Markdown; ``--json`` the rows.

Usage: ``python3 bench/before_after.py REPORT.json … [--pair DIR] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

TREES = ("before", "after")


@dataclass
class Row:
    name: str
    unit: str
    higher_is_better: bool = False
    samples: dict[str, list[float]] = field(default_factory=lambda: {t: [] for t in TREES})
    loads: list[float] = field(default_factory=list)

    def add(self, tree: str, values: Any, loads: list[float]) -> None:
        for value in values if isinstance(values, list) else [values]:
            if isinstance(value, int | float) and not isinstance(value, bool):
                self.samples[tree].append(float(value))
        self.loads.extend(loads)

    def figures(self) -> dict[str, Any]:
        out: dict[str, Any] = {"row": self.name, "unit": self.unit}
        for tree in TREES:
            values = self.samples[tree]
            out[tree] = (
                {"median": statistics.median(values), "min": min(values), "max": max(values),
                 "n": len(values)} if values else None
            )  # fmt: skip
        if out["before"] and out["after"] and out["before"]["median"]:
            ratio = out["after"]["median"] / out["before"]["median"]
            out["ratio"] = ratio
            out["worse"] = (1 / ratio - 1) if self.higher_is_better else ratio - 1
        if self.loads:
            out["load"] = [min(self.loads), max(self.loads)]
        return out


class Table:
    def __init__(self) -> None:
        self.rows: dict[str, Row] = {}

    def row(self, name: str, unit: str, higher_is_better: bool = False) -> Row:
        return self.rows.setdefault(name, Row(name, unit, higher_is_better))


def _scale_loads(report: dict[str, Any], err: Path) -> dict[str, list[float]]:
    """The 1-minute load average when each row ended (the progress lines on stderr), else the
    report's load before and after."""
    loads: dict[str, list[float]] = {}
    if err.exists():
        for match in re.finditer(
            r"(after|before) (\w+): [\d.]+ s \(load ([\d.]+)\)", err.read_text()
        ):
            loads.setdefault(match[2], []).append(float(match[3]))
    machine = report.get("machine", {})
    ends = [machine[k][0] for k in ("loadAverageBefore", "loadAverageAfter") if k in machine]
    loads.setdefault("*", ends)
    return loads


def add_scale(table: Table, report: dict[str, Any], err: Path) -> None:
    loads = _scale_loads(report, err)
    for tree in TREES:
        got = report.get(tree) or {}

        def load(row: str) -> list[float]:
            return loads.get(row, loads["*"])

        for first in got.get("firstTrial") or ():
            name = f"firstTrial {first['trials']:,} trials: execute → first agent call"
            table.row(name, "s").add(tree, first.get("runs"), load("firstTrial"))
        if isinstance(got.get("startup"), dict):
            table.row("startup: spawn → first agent call, 1 task", "s").add(
                tree, got["startup"].get("runs"), load("startup")
            )
        if isinstance(got.get("wholeProcess"), dict):
            whole = got["wholeProcess"]
            table.row(f"wholeProcess: {whole.get('trials', 1000):,} trials spawn → exit", "s").add(
                tree, whole.get("runs"), load("wholeProcess")
            )
        cpu = got.get("perTrialCpu")
        if isinstance(cpu, dict) and "wopevalMs" in cpu:
            trials = f"{cpu['trials']:,}"
            table.row(f"perTrialCpu: CPU a trial ({trials} trials, median of 3)", "ms").add(
                tree, cpu["wopevalMs"], load("perTrialCpu")
            )
            table.row("perTrialCpu ÷ stdlib floor (same run)", "×").add(
                tree, cpu.get("ratios"), load("perTrialCpu")
            )
        if isinstance(got.get("concurrency"), dict):
            table.row("concurrency: measured ÷ ideal, 2,000 × 50 ms at 200", "×").add(
                tree, got["concurrency"].get("runs"), load("concurrency")
            )
        if isinstance(got.get("keepalive"), dict):
            table.row("keepalive: GET on one connection, median", "ms").add(
                tree, got["keepalive"].get("medianMs"), load("keepalive")
            )
        for cell in got.get("memory") or ():
            _memory(table, tree, cell, load("memory"))
        resume = got.get("resume")
        if isinstance(resume, dict):
            for store, figures in (resume.get("stores") or {}).items():
                seconds = [s.get("resumeSeconds") for s in figures.get("seeds") or ()]
                table.row(f"resume after kill -9, {store}: resume process wall", "s").add(
                    tree, seconds, load("resume")
                )


def _memory(table: Table, tree: str, cell: dict[str, Any], loads: list[float]) -> None:
    where = f"{cell['store']} {cell['trials']:,}"
    run, grade = cell.get("run") or {}, cell.get("grade") or {}
    table.row(f"run CPU a trial, {where}", "ms").add(tree, run.get("cpuMsPerTrial"), loads)
    if "cpuSeconds" in grade:
        per_trial = 1000 * grade["cpuSeconds"] / cell["trials"]
        table.row(f"grade (regrade) CPU a trial, {where}", "ms").add(tree, per_trial, loads)
    for step in ("run", "grade", "export", "record", "import"):
        rss = (cell.get(step) or {}).get("peakRssMb")
        table.row(f"peak RSS {step}, {where}", "MB").add(tree, rss, loads)


def _uptime(path: Path) -> list[float]:
    if not path.exists():
        return []
    return [float(m[1]) for m in re.finditer(r"load average: ([\d.]+)", path.read_text())]


def add_pair(table: Table, directory: Path) -> None:
    for path in sorted(directory.glob("*.json")):
        kind, tree, _ = path.stem.split("-")
        try:
            doc = json.loads(path.read_text())
        except json.JSONDecodeError:
            continue
        loads = _uptime(path.with_suffix(".uptime"))
        if kind == "engine":
            over, conc = doc["wopeval"]["overhead"], doc["wopeval"]["concurrency"]
            table.row(f"engine.py: {over['trials']} instant trials in process", "trials/s",
                      higher_is_better=True).add(tree, over["trialsPerSecond"], loads)  # fmt: skip
            table.row(f"engine.py: {conc['trials']} × 50 ms at 200, measured ÷ ideal", "×").add(
                tree, conc["measuredOverIdeal"], loads
            )
        elif kind == "grading":
            for mode, cells in doc["cpu_10k"].items():
                for match, ms in cells.items():
                    table.row(f"grade_trajectory 10,000 calls, {mode}/{match}", "ms").add(
                        tree, ms, loads
                    )
            for mode, cells in doc["whole_trial_10k"].items():
                for key, ms in cells.items():
                    table.row(f"whole trial 10,000 calls, {mode}: {key}", "ms").add(tree, ms, loads)


def _cell(figures: dict[str, Any] | None) -> str:
    if not figures:
        return "—"
    return f"{figures['median']:.4g} ({figures['min']:.4g}–{figures['max']:.4g}, n={figures['n']})"


def markdown(rows: list[dict[str, Any]]) -> Iterator[str]:
    yield "| figure | unit | before: median (min–max, n) | after: median (min–max, n) | after ÷ before | worse by | load (1-min) |"  # noqa: E501
    yield "| --- | --- | --- | --- | --- | --- | --- |"
    for row in rows:
        ratio = f"{row['ratio']:.3f}" if "ratio" in row else "—"
        worse = f"{100 * row['worse']:+.1f} %" if "worse" in row else "—"
        flag = " **> 10 %**" if row.get("worse", 0) > 0.10 else ""
        load = "–".join(f"{x:.1f}" for x in row["load"]) if "load" in row else "—"
        yield (f"| {row['row']} | {row['unit']} | {_cell(row['before'])} | {_cell(row['after'])} "
               f"| {ratio} | {worse}{flag} | {load} |")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("reports", nargs="*", type=Path, help="bench/scale.py --out JSON files")
    parser.add_argument("--pair", type=Path, default=None, help="engine-/grading-*.json dir")
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = parser.parse_args()
    table = Table()
    for path in args.reports:
        add_scale(table, json.loads(path.read_text()), path.with_suffix(".err"))
    if args.pair:
        add_pair(table, args.pair)
    rows = [row.figures() for row in table.rows.values()]
    print(json.dumps(rows, indent=2) if args.json else "\n".join(markdown(rows)))


if __name__ == "__main__":
    main()
