"""The crash tests' reference: what an uninterrupted run of the crash suite grades to."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.service.crash_worker import AGENT, crash_suite, live_registry
from wopeval.engine.run import RunHandle, RunSettings
from wopeval.events.store import EventStore
from wopeval.service.runs import RunService
from wopeval.wire.summary import EvalSummary


class CleanRuns:
    """The summary of an uninterrupted run of ``crash_suite(with_live)``, run once a session on
    its own SQLite store (the summary holds no run id or store detail: every seed, on either
    backend, compares with the same one)."""

    def __init__(self, directory: Path) -> None:
        self._directory = directory
        self._made: dict[bool, EvalSummary] = {}

    async def summary(self, with_live: bool) -> EvalSummary:
        if with_live not in self._made:
            self._made[with_live] = await self._run(with_live)
        return self._made[with_live]

    async def _run(self, with_live: bool) -> EvalSummary:
        live_log = self._directory / f"live-{with_live}.log"
        async with await EventStore.open(str(self._directory / f"clean-{with_live}.db")) as store:
            service = RunService(store, live_registry(live_log))
            plan = await service.plan(crash_suite(with_live), AGENT, RunSettings(concurrency=3))
            record = await service.create(plan)
            summary = await service.execute(plan, RunHandle(record.run_id))
        assert summary is not None
        return summary


@pytest.fixture(scope="session")
def clean_runs(tmp_path_factory: pytest.TempPathFactory) -> CleanRuns:
    return CleanRuns(tmp_path_factory.mktemp("clean-runs"))
