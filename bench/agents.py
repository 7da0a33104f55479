"""OpenAI-compatible agent benchmark: what wopeval adds per model turn and per tool call.

Both sides talk to the same scripted OpenAI-compatible server (wopeval.agents.scripted_openai,
a real loopback socket) through the same ``openai`` SDK, in the same invocation:

* ``direct``: a plain loop calling ``client.chat.completions.create`` and answering each tool
  call with a local dict (the floor: what any hand-written tool loop costs);
* ``wopeval``: the same conversations as trials of a suite, through
  :class:`~wopeval.agents.openai_compat.OpenAICompatAgent` — the gateway (fixtures), the events
  (SQLite store, every event durably appended), ``provider.usage`` per turn, grading, summary.

Two workloads (``TURNS`` tool-calling turns then an answer, per trial): 1 tool call per turn and
``WIDE`` parallel calls per turn. Overhead per tool call is the difference of the two workloads'
overheads over the extra calls; overhead per turn is the rest. Prints one JSON document.

Usage: ``python3 bench/agents.py [--trials N]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

# This file is named like the OpenAI Agents SDK's package (``agents``): take its directory off the
# path so that ``import agents`` never finds this script.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
sys.path.insert(0, str(_HERE.parent))

from wopeval.agents.definition import parse_definition  # noqa: E402
from wopeval.agents.openai_compat import OpenAICompatAgent  # noqa: E402
from wopeval.agents.scripted_openai import Reply, ScriptedOpenAI, call  # noqa: E402
from wopeval.engine.registry import Registry  # noqa: E402
from wopeval.engine.run import RunHandle, RunSettings  # noqa: E402
from wopeval.events.store import EventStore  # noqa: E402
from wopeval.service.runs import create_run_record, execute  # noqa: E402
from wopeval.suite import parse_suite  # noqa: E402
from wopeval.suite.models import AgentEvalSuite  # noqa: E402

TURNS = 4
WIDE = 4
AGENT_ID = "bench.agents.llm"


def _script(width: int) -> list[Reply]:
    turn = Reply(tool_calls=tuple(call("lookup", {"i": i}) for i in range(width)))
    return [turn] * TURNS + [Reply(content="ok")]


def _suite(trials: int, width: int) -> AgentEvalSuite:
    responses = [
        {"tool": "lookup", "args": {"i": i}, "argsMatch": "exact", "response": {"v": i}}
        for _ in range(TURNS)
        for i in range(width)
    ]
    task: dict[str, Any] = {
        "taskId": "t",
        "input": "go",
        "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}},
        "fixtures": {"onMiss": "fail", "toolResponses": responses},
    }
    doc = {
        "suiteId": "bench.evals.agents",
        "version": "1.0.0",
        "modes": ["golden"],
        "tasks": [task],
        "trials": {"count": trials},
    }
    return parse_suite(doc)


async def _direct(base_url: str, trials: int) -> float:
    import openai

    started = time.perf_counter()
    for _ in range(trials):
        async with openai.AsyncOpenAI(base_url=base_url, api_key="x", max_retries=0) as client:
            messages: list[Any] = [{"role": "user", "content": "go"}]
            tools = [{"type": "function", "function": {"name": "lookup", "parameters": {}}}]
            while True:
                done = await client.chat.completions.create(
                    model="m",
                    messages=messages,
                    tools=tools,  # type: ignore[arg-type]
                )
                message = done.choices[0].message
                if not message.tool_calls:
                    break
                messages.append(message.model_dump(exclude_none=True))
                for tc in message.tool_calls:
                    content = json.dumps({"v": json.loads(tc.function.arguments)["i"]})  # type: ignore[union-attr]
                    messages.append({"role": "tool", "tool_call_id": tc.id, "content": content})
    return time.perf_counter() - started


async def _wopeval(base_url: str, trials: int, width: int, store_path: str) -> float:
    registry = Registry()
    doc = {
        "kind": "openai-compatible",
        "model": "m",
        "baseUrl": base_url,
        "maxRetries": 0,
        "maxTurns": TURNS + 1,
    }
    registry.register_agent(AGENT_ID, OpenAICompatAgent(parse_definition(doc)))
    suite = _suite(trials, width)
    settings = RunSettings(concurrency=1)
    async with await EventStore.open(store_path) as store:
        started = time.perf_counter()
        record = await create_run_record(store, suite, AGENT_ID, settings)
        summary = await execute(
            store, RunHandle(record.run_id), suite, AGENT_ID, registry, settings
        )
        elapsed = time.perf_counter() - started
    assert summary is not None
    assert summary.passed, "the benchmark's trials must pass"
    return elapsed


def _measure(trials: int, width: int, tmp: str) -> dict[str, float]:
    steps = _script(width) * trials
    with ScriptedOpenAI(steps) as server:
        direct = anyio.run(_direct, server.base_url, trials)
    with ScriptedOpenAI(_script(width) * trials) as server:
        ours = anyio.run(_wopeval, server.base_url, trials, width, f"{tmp}/w{width}.db")
    return {"directS": direct, "wopevalS": ours, "ratio": ours / direct}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--trials", type=int, default=20)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        narrow = _measure(args.trials, 1, tmp)
        wide = _measure(args.trials, WIDE, tmp)
    turns = args.trials * (TURNS + 1)
    extra_calls = args.trials * TURNS * (WIDE - 1)
    over_narrow = narrow["wopevalS"] - narrow["directS"]
    over_wide = wide["wopevalS"] - wide["directS"]
    per_call = (over_wide - over_narrow) / extra_calls
    per_turn = (over_narrow - per_call * args.trials * TURNS) / turns
    doc = {
        "benchmark": "openai-compatible agent overhead vs the openai SDK in a direct loop",
        "trials": args.trials,
        "turnsPerTrial": TURNS + 1,
        "oneCallPerTurn": narrow,
        f"{WIDE}CallsPerTurn": wide,
        "overheadPerModelTurnMs": round(per_turn * 1000, 3),
        "overheadPerToolCallMs": round(per_call * 1000, 3),
        "peer": "direct openai SDK loop, same server, same run",
    }
    print(json.dumps(doc, indent=2))


if __name__ == "__main__":
    main()
