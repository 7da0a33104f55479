"""Issue 13 §3: how a trial's events reach the store (structure, counted, never timed).

A trial's events are queued and committed together, its score with them (it is graded on what
it recorded, the score chained after those events), so an instant trial costs one commit, not
one per event; and before a live tool runs, what the trial recorded
(the call included) is committed, so a resume after a crash knows the call may have reached
the tool (issue 13 §1). The store's side: tests/events/test_group_commit_counts.py.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tests.engine.helpers import make_suite, run_suite, scripted_task
from wopeval.engine.registry import Registry
from wopeval.events.store import EventStore

OK = {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}}
CALLS = [{"tool": f"kb:tool-{i}", "args": {"i": i}} for i in range(3)]


async def test_an_instant_trial_commits_once(store: EventStore) -> None:
    fixtures = {
        "onMiss": "fail",
        "toolResponses": [{"tool": c["tool"], "response": {"ok": True}} for c in CALLS],
    }
    suite = make_suite([scripted_task("t", {"calls": CALLS, "output": "ok"}, OK, fixtures)])
    before = store.batches_written
    ran = await run_suite(store, suite)  # fmt: skip
    assert ran.done.passed
    # run.started with eval.started, the trial's nine events (root, three calls and returns,
    # decided, completed) with its eval.scored, eval.completed: three batches
    # (run.completed is written by the end-of-run transaction, not as a batch).
    assert len(ran.events) == 14
    assert store.batches_written - before == 3


async def test_a_live_tool_runs_only_after_its_call_is_committed(tmp_path: Path) -> None:
    """What a resume reads (issue 13 §1): the call is in the log before the live tool runs.

    The tool reads the database file synchronously, with the stdlib driver, before it awaits
    anything: what it sees was committed before it was called, not while it waited."""
    path = tmp_path / "store.db"
    seen: list[list[str]] = []

    async def live(args: Any) -> Any:
        with closing(sqlite3.connect(path)) as db:
            rows = db.execute("SELECT type FROM events ORDER BY sequence").fetchall()
        seen.append([row[0] for row in rows])
        return {"ok": True}

    registry = Registry()
    registry.register_tool("crm:lookup", live)
    script = {"calls": [{"tool": "crm:lookup", "args": {"id": 1}}], "output": "ok"}
    suite = make_suite([scripted_task("t", script, OK)])
    async with await EventStore.open(str(path)) as store:
        ran = await run_suite(store, suite, registry=registry)
    assert ran.done.passed
    assert seen == [["run.started", "eval.started", "agent.invocation-started",
                     "agent.tool-called"]]  # fmt: skip


async def test_queued_events_keep_the_time_they_happened_at(
    store: EventStore, monkeypatch: Any
) -> None:
    """A trial's events are committed late (here: every batch waits 0.1 s, a hundred times the
    timestamps' resolution, twice the agent's own sleep); their timestamps are
    still when each happened, so the recorded latency is the agent's, not the writer's."""
    import anyio

    stage = EventStore._stage

    committed: list[datetime] = []
    returned: list[datetime] = []

    async def slow_stage(self: EventStore, batch: Any) -> Any:
        await anyio.sleep(0.1)
        committed.append(datetime.now(UTC))
        return await stage(self, batch)

    async def agent(task_input: Any, ctx: Any) -> Any:
        await anyio.sleep(0.05)
        returned.append(datetime.now(UTC))
        return "ok"

    registry = Registry()
    registry.register_agent("slow.agent", agent)
    suite = make_suite([scripted_task("t", {}, OK)])
    monkeypatch.setattr(EventStore, "_stage", slow_stage)
    ran = await run_suite(store, suite, agent_id="slow.agent", registry=registry)
    stamps = {e.type: datetime.fromisoformat(e.timestamp) for e in ran.events}
    started, completed = stamps["agent.invocation-started"], stamps["agent.invocation-completed"]
    tick = timedelta(milliseconds=1)  # the stored timestamps' resolution
    assert completed - started >= timedelta(seconds=0.05) - tick  # the agent's own sleep
    # Stamped when the agent returned, before the slow writer got to stage it.
    assert returned[0] - tick <= completed < min(c for c in committed if c > returned[0])
    assert [e.timestamp for e in ran.events] == sorted(e.timestamp for e in ran.events)
