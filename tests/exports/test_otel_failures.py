"""How a trial failed survives the OTLP round trip: the export says, content-free, how each
tool call was served (``openwop.tool.fixture``, ``.fixture_index``) and a failed invocation's
label (``openwop.agent.error_label``), and ``import-otlp`` grades the same fixture misses and
failure kinds as the stored log. They used to come back as no miss and ``agent-error`` for
every failed trial (a new user's walk-through found it)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import anyio
from typer.testing import CliRunner

from wopeval.cli.app import app
from wopeval.events.store import EventStore

AGENT = "tests.exports.test_otel_failures:failing_agent"
_TOOL = "kb:read"
_PATH = {"kind": "trajectory", "trajectory": {"match": "in-order", "calls": [{"tool": _TOOL}]}}
_FIXTURES = {"onMiss": "fail", "toolResponses": [{"tool": _TOOL, "response": {"ok": 1}}]}
SUITE = {
    "suiteId": "core.test.evals.failures",
    "version": "1.0.0",
    "modes": ["golden"],
    "trials": {"count": 2},
    "tasks": [
        {"taskId": how, "input": {"how": how}, "expected": _PATH, "fixtures": _FIXTURES}
        for how in ("ok", "raise", "hang", "not-json", "miss")
    ],
}


async def failing_agent(task_input: Any, ctx: Any) -> Any:
    """Calls its fixtured tool, then fails the way its task says."""
    how = task_input["how"]
    await ctx.call_tool("kb:other" if how == "miss" else _TOOL, {})
    if how == "raise":
        raise RuntimeError("the agent broke")
    if how == "hang":
        await anyio.sleep(30)
    return {1, 2} if how == "not-json" else "done"


async def _kinds(store: str, run_id: str) -> Counter[tuple[str, str]]:
    async with await EventStore.open(store) as opened:
        events = await opened.events(run_id)
    return _kinds_of([e.to_wire() for e in events])


def _kinds_of(events: list[dict[str, Any]]) -> Counter[tuple[str, str]]:
    return Counter(
        (e["payload"]["taskId"], e["payload"]["kind"])
        for e in events
        if e["type"] == "wopeval.trial-failed"
    )


def test_fixture_misses_and_failure_kinds_survive_the_otlp_round_trip(tmp_path: Path) -> None:
    runner = CliRunner()
    store, suite = str(tmp_path / "s.db"), tmp_path / "suite.json"
    suite.write_text(json.dumps(SUITE))
    result = runner.invoke(app, ["run", str(suite), "--agent", AGENT, "--trial-timeout", "0.5",
                                 "--store", store, "--json"])  # fmt: skip
    recorded = json.loads(result.output)
    exported, converted = tmp_path / "run.otel.jsonl", tmp_path / "converted.jsonl"
    result = runner.invoke(app, ["export", recorded["runId"], "--format", "otel", "-o",
                                 str(exported), "--store", store])  # fmt: skip
    assert result.exit_code == 0, result.output
    result = runner.invoke(app, ["import-otlp", str(exported), "--suite", str(suite), "--json",
                                 "--events-out", str(converted)])  # fmt: skip
    assert result.exit_code == 1, result.output  # four tasks fail, as in the run
    imported = json.loads(result.output)
    stored = anyio.run(_kinds, store, recorded["runId"])
    assert {kind for _, kind in stored} >= {"agent-error", "timeout", "output-not-json"}
    assert sum(t["fixtureMissCount"] for t in recorded["summary"]["tasks"]) == 2
    events = [json.loads(line) for line in converted.read_text().splitlines()]
    assert _kinds_of(events) == stored
    # Trajectories only: nothing content-bound differs. Latency is left out: the export ends a
    # trial's span at its score, which may come a millisecond after its invocation ended.
    assert _without_latency(imported) == _without_latency(recorded["summary"])


def _without_latency(summary: dict[str, Any]) -> dict[str, Any]:
    tasks = [{k: v for k, v in task.items() if k != "latencyMs"} for task in summary["tasks"]]
    return {**summary, "tasks": tasks}
