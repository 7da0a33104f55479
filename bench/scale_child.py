"""The child side of ``bench/scale.py``: each measurement runs here, in a fresh process.

``python3 bench/scale_child.py KIND ARGS…`` with ``PYTHONPATH`` naming the ``src`` tree under
test ("before" or "after"); prints one JSON line. Kinds:

* ``run URL TRIALS SLEEP CONCURRENCY``: a run of TRIALS trials (one task; an instant scripted
  agent making 3 fixtured tool calls, or with SLEEP > 0 an agent that only sleeps), its CPU,
  wall time, time to the first agent call and peak RSS;
* ``first URL TRIALS``: the same run, stopped (``os._exit``) at the first agent call;
* ``grade URL RUN``: ``regrade`` of a stored run, its CPU and peak RSS;
* ``floor PATH TRIALS ROWS``: the stdlib floor loop (``sqlite3``, the same tool lookups and
  the same number of JSON rows per trial, compact ones);
* ``floor-rows PATH TRIALS``: the floor loop writing the very rows a wopeval run of the
  benchmark suite writes (10 a trial: the same columns, ids, timestamps and payloads);
* ``scored URL RUN``: how many ``eval.scored`` each (taskId, trialIndex) of a run has;
* ``export URL RUN [OUT]`` / ``record URL RUN``: ``wopeval export --format otel`` (to OUT, or
  the null device) and ``wopeval record`` of a stored run, through the CLI, their wall time and
  peak RSS;
* ``host-summary URL RUN``: ``GET /runs/{id}/eval-summary`` of a stored run from the host app
  (in process, over the ASGI transport), its wall time and peak RSS, and whether the body is
  the stored summary;
* ``import PATH TRIALS``: ``wopeval import-otlp`` of that export against the benchmark suite of
  TRIALS trials, through the CLI, its wall time and peak RSS.

Every result carries ``wopevalFrom``: the directory ``wopeval`` was imported from, so a report
shows which tree each figure measured.
"""

from __future__ import annotations

import json
import os
import resource
import secrets
import sqlite3
import sys
import time
from collections import Counter
from typing import Any

CALLS = [{"tool": f"kb:tool-{i}", "args": {"i": i}} for i in range(3)]
HEAVY = ("wopeval.host", "numpy", "wopeval.exports", "wopeval.conformance")


def suite_doc(
    trials: int, script: dict[str, Any], fixtured: bool, tasks: int = 1
) -> dict[str, Any]:
    """The benchmark suite: ``tasks`` tasks × ``trials`` trials, graded ``exact`` on ``ok``."""
    rows: list[dict[str, Any]] = []
    for index in range(tasks):
        task: dict[str, Any] = {
            "taskId": "t" if tasks == 1 else f"t{index}",
            "input": script,
            "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}},
        }
        if fixtured:
            task["fixtures"] = {
                "onMiss": "fail",
                "toolResponses": [{"tool": c["tool"], "response": {"ok": True}} for c in CALLS],
            }
        rows.append(task)
    return {
        "suiteId": "core.bench.evals.scale",
        "version": "1.0.0",
        "modes": ["golden"],
        "tasks": rows,
        "trials": {"count": trials},
    }


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _wopeval_from() -> str | None:
    module = sys.modules.get("wopeval")
    path = getattr(module, "__file__", None)
    return os.path.dirname(os.path.dirname(path)) if path else None


def _tune_as_the_wopeval_process_does() -> None:
    """The collector as the ``wopeval`` command sets it for its own process (the library leaves
    an embedder's process alone; a tree from before that split tuned it inside each run)."""
    try:
        from wopeval.cli.startup import tune_collector
    except ImportError:
        return
    tune_collector()


def main(argv: list[str]) -> None:
    import anyio

    kind = argv[0]
    _tune_as_the_wopeval_process_does()
    if kind == "run":
        url, trials, sleep_s, concurrency = argv[1], int(argv[2]), float(argv[3]), int(argv[4])
        result = anyio.run(_run, url, trials, sleep_s, concurrency, False)
    elif kind == "first":
        result = anyio.run(_run, argv[1], int(argv[2]), 0.0, 16, True)
    elif kind == "grade":
        result = anyio.run(_grade, argv[1], argv[2])
    elif kind == "scored":
        result = anyio.run(_scored, argv[1], argv[2])
    elif kind in ("export", "record"):
        result = _cli_reads(kind, argv[1], argv[2], argv[3] if len(argv) > 3 else os.devnull)
    elif kind == "host-summary":
        result = anyio.run(_host_summary, argv[1], argv[2])
    elif kind == "import":
        result = _import_otlp(argv[1], int(argv[2]))
    elif kind == "floor":
        result = floor_loop(argv[1], int(argv[2]), int(argv[3]))
    elif kind == "floor-rows":
        result = floor_rows_loop(argv[1], int(argv[2]))
    else:
        raise SystemExit(f"unknown child {kind}")
    result["peakRssMb"] = round(_peak_mb(), 1)
    result["wopevalFrom"] = _wopeval_from()
    print(json.dumps(result), flush=True)


async def _run(url: str, trials: int, sleep_s: float, concurrency: int, stop_at_first: bool) -> Any:
    import anyio

    from wopeval.engine.registry import SCRIPTED_AGENT_ID, Registry
    from wopeval.engine.run import RunHandle, RunSettings
    from wopeval.events.store import EventStore
    from wopeval.service.runs import create_run_record, execute
    from wopeval.suite import parse_suite

    started = time.perf_counter()
    first: list[float] = []
    registry = Registry()
    scripted = registry.resolve(SCRIPTED_AGENT_ID)
    marks: dict[str, float] = {}

    async def agent(task_input: Any, ctx: Any) -> Any:
        if not first:
            first.append(time.perf_counter())
            if stop_at_first:
                print(json.dumps({
                    "trials": trials,
                    "firstTrialSeconds": round(first[0] - marks["execute"], 4),
                    "setupSeconds": round(marks["execute"] - started, 4),
                    "peakRssMb": round(_peak_mb(), 1),
                    "wopevalFrom": _wopeval_from(),
                }), flush=True)  # fmt: skip
                os._exit(0)
        if sleep_s:
            await anyio.sleep(sleep_s)
            return "ok"
        return await scripted(task_input, ctx)

    registry.register_agent("bench.agent", agent)
    script = {} if sleep_s else {"calls": CALLS, "output": "ok"}
    suite = parse_suite(suite_doc(trials, script, fixtured=not sleep_s))
    store = await EventStore.open(url)
    settings = RunSettings(concurrency=concurrency)
    record = await create_run_record(store, suite, "bench.agent", settings)
    cpu, wall = time.process_time(), time.perf_counter()
    marks["execute"] = wall
    summary = await execute(
        store, RunHandle(record.run_id), suite, "bench.agent", registry, settings
    )
    cpu, end = time.process_time() - cpu, time.perf_counter()
    rows = await store.last_sequence(record.run_id) + 1
    await store.close()
    if summary is None or not summary.passed:
        raise SystemExit("the benchmark run must complete and pass")
    return {
        "runId": record.run_id,
        "trials": trials,
        "wallSeconds": round(end - wall, 3),
        "cpuSeconds": round(cpu, 3),
        "cpuMsPerTrial": round(1000 * cpu / trials, 4),
        "firstTrialSeconds": round(first[0] - wall, 4),
        "eventRowsPerTrial": round(rows / trials, 2),
        "concurrency": concurrency,
        "measuredOverIdeal": round((end - wall) / (trials * sleep_s / concurrency), 3)
        if sleep_s
        else None,
    }


async def _grade(url: str, run_id: str) -> Any:
    from wopeval.events.store import EventStore
    from wopeval.service.runs import regrade

    store = await EventStore.open(url)
    cpu, wall = time.process_time(), time.perf_counter()
    graded = await regrade(store, run_id)
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    await store.close()
    return {
        "reproducesStored": graded.reproduces_stored,
        "cpuSeconds": round(cpu, 3),
        "wallSeconds": round(wall, 3),
    }


def _cli_reads(kind: str, url: str, run_id: str, otlp_out: str) -> dict[str, Any]:
    """``wopeval export --format otel`` (to ``otlp_out``) or ``wopeval record`` of the run, in
    this process."""
    import tempfile

    from wopeval.cli.app import app

    with tempfile.TemporaryDirectory() as tmp:
        out = otlp_out if kind == "export" else os.path.join(tmp, "recorded.json")
        args = ["export", run_id, "--format", "otel"] if kind == "export" else ["record", run_id]
        wall = time.perf_counter()
        code = _exit_code(lambda: app([*args, "--store", url, "-o", out], standalone_mode=False))
        if code not in (0, None):
            return {"error": f"wopeval {kind} exited {code}"}
        return {"wallSeconds": round(time.perf_counter() - wall, 3)}


async def _host_summary(url: str, run_id: str) -> dict[str, Any]:
    """The host's eval summary of a stored run, read by a client of the ``local`` tenant."""
    import httpx

    from wopeval.events.store import EventStore
    from wopeval.host.app import create_app
    from wopeval.host.config import HostConfig

    key = secrets.token_urlsafe(32)
    config = HostConfig.model_validate({
        "apiKeys": [{"key": key, "tenant": run_id.split("/", 1)[0]}],
        "builtinSuites": False, "resumeInterrupted": False,
    })  # fmt: skip
    app = create_app(config, store_url=url)
    wall = time.perf_counter()
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://host.bench") as client:
            path = f"/runs/{run_id.replace('/', '~2F')}/eval-summary"  # the projected id
            headers = {"Authorization": f"Bearer {key}", "OpenWOP-Version": "2.0"}
            response = await client.get(path, headers=headers)
    wall = time.perf_counter() - wall
    store = await EventStore.open(url)
    record = await store.get_run(run_id)
    await store.close()
    if response.status_code != 200:
        return {"error": f"GET eval-summary answered {response.status_code}"}
    return {
        "wallSeconds": round(wall, 3),
        "isStored": record is not None and response.json() == record.summary,
    }


def _exit_code(command: Any) -> Any:
    """A click command's exit code: without ``standalone_mode`` it returns it (typer.Exit's
    code), or raises SystemExit."""
    try:
        return command()
    except SystemExit as exc:
        return exc.code


def _import_otlp(path: str, trials: int) -> dict[str, Any]:
    """``wopeval import-otlp`` of a run's OTLP export against the benchmark suite, in this
    process. Its trials fail (the export is content-free: no output), so it exits 1."""
    import contextlib
    import tempfile

    from wopeval.cli.app import app

    with tempfile.TemporaryDirectory() as tmp:
        suite = os.path.join(tmp, "suite.json")
        with open(suite, "w") as out:
            json.dump(suite_doc(trials, {"calls": CALLS, "output": "ok"}, fixtured=True), out)
        wall = time.perf_counter()
        args = ["import-otlp", path, "--suite", suite, "--json"]
        with open(os.devnull, "w") as null, contextlib.redirect_stdout(null):
            code = _exit_code(lambda: app(args, standalone_mode=False))
        if code not in (0, 1, None):
            return {"error": f"wopeval import-otlp exited {code}"}
        return {"wallSeconds": round(time.perf_counter() - wall, 3)}


async def _scored(url: str, run_id: str) -> Any:
    """``eval.scored`` per (taskId, trialIndex), read back page by page from the store."""
    from wopeval.events.store import EventStore

    store = await EventStore.open(url)
    counts: Counter[tuple[str, int]] = Counter()
    labels: Counter[str] = Counter()
    after = -1
    while True:
        page = await store.events(run_id, after_sequence=after, limit=5000)
        if not page:
            break
        for event in page:
            if event.type == "eval.scored":
                payload = event.payload if isinstance(event.payload, dict) else {}
                counts[(payload["taskId"], payload.get("trialIndex") or 0)] += 1
                labels[str(payload.get("scoreLabel"))] += 1
        after = page[-1].sequence
    record = await store.get_run(run_id)
    await store.close()
    return {
        "status": getattr(record, "status", None),
        "pairs": len(counts),
        "scoredTimes": sorted(set(counts.values())),
        "scoreLabels": dict(labels),
    }


def floor_loop(path: str, trials: int, rows_per_trial: int) -> dict[str, Any]:
    """The stdlib floor: the same tool lookups and the same rows, ``sqlite3`` with WAL."""
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute(
        "CREATE TABLE events (run_id TEXT, sequence INTEGER, event_id TEXT, type TEXT, "
        "timestamp TEXT, causation_id TEXT, payload TEXT, PRIMARY KEY (run_id, sequence))"
    )
    fixtures = {c["tool"]: {"ok": True} for c in CALLS}
    cpu = time.process_time()
    sequence, pending = 0, []
    for trial in range(trials):
        root = secrets.token_hex(8)
        outputs = [fixtures[c["tool"]] for c in CALLS]
        for row in range(rows_per_trial):
            payload = {"trial": trial, "row": row, "inputs": CALLS[row % 3]["args"]}
            if row < len(outputs):
                payload["outcome"] = outputs[row]
            pending.append((
                "r", sequence, secrets.token_hex(8), "agent.tool-called",
                time.strftime("%Y-%m-%dT%H:%M:%SZ"), root, json.dumps(payload),
            ))  # fmt: skip
            sequence += 1
        if len(pending) >= 100:
            db.executemany("INSERT INTO events VALUES (?,?,?,?,?,?,?)", pending)
            db.commit()
            pending = []
    db.executemany("INSERT INTO events VALUES (?,?,?,?,?,?,?)", pending)
    db.commit()
    cpu = time.process_time() - cpu
    return {"trials": trials, "cpuMsPerTrial": round(1000 * cpu / trials, 4)}


_EVENTS_DDL = (
    "CREATE TABLE events (run_id TEXT NOT NULL, sequence BIGINT NOT NULL, event_id TEXT NOT NULL,"
    " type TEXT NOT NULL, payload TEXT NOT NULL, timestamp TEXT NOT NULL, schema_version INTEGER"
    " NOT NULL, node_id TEXT, engine_version INTEGER, causation_id TEXT,"
    " PRIMARY KEY (run_id, sequence))"
)


def floor_rows_loop(path: str, trials: int) -> dict[str, Any]:
    """The stdlib floor writing wopeval's own rows, as tight as a plain loop gets.

    For each trial, the 10 events a run of the benchmark suite records (invocation started,
    3 tool calls and returns served from the fixtures, the decision, invocation completed, the
    score), with the same columns, 26-character ids, millisecond timestamps and JSON payloads
    (the same keys and values): ``sqlite3`` with WAL, a commit per 100 rows. Ids are a counter
    behind a random prefix, a trial's events share its timestamp, payloads are encoded by one
    prebuilt encoder and nothing is copied; what it leaves out is what wopeval adds: validation,
    isolation, grading and the log's guarantees."""
    db = sqlite3.connect(path)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute(_EVENTS_DDL)
    insert = "INSERT INTO events VALUES (?,?,?,?,?,?,?,?,?,?)"
    encode = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False).encode
    fixtures = {c["tool"]: (index, {"ok": True}) for index, c in enumerate(CALLS)}
    run_id = "local/r" + secrets.token_hex(14)[:27].upper()
    prefix = secrets.token_hex(8).upper()  # 16 characters, then a 10-digit counter
    agent = "bench.agent"
    cpu = time.process_time()
    sequence, serial, pending = 0, 0, []
    for trial in range(trials):
        t = time.time()
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t * 1000) % 1000:03d}Z"
        ids = [f"{prefix}{n:010X}" for n in range(serial, serial + 14)]
        serial += 14
        root, invocation = ids[0], "inv-" + ids[1]
        rows: list[tuple[str, dict[str, Any]]] = [
            ("agent.invocation-started", {
                "invocationId": invocation, "agentId": agent, "source": "run-api",
                "memoryBound": False, "x-wopeval-taskId": "t", "x-wopeval-trialIndex": trial,
            }),
        ]  # fmt: skip
        for number, call in enumerate(CALLS):
            index, response = fixtures[call["tool"]]
            base = {"agentId": agent, "toolName": call["tool"], "callId": "call-" + ids[2 + number]}
            rows.append(("agent.tool-called", {**base, "inputs": call["args"]}))
            rows.append(("agent.tool-returned", {
                **base, "outcome": response, "status": "ok",
                "x-wopeval-fixture": "served", "x-wopeval-fixtureIndex": index,
            }))  # fmt: skip
        rows.append(("agent.decided", {"agentId": agent, "decision": "ok"}))
        rows.append(("agent.invocation-completed", {
            "invocationId": invocation, "agentId": agent, "outcome": "completed",
        }))  # fmt: skip
        rows.append(("eval.scored", {
            "taskId": "t", "score": 1.0, "passed": True, "costUsd": 0.0, "latencyMs": 0,
            "trialIndex": trial, "scoreLabel": "pass", "evaluatorType": "deterministic",
        }))  # fmt: skip
        for index, (type_, payload) in enumerate(rows):
            pending.append((
                run_id, sequence, root if index == 0 else ids[4 + index], type_, encode(payload),
                stamp, 1, None, None, None if index == 0 else root,
            ))  # fmt: skip
            sequence += 1
        if len(pending) >= 100:
            db.executemany(insert, pending)
            db.commit()
            pending = []
    db.executemany(insert, pending)
    db.commit()
    cpu = time.process_time() - cpu
    return {
        "trials": trials,
        "rowsPerTrial": sequence / trials,
        "cpuMsPerTrial": round(1000 * cpu / trials, 4),
    }


if __name__ == "__main__":
    main(sys.argv[1:])
