"""The crash tests' worker processes, started ahead (:class:`Warm`), and their reference: what
an uninterrupted run of the crash suite grades to (:class:`CleanRuns`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
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


ROOT = Path(__file__).resolve().parents[2]


class Warm:
    """Worker processes (:mod:`tests.service.warm_worker`), one kept started ahead: :meth:`run`
    hands the waiting one its command and starts the next, whose imports then overlap the rest
    of this test. Every command still gets a fresh process of its own."""

    def __init__(self) -> None:
        self._next: subprocess.Popen[str] | None = None

    def _start(self) -> subprocess.Popen[str]:
        path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
        return subprocess.Popen(
            [sys.executable, "-m", "tests.service.warm_worker"],
            cwd=ROOT, env={**os.environ, "PYTHONPATH": path},
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip

    def run(self, module: str, *args: str) -> subprocess.Popen[str]:
        """``python -m module args`` in the waiting process (its stdout a pipe)."""
        child = self._next if self._next is not None else self._start()
        assert child.stdin is not None
        child.stdin.write(json.dumps([module, *args]) + "\n")
        child.stdin.close()
        self._next = self._start()
        return child

    def close(self) -> None:
        if self._next is not None:
            self._next.kill()
            self._next.communicate()


@pytest.fixture(scope="module")
def warm() -> Iterator[Warm]:
    """For one test module: the process started ahead for a test that never comes is killed."""
    workers = Warm()
    try:
        yield workers
    finally:
        workers.close()
