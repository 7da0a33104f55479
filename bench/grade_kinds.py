"""Stored runs of every kind the CLI makes, and the check that ``wopeval grade`` reproduces each
stored summary byte for byte.

Each kind is a list of CLI invocations only (``wopeval run``, ``--resume``, ``--baseline``,
``--shard`` + ``merge``, ``export`` + ``import-otlp``), so any tree's CLI can make its runs:
``tests/cli/test_grade_bytes.py`` runs them in process on this tree, ``bench/grade_across.py``
makes them with another tree's CLI and grades them with this one. The check reads the summary's
stored text from the store's ``runs`` table itself (not through wopeval's reader) and compares it
with what ``wopeval grade RUN --json`` prints.

Placeholders in the arguments: ``{store}``, ``{dir}`` (where the suites are written),
``{agent_url}`` / ``{judge_url}`` (scripted OpenAI-compatible servers, :func:`servers`),
``{run}`` (the last run id a step printed).
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SCRIPTED = "core.conformance.agents.scripted"
ROOT = Path(__file__).resolve().parent.parent
QUICKSTART = ROOT / "examples" / "quickstart" / "suite.yaml"

# (argv) -> (exit code, stdout): the CLI of one tree, in process or as a subprocess
Cli = Callable[[Sequence[str]], tuple[int, str]]
# (store URL, suite path) -> the id of a run created and left "running", as a killed process
# leaves it
Unfinished = Callable[[str, str], str]


@dataclass(frozen=True)
class Kind:
    name: str
    steps: tuple[tuple[str, ...], ...]
    suites: dict[str, dict[str, Any]] = field(default_factory=dict)
    unfinished: str | None = None  # a suite file: a run created, never executed, is {run}
    servers: bool = False  # {agent_url} and {judge_url} are needed
    log_check: tuple[tuple[str, ...], tuple[str, ...]] | None = None  # two argv, same --json
    options: tuple[str, ...] = ()  # ``run`` options the kind needs (an older CLI may lack them)


def _task(task_id: str, script: dict[str, Any], expected: dict[str, Any], **extra: Any) -> Any:
    return {"taskId": task_id, "input": script, "expected": expected, **extra}


def _suite(suite_id: str, tasks: list[Any], **extra: Any) -> dict[str, Any]:
    return {"suiteId": f"core.test.evals.{suite_id}", "version": "1.0.0",
            "targetAgentId": SCRIPTED, "modes": ["golden"], "tasks": tasks, **extra}  # fmt: skip


OK = {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}}
LOOKUP = {"tool": "crm:lookup-order", "args": {"orderId": "A-1"}}
REFUND = {"tool": "billing:refund", "args": {"orderId": "A-1", "amountMinor": 4200}}
FIXTURES = {"onMiss": "fail", "toolResponses": [
    {"tool": "crm:lookup-order", "args": {"orderId": "A-1"}, "argsMatch": "subset",
     "response": {"status": "damaged", "totalMinor": 4200}},
    {"tool": "billing:refund", "args": {"orderId": "A-1"}, "argsMatch": "subset",
     "response": {"refundId": "rf-1"}},
]}  # fmt: skip


def _path(mode: str, calls: list[Any], **extra: Any) -> dict[str, Any]:
    return {"match": mode, "calls": calls, **extra}


def _expect_path(mode: str, *, output: Any = "ok", **extra: Any) -> dict[str, Any]:
    strict = [{**LOOKUP, "argsMatch": "exact"}, {**REFUND, "argsMatch": "subset"}]
    return {"kind": "golden", "match": {"strategy": "exact", "value": output},
            "trajectory": _path(mode, strict, **extra)}  # fmt: skip


PLAIN = _suite("grade-plain", [_task("t", {"output": "ok"}, OK)])

# Adaptive trials (x-wopeval-adaptive): a clear pass and a clear failure stop early, a task
# passing 3 trials in 4 runs on, one task keeps a fixed count (its own minTrials).
_MIXED = {"output": "ok", "trials": {str(i): {"output": "no"} for i in range(0, 12, 4)}}
ADAPTIVE = _suite(
    "grade-adaptive",
    [_task("clear-pass", {"output": "ok"}, OK), _task("clear-fail", {"output": "no"}, OK),
     _task("borderline", _MIXED, OK),
     _task("own-min", {"output": "ok"}, OK,
           **{"x-wopeval-adaptive": {"rule": "sprt", "alpha": 0.1, "minTrials": 9}})],
    trials={"count": 12, "k": 1}, thresholds={"passScore": 0.8},
    **{"x-wopeval-adaptive": {"rule": "sprt", "alpha": 0.1, "indifference": 0.15,
                              "minTrials": 1}},
)  # fmt: skip

# Every trajectory mode, argument matching, fail-closed misses, forbidden calls, memory, usage
# and per-trial differences (so pass@k, pass^k and the mean rule have something to count).
TRAJECTORIES = _suite(
    "grade-trajectories",
    [
        _task("exact", {"calls": [LOOKUP, REFUND], "output": {"refund": "approved", "n": 2}},
              {**_expect_path("exact"), "match": {"strategy": "json-match",
                                                  "value": {"n": 2, "refund": "approved"}}},
              fixtures=FIXTURES),
        _task("in-order-flaky", {"calls": [LOOKUP, REFUND], "output": "ok",
                                 "trials": {"1": {"calls": [REFUND, LOOKUP]}}},
              _expect_path("in-order"), fixtures=FIXTURES),
        _task("any-order", {"calls": [REFUND, LOOKUP], "output": "ok"},
              _expect_path("any-order"), fixtures=FIXTURES),
        _task("subset-forbidden", {"calls": [LOOKUP], "output": "ok", "trials": {
                  "2": {"calls": [LOOKUP, {"tool": "billing:refund-all"}]}}},
              {"kind": "trajectory", "trajectory": _path(
                  "subset", [{"tool": "crm:lookup-order"}], forbidden=["billing:refund-all"])},
              fixtures={"onMiss": "fail", "toolResponses": [
                  {"tool": "crm:lookup-order", "response": {"status": "delivered"}},
                  {"tool": "billing:refund-all", "response": {"refunded": 9}}]}),
        _task("fixture-miss", {"calls": [LOOKUP, {"tool": "crm:unlisted"}], "output": "ok"},
              _expect_path("in-order"), fixtures=FIXTURES),
        _task("wrong-args", {"calls": [{**LOOKUP, "args": {"orderId": 7}}, REFUND], "output": "ok"},
              _expect_path("exact"), fixtures={"onMiss": "fail", "toolResponses": [
                  {"tool": "crm:lookup-order", "response": {}},
                  {"tool": "billing:refund", "response": {}}]}),
        _task("memory", {"recall": "tier", "remember": [{"key": "seen", "value": True}]},
              {"kind": "golden", "match": {"strategy": "exact", "value": {"recalled": "gold"}}},
              fixtures={"memorySeed": [{"key": "tier", "value": "gold"}]}),
        _task("usage", {"output": "a longer answer", "usage": [
                  {"provider": "mock", "model": "m", "inputTokens": 120, "outputTokens": 30,
                   "costEstimateUsd": 0.0003}]},
              {"kind": "golden", "match": {"strategy": "contains", "value": "answer"}}),
    ],
    trials={"count": 3, "k": 2, "passRule": "mean"},
    thresholds={"passScore": 0.5, "maxCostUsd": 1.0, "maxP95LatencyMs": 600000},
)  # fmt: skip

# A run-wide cost ceiling that stops trials (skipped-budget), with the rule that any trial passes.
COSTLY = _suite(
    "grade-costly",
    [_task("costly", {"output": "ok", "usage": [{"provider": "mock", "model": "m",
           "inputTokens": 10, "outputTokens": 5, "costEstimateUsd": 0.01}]}, OK)],
    trials={"count": 5, "passRule": "any"},
)  # fmt: skip

MANY_CALLS = _suite("grade-many-calls", [
    _task("three", {"calls": [LOOKUP] * 3, "output": "ok"}, OK,
          fixtures={"toolResponses": [{"tool": "crm:lookup-order", "response": {}}]}),
])  # fmt: skip

# A model agent (OpenAI-compatible, scripted server) calling a fixtured tool, and an LLM judge.
MODEL = {
    "suiteId": "core.test.evals.grade-model", "version": "1.0.0", "modes": ["golden", "rubric"],
    "trials": {"count": 2},
    "tasks": [
        {"taskId": "looks-up", "input": "where is order A-1?",
         "expected": {"kind": "golden", "match": {"strategy": "contains", "value": "damaged"},
                      "trajectory": {"match": "exact", "calls": [{
                          "tool": "lookup_order", "args": {"orderId": "A-1"}, "argsMatch": "exact"
                      }]}},
         "fixtures": {"onMiss": "fail", "toolResponses": [
             {"tool": "lookup_order", "response": {"status": "damaged"}}]}},
        {"taskId": "apology", "input": "My parcel is late.",
         "expected": {"kind": "rubric", "rubric": [{"criterion": "apologises", "weight": 0.75},
                                                   {"criterion": "gives a date", "weight": 0.25}]}},
    ],
}  # fmt: skip


# A scripted user (x-wopeval-user): a conversation played to its stop, a user miss, max-turns.
_USER = {"kind": "scripted", "replies": [
    {"when": {"literal": "ref?"}, "reply": "ABC"},
    {"when": {"regex": "^bye"}, "reply": "ok", "stop": True}]}  # fmt: skip
CONVERSATION = _suite(
    "grade-conversation",
    [
        {**_task("talks", {"calls": [{"ask": "ref?"}, {"ask": "bye now"}], "output": "ok"}, OK),
         "x-wopeval-user": _USER},
        {**_task("off-script", {"calls": [{"ask": "age?"}, {"ask": "ref?"}], "output": "ok"}, OK),
         "x-wopeval-user": _USER},
        {**_task("too-long", {"calls": [{"ask": "ref?"}] * 3, "output": "ok"}, OK),
         "x-wopeval-user": {**_USER, "order": "keyed", "maxTurns": 1}},
    ],
)  # fmt: skip

RUN = ("run", "{dir}/trajectories.json", "--store", "{store}", "--json")
SHARDS = tuple((*RUN, "--shard", f"{i}/2", "--group", "g") for i in range(2))

KINDS: tuple[Kind, ...] = (
    Kind("plainest", (("run", "{dir}/plain.json", "--store", "{store}", "--json"),),
         {"plain.json": PLAIN}),
    Kind("quickstart", (("run", str(QUICKSTART), "--store", "{store}", "--json"),)),
    Kind("trajectories", (RUN,), {"trajectories.json": TRAJECTORIES}),
    Kind("cost-ceiling", (("run", "{dir}/costly.json", "--max-cost", "0.025", "--concurrency",
                           "1", "--store", "{store}", "--json"),), {"costly.json": COSTLY}),
    Kind("model-and-judge", (("run", "{dir}/model.json", "--agent-file", "{dir}/agent.json",
                              "--judge-model", "judge-m", "--judge-base-url", "{judge_url}",
                              "--store", "{store}", "--json"),),
         {"model.json": MODEL}, servers=True),
    Kind("resumed", (("run", "--resume", "{run}", "--store", "{store}", "--json"),),
         {"trajectories.json": TRAJECTORIES}, unfinished="{dir}/trajectories.json"),
    Kind("regression", (RUN, (*RUN, "--baseline", "{run}"),), {"trajectories.json": TRAJECTORIES}),
    Kind("shards-merged", (*SHARDS, ("merge", "--group", "g", "--store", "{store}", "--json")),
         {"trajectories.json": TRAJECTORIES}),
    Kind("otlp-import", (RUN, ("export", "{run}", "-f", "otel", "-o", "{dir}/otlp.jsonl",
                               "--store", "{store}")),
         {"trajectories.json": TRAJECTORIES},
         log_check=(("import-otlp", "{dir}/otlp.jsonl", "--suite", "{dir}/trajectories.json",
                     "--events-out", "{dir}/events.jsonl", "--json"),
                    ("grade-log", "{dir}/events.jsonl", "--suite", "{dir}/trajectories.json",
                     "--json"))),
    Kind("max-tool-calls", (("run", "{dir}/many.json", "--max-tool-calls", "2", "--store",
                             "{store}", "--json"),), {"many.json": MANY_CALLS},
         options=("--max-tool-calls",)),
    Kind("gate", ((*RUN, "--gate", "every-task"),), {"trajectories.json": TRAJECTORIES},
         options=("--gate",)),
    Kind("adaptive", (("run", "{dir}/adaptive.json", "--store", "{store}", "--json"),),
         {"adaptive.json": ADAPTIVE}),
    Kind("adaptive-resumed", (("run", "--resume", "{run}", "--store", "{store}", "--json"),),
         {"adaptive.json": ADAPTIVE}, unfinished="{dir}/adaptive.json"),
    Kind("conversation", (("run", "{dir}/talk.json", "--store", "{store}", "--json"),),
         {"talk.json": CONVERSATION}),
)  # fmt: skip


def write_suites(kind: Kind, directory: Path, agent_url: str = "") -> None:
    for name, doc in kind.suites.items():
        (directory / name).write_text(json.dumps(doc))
    if kind.servers:
        agent = {"kind": "openai-compatible", "model": "agent-m", "baseUrl": agent_url}
        (directory / "agent.json").write_text(json.dumps(agent))


def _model_step(body: dict[str, Any]) -> Any:
    from wopeval.agents.scripted_openai import Reply, call

    messages = body.get("messages") or []
    said = " ".join(str(m.get("content")) for m in messages if m.get("role") == "user")
    if "late" in said:
        return Reply(content="Sorry, it is late.", prompt_tokens=12, completion_tokens=6)
    if any(m.get("role") == "tool" for m in messages):
        return Reply(content="Order A-1 arrived damaged.", prompt_tokens=40, completion_tokens=8)
    return Reply(tool_calls=(call("lookup_order", {"orderId": "A-1"}),), prompt_tokens=30)


@contextmanager
def servers() -> Iterator[dict[str, str]]:
    """The scripted agent model and judge a ``servers`` kind runs against (this process)."""
    from wopeval.agents.scripted_openai import Reply, ScriptedOpenAI

    verdict = Reply(content=json.dumps({"c1": 1, "c2": 0.5}), prompt_tokens=500,
                    completion_tokens=50)  # fmt: skip
    with (
        ScriptedOpenAI([_model_step], repeat_last=True) as agent,
        ScriptedOpenAI([verdict], repeat_last=True) as judge,
    ):
        yield {"agent_url": agent.base_url, "judge_url": judge.base_url}


def _fill(argv: Sequence[str], values: dict[str, str]) -> list[str]:
    return [arg.format(**values) if "{" in arg else arg for arg in argv]


def last_json(stdout: str) -> dict[str, Any]:
    lines = [line for line in stdout.splitlines() if line.startswith("{")]
    doc: dict[str, Any] = json.loads(lines[-1]) if lines else {}
    return doc


@dataclass
class Made:
    """What one kind's steps left: the run ids they printed, each step's exit code, and the two
    outputs of a ``log_check``."""

    runs: list[str] = field(default_factory=list)
    exits: list[int] = field(default_factory=list)
    logs: tuple[str, str] | None = None


def make(kind: Kind, cli: Cli, store: str, directory: Path, *, unfinished: Unfinished,
         urls: dict[str, str] | None = None) -> Made:  # fmt: skip
    values = {"store": store, "dir": str(directory), "run": "", **(urls or {})}
    made = Made()
    if kind.unfinished is not None:
        values["run"] = unfinished(store, kind.unfinished.format(**values))
        made.runs.append(values["run"])
    for argv in kind.steps:
        code, out = cli(_fill(argv, values))
        made.exits.append(code)
        run_id = last_json(out).get("runId")
        if isinstance(run_id, str):
            values["run"] = run_id
            if run_id not in made.runs:
                made.runs.append(run_id)
    if kind.log_check is not None:
        first, second = (cli(_fill(argv, values))[1] for argv in kind.log_check)
        made.logs = (first, second)
    return made


def stored_summary(store: str, run_id: str) -> str | None:
    """The summary's text exactly as the store holds it (``runs.summary``), read with the
    database's own driver."""
    if store.startswith(("postgresql://", "postgres://")):
        import asyncpg

        async def read() -> Any:
            conn = await asyncpg.connect(store)
            try:
                return await conn.fetchval("SELECT summary FROM runs WHERE run_id = $1", run_id)
            finally:
                await conn.close()

        value: Any = asyncio.run(read())
    else:
        with sqlite3.connect(store) as db:
            row = db.execute("SELECT summary FROM runs WHERE run_id = ?", (run_id,)).fetchone()
        value = row[0] if row else None
    return value if isinstance(value, str) else None


def grade_bytes(cli: Cli, store: str, run_id: str) -> dict[str, Any]:
    """``wopeval grade RUN --json`` against the stored summary's bytes: ``same`` when the
    printed line is exactly the stored text (and its newline)."""
    stored = stored_summary(store, run_id)
    code, out = cli(["grade", run_id, "--store", store, "--json"])
    result: dict[str, Any] = {"runId": run_id, "exit": code, "storedBytes": None, "same": False}
    if stored is None:
        return result
    result["storedBytes"] = len(stored.encode())
    result["same"] = out == stored + "\n"
    if not result["same"]:
        result["difference"] = first_difference(stored, out.rstrip("\n"))
    return result


def first_difference(a: str, b: str) -> dict[str, Any]:
    """Where two texts part (summaries are content-free, so the context can be shown)."""
    at = next(
        (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
    )
    return {
        "at": at,
        "stored": a[max(0, at - 60) : at + 60],
        "graded": b[max(0, at - 60) : at + 60],
    }


async def unfinished_run(store_url: str, suite_path: str) -> str:
    """A run recorded as created and running, never executed (as ``kill -9`` leaves it)."""
    from wopeval.engine.registry import Registry
    from wopeval.engine.run import RunSettings
    from wopeval.events.store import EventStore
    from wopeval.service.runs import RunService
    from wopeval.suite import load_suite

    async with await EventStore.open(store_url) as store:
        suite = load_suite(Path(suite_path))
        service = RunService(store, Registry())
        plan = await service.plan(suite, suite.targetAgentId or "", RunSettings())
        record = await service.create(plan)
        await store.set_status(record.run_id, "running")
        return record.run_id


if __name__ == "__main__":  # one unfinished run, for another tree: ``grade_kinds.py STORE SUITE``
    import sys

    import anyio

    print(anyio.run(unfinished_run, sys.argv[1], sys.argv[2]))
