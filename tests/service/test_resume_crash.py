"""Resume after ``kill -9`` at random points: every (taskId, trialIndex) scored exactly once.

Each seed starts a real run in a child process (:mod:`tests.service.crash_worker`), kills it
with SIGKILL after a random delay, then resumes it through :meth:`RunService.resume` — on
SQLite and on PostgreSQL. Fixtured trials interrupted in flight are re-run and the summary is
the one an uninterrupted run of the same trials grades to; a trial that may have touched the
live tool is never repeated (the tool's own log proves it) and is recorded as interrupted.
"""

from __future__ import annotations

import asyncio
import random
import signal
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.service.conftest import CleanRuns, Warm
from tests.service.crash_worker import crash_suite, live_registry
from wopeval.engine.resume import LABEL_INTERRUPTED
from wopeval.events.store import EventStore
from wopeval.service.runs import RunService
from wopeval.wire.events import EvalScored, TrialFailed

SEEDS = range(6)


def _without_latency(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_latency(v) for k, v in value.items() if "atency" not in k}
    if isinstance(value, list):
        return [_without_latency(v) for v in value]
    return value


def kill_after_run_id(warm: Warm, argv: list[str], delay: float) -> str:
    """Start ``python -m`` ``argv`` (in a process started ahead), wait for the run id it prints,
    SIGKILL it ``delay`` s later."""
    child = warm.run(*argv)
    assert child.stdout is not None
    with child.stdout:
        run_id = child.stdout.readline()
        time.sleep(delay)
        child.send_signal(signal.SIGKILL)
        child.wait()
    assert run_id.strip(), "the worker died before creating its run"
    return run_id.strip()


def _crashed_run(warm: Warm, store_url: str, live_log: Path, with_live: bool, delay: float) -> str:
    """Start the worker, wait for its run id, SIGKILL it ``delay`` seconds later."""
    mode = "live" if with_live else "fixtures"
    argv = ["tests.service.crash_worker", store_url, str(live_log), mode]
    return kill_after_run_id(warm, argv, delay)


def _scored(events: list[Any]) -> Counter[tuple[str, int]]:
    return Counter(
        (p.taskId, p.trialIndex or 0) for e in events if isinstance(p := e.typed, EvalScored)
    )


@pytest.mark.parametrize("seed", SEEDS)
async def test_resume_after_kill_scores_every_trial_once(
    store_url: str, tmp_path: Path, seed: int, clean_runs: CleanRuns, warm: Warm
) -> None:
    rng = random.Random(seed)
    with_live = seed % 2 == 1
    live_log = tmp_path / "live.log"
    delay = rng.uniform(0.0, 0.7)
    run_id = await asyncio.to_thread(_crashed_run, warm, store_url, live_log, with_live, delay)
    async with await EventStore.open(store_url) as store:
        suite = crash_suite(with_live)
        service = RunService(store, live_registry(live_log))
        record = await store.get_run(run_id)
        assert record is not None
        assert not record.terminal, "the child finished before SIGKILL: lengthen its trials"
        _, summary = await service.resume(run_id)
        assert summary is not None
        events = await store.events(run_id)
        planned = {(t.taskId, i) for t in suite.tasks for i in range(3)}
        scored = _scored(events)
        assert set(scored) == planned
        assert set(scored.values()) == {1}
        interrupted = {
            (p.taskId, p.trialIndex)
            for e in events
            if isinstance(p := e.typed, EvalScored) and p.scoreLabel == LABEL_INTERRUPTED
        }
        assert all(task == "live" for task, _ in interrupted)  # fixtured trials re-ran
        reasons = {
            (p.taskId, p.trialIndex) for e in events
            if isinstance(p := e.typed, TrialFailed) and p.kind == "interrupted"
        }  # fmt: skip
        assert reasons == interrupted
        # The live tool's effects: never repeated for a trial (2 calls per trial at most).
        lines = live_log.read_text().split("\n")[:-1] if live_log.exists() else []
        assert all(count <= 2 for count in Counter(lines).values())
        if not interrupted:
            clean = await clean_runs.summary(with_live)
            assert _without_latency(summary.to_wire()) == _without_latency(clean.to_wire())
        regraded = await service.regrade(run_id)
        assert regraded.reproduces_stored
