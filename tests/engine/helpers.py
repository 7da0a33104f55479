"""Helpers for engine tests: build suites from dicts and run them to completion."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from wopeval.engine.judge import Judge
from wopeval.engine.registry import SCRIPTED_AGENT_ID, Registry
from wopeval.engine.run import RunHandle, RunSettings
from wopeval.events.store import EventStore
from wopeval.service.runs import create_run_record, execute
from wopeval.suite import parse_suite
from wopeval.suite.models import AgentEvalSuite
from wopeval.wire.events import RunEvent
from wopeval.wire.summary import EvalSummary


def make_suite(tasks: list[dict[str, Any]], **extra: Any) -> AgentEvalSuite:
    doc: dict[str, Any] = {
        "suiteId": "core.test.evals.engine",
        "version": "1.0.0",
        "modes": ["golden"],
        "tasks": tasks,
    }
    doc.update(extra)
    return parse_suite(doc)


def scripted_task(
    task_id: str,
    script: dict[str, Any],
    expected: dict[str, Any],
    fixtures: dict[str, Any] | None = None,
) -> dict[str, Any]:
    task: dict[str, Any] = {"taskId": task_id, "input": script, "expected": expected}
    if fixtures is not None:
        task["fixtures"] = fixtures
    return task


@dataclass
class Ran:
    run_id: str
    summary: EvalSummary | None
    events: list[RunEvent]

    def of_type(self, type_: str) -> list[RunEvent]:
        return [e for e in self.events if e.type == type_]

    @property
    def done(self) -> EvalSummary:
        assert self.summary is not None
        return self.summary


async def run_suite(
    store: EventStore,
    suite: AgentEvalSuite,
    *,
    agent_id: str = SCRIPTED_AGENT_ID,
    registry: Registry | None = None,
    settings: RunSettings | None = None,
    judge: Judge | None = None,
) -> Ran:
    settings = settings or RunSettings()
    record = await create_run_record(store, suite, agent_id, settings)
    summary = await execute(
        store,
        RunHandle(record.run_id),
        suite,
        agent_id,
        registry or Registry(),
        settings,
        judge=judge,
    )
    return Ran(record.run_id, summary, await store.events(record.run_id))
