"""Record once, replay forever: live Python and MCP tools → ``record`` → a strict replay (§D).

The effect counters are the Python tools' own call list and the MCP demo server's call file
(tests/engine/mcp_server_demo.py): a replay of the recorded suite reaches neither.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from tests.engine.helpers import Ran, make_suite, run_suite, scripted_task
from wopeval.cli.app import app
from wopeval.engine.agent import AgentContext
from wopeval.engine.gateway import FIXTURE_ERROR_KEY, TOOL_FAILED
from wopeval.engine.mcp_tools import mcp_live_tools
from wopeval.engine.registry import Registry
from wopeval.engine.run import RunSettings
from wopeval.events.store import EventStore
from wopeval.exports.record import RecordError, record_suite
from wopeval.service.runs import fold_log
from wopeval.suite import parse_suite
from wopeval.wire.events import TOOL_CALLED, TOOL_RETURNED, RunEvent

DEMO = [sys.executable, str(Path(__file__).parents[1] / "engine" / "mcp_server_demo.py")]
AGENT = "core.test.agents.recorder"
ONE = RunSettings(concurrency=1)  # trials in order: trial 0 draws tickets 1 and 2


class Effects:
    """The Python live tools, counting every call that reaches a body."""

    def __init__(self) -> None:
        self.calls: list[str] = []
        self._next = 0

    async def ticket(self, args: Any) -> Any:
        self.calls.append("py:ticket")
        self._next += 1
        return {"ticket": self._next}  # a new value per call: a scripted sequence on replay

    async def boom(self, args: Any) -> Any:
        self.calls.append("py:boom")
        raise RuntimeError("the ledger is locked")


async def recorder(task_input: Any, ctx: AgentContext) -> Any:
    """Deterministic: its output is made of what the tools answered."""
    order = await ctx.call_tool("crm:lookup-order", {"orderId": task_input["orderId"]})
    first = await ctx.call_tool("py:ticket", {"queue": "refunds"})
    second = await ctx.call_tool("py:ticket", {"queue": "refunds"})
    failed = await ctx.call_tool("crm:fail", {"reason": "card declined"})
    boom = await ctx.call_tool("py:boom", None)
    refund = await ctx.call_tool(
        "crm:refund", {"orderId": task_input["orderId"], "amountMinor": 4200}
    )
    return {
        "status": order.value["status"],
        "tickets": [first.value["ticket"], second.value["ticket"]],
        "errors": [failed.error_code, boom.error_code],
        "refunded": refund.value["refundedMinor"],
    }


SUITE: dict[str, Any] = {
    "taskId": "refund",
    "input": {"orderId": "A-1"},
    "expected": {
        "kind": "golden",
        "match": {"strategy": "contains", "value": '"refunded":4200,"status":"delivered"'},
        "trajectory": {
            "match": "in-order",
            "calls": [
                {"tool": "crm:lookup-order", "args": {"orderId": "A-1"}, "argsMatch": "exact"},
                {"tool": "crm:refund"},
            ],
        },
    },
}


def _registry(effects: Effects, mcp: dict[str, Any]) -> Registry:
    registry = Registry()
    registry.register_agent(AGENT, recorder)
    registry.register_tool("py:ticket", effects.ticket)
    registry.register_tool("py:boom", effects.boom)
    for name, tool in mcp.items():
        registry.register_tool(name, tool)
    return registry


def _mcp_calls(counter: Path) -> list[str]:
    if not counter.exists():
        return []
    return [json.loads(line)["tool"] for line in counter.read_text().splitlines()]


def _outputs(ran: Ran) -> list[Any]:
    """The agent's output per trial, by trial index."""
    trials = _roots(ran)
    decided = {trials[e.causationId]: e.payload["decision"] for e in ran.of_type("agent.decided")}
    return [decided[index] for index in sorted(decided)]


def _roots(ran: Ran) -> dict[str | None, int]:
    return {
        e.eventId: e.payload["x-wopeval-trialIndex"]
        for e in ran.events
        if e.type == "agent.invocation-started" and "x-wopeval-trialIndex" in e.payload
    }


def _grades(ran: Ran) -> list[tuple[Any, ...]]:
    scored = [e.payload for e in ran.events if e.type == "eval.scored"]
    task = ran.done.tasks[0]
    trials = task.trials.model_dump() if task.trials is not None else None
    return [
        (s["trialIndex"], s["score"], s["passed"])
        for s in sorted(scored, key=lambda s: s["trialIndex"])
    ] + [(task.passed, task.score, trials, task.trajectory)]


async def _live_then_replay(
    store: EventStore, tmp_path: Path
) -> tuple[Ran, Ran, Effects, Path, dict[str, Any]]:
    # Here, not at the top: the demo imports the MCP SDK, which the inner loop's tests here
    # (this helper's test is slow) need not import.
    from tests.engine.mcp_server_demo import COUNTER_ENV

    counter = tmp_path / "mcp-calls.jsonl"
    effects = Effects()
    suite = make_suite([SUITE], trials={"count": 2})
    env = {COUNTER_ENV: str(counter)}
    async with mcp_live_tools(DEMO, env=env, prefix="crm:") as tools:
        live = await run_suite(
            store, suite, agent_id=AGENT, registry=_registry(effects, tools), settings=ONE
        )
        assert len(effects.calls) == 6
        assert len(_mcp_calls(counter)) == 6  # the live run did reach the server, twice
        record = await store.get_run(live.run_id)
        assert record is not None
        document, recorded = record_suite(record.suite_document, live.events, trial=0)
        replay_effects = Effects()
        registry = _registry(replay_effects, tools)
        before = len(_mcp_calls(counter))
        replay = await run_suite(
            store, parse_suite(document), agent_id=AGENT, registry=registry, settings=ONE
        )
        assert replay_effects.calls == []  # zero live Python calls …
        assert len(_mcp_calls(counter)) == before  # … and zero MCP calls on replay
    assert [(r.task_id, r.trial_index, r.error_count) for r in recorded] == [("refund", 0, 2)]
    return live, replay, effects, counter, document


async def test_0244_D_record_then_replay_makes_zero_live_calls_and_the_same_grades(
    store: EventStore, tmp_path: Path
) -> None:
    live, replay, _, _, document = await _live_then_replay(store, tmp_path)
    fixtures = document["tasks"][0]["fixtures"]
    assert fixtures["onMiss"] == "fail"
    entries = fixtures["toolResponses"]
    assert [e["tool"] for e in entries] == [
        "crm:lookup-order", "py:ticket", "py:ticket", "crm:fail", "py:boom", "crm:refund",
    ]  # fmt: skip
    assert [e.get("argsMatch") for e in entries] == ["exact"] * 4 + [None, "exact"]
    assert [e["response"] for e in entries[1:3]] == [{"ticket": 1}, {"ticket": 2}]
    assert entries[3]["response"][FIXTURE_ERROR_KEY]["code"] == TOOL_FAILED  # an error, as such
    assert "the ledger is locked" in entries[4]["response"][FIXTURE_ERROR_KEY]["message"]
    # live trial 1 drew tickets 3 and 4; the replay serves trial 0's boundary to both trials
    live_trials, replayed = _per_trial(live), _per_trial(replay)
    assert live_trials[0] != live_trials[1]
    assert replayed[0] == replayed[1] == live_trials[0]
    assert _outputs(replay) == [_outputs(live)[0]] * 2
    returned = [e.payload for e in replay.of_type(TOOL_RETURNED)]
    assert {r["x-wopeval-fixture"] for r in returned} == {"served"}
    assert _grades(replay) == _grades(live)
    assert replay.done.tasks[0].passed is True


def _per_trial(ran: Ran) -> dict[int, list[tuple[Any, ...]]]:
    """Each trial's observed boundary (tool, args, outcome, error code), in call order."""
    roots = _roots(ran)
    calls: dict[str, dict[str, Any]] = {}
    out: dict[int, list[tuple[Any, ...]]] = {}
    for event in ran.events:
        if event.causationId not in roots:
            continue
        if event.type == TOOL_CALLED:
            calls[event.payload["callId"]] = event.payload
        elif event.type == TOOL_RETURNED:
            p = event.payload
            called = calls[p["callId"]]
            error = (p.get("error") or {}).get("code")
            row = (called["toolName"], called.get("inputs"), p.get("outcome"), error)
            out.setdefault(roots[event.causationId], []).append(row)
    return out


def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart" / "suite.yaml"


def test_record_command_writes_a_suite_that_replays_to_the_same_summary(tmp_path: Path) -> None:
    store = str(tmp_path / "s.db")
    code, out = _cli("run", str(QUICKSTART), "--store", store, "--json")
    first = json.loads(out)
    out_path = tmp_path / "recorded.yaml"
    args = ("record", first["runId"], "-o", str(out_path), "--trial", "2", "--store", store)
    code, out = _cli(*args, "--json")
    assert code == 0, out
    said = json.loads(out)
    assert [t["trialIndex"] for t in said["tasks"]] == [2, 2, 2]  # says which trial was used
    recorded = yaml.safe_load(out_path.read_text())
    fixtures = recorded["tasks"][0]["fixtures"]
    assert fixtures["onMiss"] == "fail"
    assert fixtures["toolResponses"][0] == {
        "tool": "crm:lookup-order",
        "args": {"orderId": "A-100"},
        "argsMatch": "exact",
        "response": {"status": "damaged", "totalMinor": 4200},
    }
    code, out = _cli("run", str(out_path), "--store", store, "--json")
    again = json.loads(out)

    def graded(doc: dict[str, Any]) -> list[dict[str, Any]]:  # latency is the one wall clock
        return [{k: v for k, v in t.items() if k != "latencyMs"} for t in doc["summary"]["tasks"]]

    assert graded(again) == graded(first)
    assert again["summary"]["passed"] == first["summary"]["passed"]


def test_record_command_refuses_an_unknown_task_and_a_trial_that_did_not_run(
    tmp_path: Path,
) -> None:
    store = str(tmp_path / "s.db")
    _, out = _cli("run", str(QUICKSTART), "--store", store, "--json")
    run_id = json.loads(out)["runId"]
    target = str(tmp_path / "r.json")
    code, out = _cli("record", run_id, "-o", target, "--task", "nope", "--store", store)
    assert code == 2
    assert "no task 'nope'" in out
    code, out = _cli("record", run_id, "-o", target, "--trial", "9", "--store", store)
    assert code == 2
    assert "no trial 9" in out
    assert not Path(target).exists()


def test_record_suite_skips_calls_no_tool_answered() -> None:
    """A fail-closed miss is not recorded, so the replay misses it too (and fails closed)."""
    root = "ev_" + "0" * 26

    def event(seq: int, type_: str, payload: dict[str, Any], cause: str | None) -> RunEvent:
        return RunEvent(
            eventId=f"ev_{seq:026d}", runId="local/r", timestamp="2026-01-01T00:00:00Z",
            sequence=seq, type=type_, payload=payload, causationId=cause,
        )  # fmt: skip

    base = {"agentId": "a.b", "toolName": "crm:x"}
    events = [
        event(
            0,
            "agent.invocation-started",
            {
                "invocationId": "i",
                "agentId": "a.b",
                "source": "run-api",
                "x-wopeval-taskId": "t",
                "x-wopeval-trialIndex": 0,
            },
            None,
        ),
        event(1, TOOL_CALLED, {**base, "callId": "c1", "inputs": {"n": 1}}, root),
        event(
            2,
            TOOL_RETURNED,
            {
                **base,
                "callId": "c1",
                "status": "error",
                "error": {"code": "wopeval.fixture_miss", "message": "m"},
                "x-wopeval-fixture": "miss-failed",
            },
            root,
        ),
        event(3, TOOL_CALLED, {**base, "callId": "c2", "inputs": {"n": 2}}, root),
        event(4, TOOL_RETURNED, {**base, "callId": "c2", "status": "ok", "outcome": 7}, root),
    ]
    document = {"tasks": [{"taskId": "t", "fixtures": {"memorySeed": [{"k": 1}]}}]}
    recorded, _ = record_suite(document, events)
    assert recorded["tasks"][0]["fixtures"] == {
        "memorySeed": [{"k": 1}],
        "onMiss": "fail",
        "toolResponses": [{"tool": "crm:x", "args": {"n": 2}, "argsMatch": "exact", "response": 7}],
    }
    with pytest.raises(RecordError, match="no trial of it ran"):
        record_suite({"tasks": [{"taskId": "u"}]}, events)


async def test_record_reads_a_paged_log_twice_never_whole(store: EventStore) -> None:
    """Issue 13 §2: ``record`` folds the stored log as pages (``fold_log``): two passes, in
    order, each starting again, and the same fixtures as from the whole log in a list."""
    lookups = [{"tool": "crm:lookup", "args": {"q": i}} for i in range(3)]
    other = {"calls": [{"tool": "crm:other", "args": {}}]}
    script = {"calls": lookups, "output": "ok", "trials": {"1": other}}
    golden = {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}}
    served = [{"tool": "crm:lookup", "response": {"n": n}} for n in range(3)]
    fixtures = {"onMiss": "fail", "toolResponses": [*served, {"tool": "crm:other", "response": 9}]}
    suite = make_suite([scripted_task("t", script, golden, fixtures)], trials={"count": 3})
    ran = await run_suite(store, suite)
    record = await store.get_run(ran.run_id)
    assert record is not None
    passes: list[int] = []

    class Paged:  # what fold_log hands over: iterable again, page after page
        def __iter__(self) -> Iterator[RunEvent]:
            passes.append(0)
            for event in ran.events:
                passes[-1] += 1
                yield event

    for trial in (0, 1):
        paged, _ = record_suite(record.suite_document, Paged(), trial=trial)
        whole, _ = record_suite(record.suite_document, list(ran.events), trial=trial)
        assert paged == whole
    assert passes == [len(ran.events)] * 4  # two whole passes a recording
    tools = [r["tool"] for r in whole["tasks"][0]["fixtures"]["toolResponses"]]
    assert tools == ["crm:other"]  # trial 1's own calls
    folded, _ = await fold_log(
        store, ran.run_id, lambda log: record_suite(record.suite_document, log, trial=1)
    )
    assert folded == whole
