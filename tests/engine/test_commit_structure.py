"""Issue 13 §3: how a trial's events reach the store (structure, counted, never timed).

A trial's events are queued and committed together before it is graded, so an instant trial
costs two commits, not one per event; and before a live tool runs, what the trial recorded
(the call included) is committed, so a resume after a crash knows the call may have reached
the tool (issue 13 §1). The store's side: tests/events/test_group_commit_counts.py.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

from tests.engine.helpers import make_suite, run_suite, scripted_task
from wopeval.engine.registry import Registry
from wopeval.events.store import EventStore

OK = {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}}
CALLS = [{"tool": f"kb:tool-{i}", "args": {"i": i}} for i in range(3)]


async def test_an_instant_trial_commits_twice(store: EventStore) -> None:
    fixtures = {
        "onMiss": "fail",
        "toolResponses": [{"tool": c["tool"], "response": {"ok": True}} for c in CALLS],
    }
    suite = make_suite([scripted_task("t", {"calls": CALLS, "output": "ok"}, OK, fixtures)])
    before = store.batches_written
    ran = await run_suite(store, suite)  # fmt: skip
    assert ran.done.passed
    # run.started, eval.started, the trial's nine events (root, three calls and returns,
    # decided, completed: one flush), its eval.scored, eval.completed: five batches
    # (run.completed is written by the end-of-run transaction, not as a batch).
    assert len(ran.events) == 14
    assert store.batches_written - before == 5


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
