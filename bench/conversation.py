"""Conversation benchmark: the cost of a scripted user's turn, and concurrency with many turns.

Prints one JSON document (the SQLite event store included, every event durably appended):

* ``perTurn``: trials of the scripted agent saying nothing, making 10 fixtured tool calls, and
  sending 10 messages to a scripted user (``x-wopeval-user``), interleaved repeats; the cost of
  one user turn and of one tool call over the empty trial, and their ratio (the peer: the
  gateway's fixture door in the same run);
* ``concurrency``: conversations of 10 turns, the agent sleeping 100 ms a turn (a fast model),
  at concurrency 100, against single-turn trials sleeping 1 s once: measured wall over
  ideal for each, and the conversations' efficiency as a fraction of the single-turn run's
  (the issue's floor: 0.9).

Usage: ``python3 bench/conversation.py [--quick]``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from statistics import median
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.engine import timed_run
from wopeval.engine.agent import AgentContext
from wopeval.engine.registry import SCRIPTED_AGENT_ID
from wopeval.suite import parse_suite
from wopeval.suite.models import AgentEvalSuite

TURNS = 10
OK = {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}}
USER = {
    "kind": "scripted",
    "order": "keyed",
    "maxTurns": TURNS,
    "replies": [{"when": {"literal": f"q{i}"}, "reply": f"a{i}"} for i in range(TURNS)],
}


def _suite(trials: int, task_input: dict[str, Any], **extra: Any) -> AgentEvalSuite:
    task = {"taskId": "t", "input": task_input, "expected": OK, **extra}
    doc = {"suiteId": "core.bench.evals.talk", "version": "1.0.0", "modes": ["golden"],
           "tasks": [task], "trials": {"count": trials}}  # fmt: skip
    return parse_suite(doc)


def _suites(trials: int) -> dict[str, AgentEvalSuite]:
    calls = [{"tool": f"kb:t{i}", "args": {"i": i}} for i in range(TURNS)]
    fixtures = {"onMiss": "fail", "toolResponses": [{"tool": c["tool"], "response": {}}
                                                     for c in calls]}  # fmt: skip
    asks = [{"ask": f"q{i}"} for i in range(TURNS)]
    return {
        "empty": _suite(trials, {"output": "ok"}),
        "toolCalls": _suite(trials, {"calls": calls, "output": "ok"}, fixtures=fixtures),
        "userTurns": _suite(trials, {"calls": asks, "output": "ok"}, **{"x-wopeval-user": USER}),
    }


async def _talker(task_input: Any, ctx: AgentContext) -> Any:
    for i in range(TURNS):
        await anyio.sleep(task_input["sleep"] / TURNS)
        await ctx.ask_user(f"q{i}")
    return "ok"


async def _sleeper(task_input: Any, ctx: AgentContext) -> Any:
    await anyio.sleep(task_input["sleep"])
    return "ok"


async def _timed(suite: AgentEvalSuite, agent_id: str, concurrency: int) -> float:
    return await timed_run(
        suite, agent_id, concurrency, {"bench.talker": _talker, "bench.sleeper": _sleeper}
    )


def per_turn(trials: int, repeats: int) -> dict[str, Any]:
    suites = _suites(trials)
    seconds: dict[str, list[float]] = {name: [] for name in suites}
    for _ in range(repeats):  # interleaved, so load drifts touch every workload alike
        for name, suite in suites.items():
            seconds[name].append(anyio.run(_timed, suite, SCRIPTED_AGENT_ID, 16))
    mid = {name: median(values) for name, values in seconds.items()}
    turn_us = (mid["userTurns"] - mid["empty"]) / (trials * TURNS) * 1e6
    call_us = (mid["toolCalls"] - mid["empty"]) / (trials * TURNS) * 1e6
    return {
        "trials": trials,
        "repeats": repeats,
        "secondsMedian": mid,
        "secondsAll": seconds,
        "userTurnMicroseconds": turn_us,
        "toolCallMicroseconds": call_us,
        "userTurnOverToolCall": turn_us / call_us if call_us > 0 else None,
    }


def concurrency(trials: int, sleep_s: float, level: int) -> dict[str, Any]:
    ideal = trials * sleep_s / level
    talk = _suite(trials, {"sleep": sleep_s}, **{"x-wopeval-user": USER})
    single = _suite(trials, {"sleep": sleep_s})
    talked = anyio.run(_timed, talk, "bench.talker", level)
    slept = anyio.run(_timed, single, "bench.sleeper", level)
    efficiency = {"conversations": ideal / talked, "singleTurn": ideal / slept}
    return {
        "trials": trials,
        "concurrency": level,
        "idealSeconds": ideal,
        "seconds": {"conversations": talked, "singleTurn": slept},
        "efficiency": efficiency,
        "conversationsOverSingleTurn": efficiency["conversations"] / efficiency["singleTurn"],
        "floor": 0.9,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer trials and repeats")
    args = parser.parse_args()
    load_before = os.getloadavg()
    result = {
        "perTurn": per_turn(100 if args.quick else 400, 3 if args.quick else 5),
        "concurrency": concurrency(500 if args.quick else 2000, 1.0, 100),
        "loadAverage": {"before": load_before, "after": os.getloadavg()},
    }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
