"""Issue 13's table from ``bench/scale.py``'s measurements: one row per measure, ``met`` computed.

Each row is ``{"measure", "before", "after", "peers", "goal", "met", "note"}``; ``before`` /
``after`` / ``peers`` are short texts built from the figures of this run, ``met`` compares the
"after" figures with the goal (``False`` when a figure the goal needs is missing).
"""

from __future__ import annotations

from typing import Any

# The rows, in its order (bench/scale.py runs them; tests/bench checks each is there).
ROWS = (
    "resume",
    "memory",
    "firstTrial",
    "startup",
    "wholeProcess",
    "perTrialCpu",
    "concurrency",
    "grading",
    "keepalive",
)

GOAL_MEMORY_MB = 200
GOAL_FIRST_TRIAL_S = 1.0
GOAL_STARTUP_S = 0.5
GOAL_WHOLE = {"inspect": 40.0, "promptfoo": 15.0, "pydantic_evals": 1.0}
GOAL_CPU_RATIO = 4.0
GOAL_EFFICIENCY = 0.9
GOAL_GRADE_MS = 50.0
GOAL_GRADE_RATIO = 100.0
GROWTH_LINEAR = 20.0  # CPU(10n) / CPU(n): 10 is linear, 100 quadratic
GOAL_KEEPALIVE_MS = 5.0  # the goal says "~2 ms"; Nagle + delayed ACK is >= 40 ms


def _num(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _fmt(value: Any, unit: str = "", digits: int = 3) -> str:
    number = _num(value)
    if number is None:
        return "n/a"
    return f"{number:,.0f}{unit}" if abs(number) >= 10**digits else f"{number:.{digits}g}{unit}"


def _err(block: Any) -> str | None:
    return block.get("error") if isinstance(block, dict) else "not measured"


# --- rows --------------------------------------------------------------------------------------


def _resume_text(tree: dict[str, Any]) -> tuple[str, bool]:
    block = tree.get("resume") or {}
    parts, ok = [], bool(block.get("stores"))
    for store, data in (block.get("stores") or {}).items():
        seeds = data.get("seeds", [])
        failed = [s for s in seeds if "error" in s]
        if "error" in data or failed:
            why = data.get("error") or failed[0].get("error")
            parts.append(f"{store}: resume failed ({why})")
            ok = False
            continue
        killed = data.get("killedMidRun", 0)
        once = sum(1 for s in seeds if s.get("exactlyOnce"))
        equal = sum(1 for s in seeds if s.get("summaryEqual"))
        parts.append(
            f"{store}: {once}/{killed} seeds exactly once, {equal}/{killed} summaries equal, "
            f"resume {_fmt(data.get('medianResumeSeconds'), ' s')}"
        )
        ok = ok and killed > 0 and once == killed == equal
    return "; ".join(parts) or "not measured", ok


def _memory_text(tree: dict[str, Any]) -> tuple[str, bool, set[str]]:
    parts, ok, stores = [], True, set()
    for row in tree.get("memory") or []:
        run, grade = row.get("run", {}), row.get("grade", {})
        reads = [(kind, row[kind]) for kind in ("export", "record", "import") if kind in row]
        stores.add(row["store"])
        parts.append(
            f"{row['store']} {row['trials']:,}: run {_fmt(run.get('peakRssMb'), ' MB')}, "
            f"grade {_fmt(grade.get('peakRssMb'), ' MB')}"
            + "".join(f", {kind} {_fmt(block.get('peakRssMb'), ' MB')}" for kind, block in reads)
        )
        for block in (run, grade, *(block for _, block in reads)):
            peak = _num(block.get("peakRssMb"))
            ok = ok and peak is not None and peak < GOAL_MEMORY_MB and "error" not in block
    return "; ".join(parts) or "not measured", ok and bool(parts), stores


def _first_text(tree: dict[str, Any]) -> tuple[str, bool, int]:
    rows = tree.get("firstTrial") or []
    parts = [f"{r['trials']:,}: {_fmt(r.get('seconds'), ' s')}" for r in rows]
    largest = max(rows, key=lambda r: r["trials"], default=None)
    seconds = _num(largest.get("seconds")) if largest else None
    ok = seconds is not None and seconds < GOAL_FIRST_TRIAL_S
    return "; ".join(parts) or "not measured", ok, largest["trials"] if largest else 0


def _whole_ratios(tree: dict[str, Any], peers: dict[str, Any]) -> dict[str, float | None]:
    ours = _num((tree.get("wholeProcess") or {}).get("seconds"))
    out: dict[str, float | None] = {}
    for peer in GOAL_WHOLE:
        theirs = _num((peers.get(peer) or {}).get("processSeconds"))
        out[peer] = round(theirs / ours, 2) if ours and theirs else None
    return out


def _whole_text(tree: dict[str, Any], peers: dict[str, Any]) -> tuple[str, bool]:
    block = tree.get("wholeProcess") or {}
    if "seconds" not in block or block.get("seconds") is None:
        return f"error: {_err(block)}", False
    ratios = _whole_ratios(tree, peers)
    names = {"inspect": "Inspect", "promptfoo": "promptfoo", "pydantic_evals": "pydantic-evals"}
    text = f"{_fmt(block['seconds'], ' s')}: " + ", ".join(
        f"{_fmt(r, '×')} {names[p]}" for p, r in ratios.items()
    )
    ok = all(r is not None and r >= GOAL_WHOLE[p] for p, r in ratios.items())
    return text, ok


def _exact_1000(report: Any) -> dict[str, Any]:
    cells = report.get("results") or [] if isinstance(report, dict) else []
    return next((c for c in cells if c.get("observed") == 1000 and c.get("mode") == "exact"), {})


def _grading_facts(report: Any, peer_report: Any = None) -> dict[str, Any]:
    """From ``bench/grading.py``'s JSON: ms per grade at the largest size, growth, the ratio
    (against ``peer_report``'s agentevals figure when ``report`` ran without the peer)."""
    if not isinstance(report, dict) or "results" not in report:
        return {"error": _err(report) or "no results"}
    cells = [c for c in report["results"] if _num(c.get("wopeval_per_s"))]
    largest = max((c["observed"] for c in cells), default=0)
    worst = max(
        (1000 / c["wopeval_per_s"] for c in cells if c["observed"] == largest), default=None
    )
    quad_ms, growth = None, None
    for case in report.get("quadratic_cases") or []:
        cpu = case.get("cpu_s") or {}
        if cpu:
            top = max(cpu, key=int)
            ms = 1000 * cpu[top]
            quad_ms = ms if quad_ms is None else max(quad_ms, ms)
            if int(top) > largest:
                largest = int(top)
        for value in (case.get("growth") or {}).values():
            growth = value if growth is None else max(growth, value)
    exact = _exact_1000(report)
    ratio = _num(exact.get("ratio"))
    theirs = _num(_exact_1000(peer_report).get("agentevals_per_s"))
    ours = _num(exact.get("wopeval_per_s"))
    if ratio is None and theirs and ours:
        ratio = round(ours / theirs, 2)
    return {
        "largest": largest,
        "worstMs": worst,
        "quadraticMs": quad_ms,
        "growth": growth,
        "ratioExact1000": ratio,
    }


def _grading_text(report: Any, peer_report: Any = None) -> tuple[str, bool, dict[str, Any]]:
    facts = _grading_facts(report, peer_report)
    if "error" in facts:
        return f"error: {facts['error']}", False, facts
    text = (
        f"{_fmt(facts['worstMs'], ' ms')} worst mode at {facts['largest']:,} calls; shared-field/"
        f"object subset {_fmt(facts['quadraticMs'], ' ms')}, growth per 10× "
        f"{_fmt(facts['growth'])}; {_fmt(facts['ratioExact1000'], '×')} agentevals "
        "(1,000 calls, exact)"
    )
    worst, quad = _num(facts["worstMs"]), _num(facts["quadraticMs"])
    growth, ratio = _num(facts["growth"]), _num(facts["ratioExact1000"])
    ok = (
        facts["largest"] >= 10_000
        and worst is not None
        and worst < GOAL_GRADE_MS
        and (quad is None or quad < GOAL_GRADE_MS)
        and growth is not None
        and growth <= GROWTH_LINEAR
        and ratio is not None
        and ratio >= GOAL_GRADE_RATIO
    )
    return text, ok, facts


# --- the table ---------------------------------------------------------------------------------


def build(report: dict[str, Any]) -> list[dict[str, Any]]:
    after, before = report.get("after") or {}, report.get("before") or {}
    peers = report.get("peers") or {}
    grading = report.get("grading") or {}
    rows: list[dict[str, Any]] = []

    keys = iter(ROWS)

    def row(measure: str, b: str, a: str, p: str, goal: str, met: bool, note: str = "") -> None:
        key = next(keys)
        measured = (grading.get("after") if key == "grading" else after.get(key)) is not None
        if not measured:
            a, met, note = "not measured", False, "not measured (--rows)"
        if key == "grading":
            b = b if "before" in grading else "not measured"
        elif key not in before:
            b = "not measured"
        rows.append(
            {
                "row": key,
                "measure": measure,
                "before": b,
                "after": a,
                "peers": p,
                "goal": goal,
                "met": bool(met),
                "note": note,
            }
        )

    b_text, _ = _resume_text(before) if before else ("not measured", False)
    a_text, a_ok = _resume_text(after)
    stores = set((after.get("resume") or {}).get("stores") or {})
    row(
        "resume after kill -9",
        b_text,
        a_text,
        "Inspect `eval-set` retries, promptfoo `--resume` (not run)",
        "each (taskId, trialIndex) scored exactly once, summary = uninterrupted run's",
        a_ok and {"sqlite", "postgres"} <= stores,
        "" if {"sqlite", "postgres"} <= stores else "PostgreSQL not measured (--pg)",
    )

    b_text, _, _ = _memory_text(before) if before else ("not measured", False, set())
    a_text, a_ok, stores = _memory_text(after)
    sizes = sorted({r["trials"] for r in after.get("memory") or []})
    full = 100_000 in sizes and {"sqlite", "postgres"} <= stores
    row(
        "peak memory (run, grade, OTLP export, record, OTLP import)",
        b_text,
        a_text,
        "—",
        f"< {GOAL_MEMORY_MB} MB at 10⁴ and 10⁵ trials, SQLite and PostgreSQL",
        a_ok and full,
        "" if full else f"measured at {sizes} on {sorted(stores)} only",
    )

    b_text, _, _ = _first_text(before) if before else ("not measured", False, 0)
    a_text, a_ok, largest = _first_text(after)
    row(
        "time to first trial",
        b_text,
        a_text,
        "—",
        f"< {GOAL_FIRST_TRIAL_S:g} s at 100,000 trials",
        a_ok and largest >= 100_000,
        "" if largest >= 100_000 else f"largest suite measured: {largest:,}",
    )

    startup = after.get("startup") or {}
    inspect_import = (peers.get("inspectImport") or {}).get("importSeconds")
    heavy = startup.get("heavyImported")
    row(
        "start-up to first trial, 1 task",
        _fmt((before.get("startup") or {}).get("seconds"), " s"),
        f"{_fmt(startup.get('seconds'), ' s')} (heavy imported: {heavy or 'none'})",
        f"Inspect `import inspect_ai` alone {_fmt(inspect_import, ' s')}",
        f"< {GOAL_STARTUP_S} s",
        (_num(startup.get("seconds")) or 99) < GOAL_STARTUP_S,
    )

    whole_peers = peers.get("wholeProcess") or {}
    b_text = _whole_text(before, whole_peers)[0] if before else "not measured"
    a_text, a_ok = _whole_text(after, whole_peers)
    p_text = ", ".join(
        f"{name} {_fmt((whole_peers.get(name) or {}).get('processSeconds'), ' s')}"
        if "processSeconds" in (whole_peers.get(name) or {})
        else f"{name}: {(whole_peers.get(name) or {}).get('error', 'not run')}"
        for name in GOAL_WHOLE
    )
    trials = (after.get("wholeProcess") or {}).get("trials")
    row(
        f"{trials or 1000:,} trivial trials, log persisted, whole process (peer s / ours)",
        b_text,
        a_text,
        p_text,
        "≥ 40× Inspect, ≥ 15× promptfoo, ≥ 1× pydantic-evals",
        a_ok,
    )

    cpu_a, cpu_b = after.get("perTrialCpu") or {}, before.get("perTrialCpu") or {}

    def cpu_text(block: dict[str, Any]) -> str:
        text = (
            f"{_fmt(block.get('wopevalMs'), ' ms')} = {_fmt(block.get('ratio'), '×')} floor "
            f"({_fmt(block.get('floorMs'), ' ms')})"
        )
        if block.get("sameRowsRatio") is not None:
            text += (
                f"; {_fmt(block.get('sameRowsRatio'), '×')} the floor writing wopeval's own rows "
                f"({_fmt(block.get('sameRowsFloorMs'), ' ms')})"
            )
        return text

    row(
        "per-trial CPU vs stdlib floor loop",
        cpu_text(cpu_b) if before else "not measured",
        cpu_text(cpu_a),
        "—",
        f"≤ {GOAL_CPU_RATIO:g}× the floor",
        (_num(cpu_a.get("ratio")) or 99) <= GOAL_CPU_RATIO,
    )

    conc_a, conc_b = after.get("concurrency") or {}, before.get("concurrency") or {}
    conc_peers = peers.get("concurrency") or {}
    p_text = ", ".join(
        f"{name} {_fmt(block.get('efficiency'))} ({block.get('trials')} trials)"
        if "efficiency" in block
        else f"{name}: {block.get('error', 'not run')}"
        for name, block in conc_peers.items()
    )
    row(
        f"concurrency efficiency (ideal / measured), {conc_a.get('trials') or 2000:,} × 50 ms "
        "at 200",
        _fmt(conc_b.get("efficiency")) if before else "not measured",
        _fmt(conc_a.get("efficiency")),
        p_text or "not run",
        f"≥ {GOAL_EFFICIENCY}",
        (_num(conc_a.get("efficiency")) or 0) >= GOAL_EFFICIENCY,
    )

    b_text = (
        _grading_text(grading.get("before"), grading.get("after"))[0]
        if "before" in grading
        else "not measured"
    )
    a_text, a_ok, facts = _grading_text(grading.get("after"))
    peer = ((grading.get("after") or {}).get("peer") or {}) if isinstance(grading, dict) else {}
    row(
        "grading a trajectory, CPU",
        b_text,
        a_text,
        f"agentevals {peer.get('version') or peer.get('error') or 'n/a'}",
        f"< {GOAL_GRADE_MS:g} ms at 10,000 calls in every mode, linear (growth per 10× ≤ "
        f"{GROWTH_LINEAR:g}), ≥ {GOAL_GRADE_RATIO:g}× agentevals at 1,000 exact",
        a_ok,
        "" if facts.get("largest", 0) >= 10_000 else "10,000 calls not measured (--quick)",
    )

    keep_a, keep_b = after.get("keepalive") or {}, before.get("keepalive") or {}
    row(
        "HTTP request on a keep-alive connection (median)",
        _fmt(keep_b.get("medianMs"), " ms") if before else "not measured",
        _fmt(keep_a.get("medianMs"), " ms"),
        "—",
        f"~2 ms (met: ≤ {GOAL_KEEPALIVE_MS:g} ms)",
        (_num(keep_a.get("medianMs")) or 999) <= GOAL_KEEPALIVE_MS,
    )
    return rows


def markdown(rows: list[dict[str, Any]]) -> str:
    def cell(text: Any) -> str:
        return str(text).replace("|", "\\|").replace("\n", " ")

    lines = [
        "| measure | before | after | peers, same run | goal | met |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for r in rows:
        met = "yes" if r["met"] else "no" + (f" ({r['note']})" if r.get("note") else "")
        lines.append(
            "| "
            + " | ".join(cell(r[k]) for k in ("measure", "before", "after", "peers", "goal"))
            + f" | {cell(met)} |"
        )
    return "\n".join(lines)
