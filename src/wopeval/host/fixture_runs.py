"""``fixtureRuns`` on ``POST /runs`` (RFC 0252): recorded tool calls as a task's fixtures.

``fixtureRuns: {taskId: sourceRunId}`` (at least one entry) names, per task, a run whose
recorded tool calls become that task's ``fixtures``, served under ``onMiss: "fail"``. The calls
are recorded exactly as ``wopeval record`` records them (:mod:`wopeval.exports.record`): in call
order, ``args`` compared exactly, tool errors served back as errors, from the source's lowest
trial index of that task that ran. The run is planned with those fixtures in place of the
suite's own for the named tasks, and stores that suite document, so ``wopeval grade`` re-grades
it byte for byte.

A source is usable only when it is the caller's own tenant's completed eval run in which a
trial of that task ran. Every other source — missing, another tenant's, not an eval run, still
running or failed, no trial of the task — gets the one same ``400 validation_error``
(:data:`UNUSABLE_FIXTURE_RUN`, field ``fixtureRuns``), so the answer is no existence oracle. A
``taskId`` the suite does not have is the caller's mistake about a suite they can read, named as
``fixtureRuns.<taskId>``.
"""

from __future__ import annotations

import re
from typing import Any

from wopeval.events.ids import RUN_ID_PATTERN
from wopeval.events.store import EventStore
from wopeval.exports.record import RecordError, record_tasks
from wopeval.host.errors import invalid
from wopeval.service.runs import fold_log
from wopeval.suite import parse_suite, suite_to_document
from wopeval.suite.models import AgentEvalSuite

UNUSABLE_FIXTURE_RUN = (
    "names a source run that is not usable (a completed eval run of yours in which that task ran)"
)
_RUN_ID_RE = re.compile(RUN_ID_PATTERN)

__all__ = ["UNUSABLE_FIXTURE_RUN", "check_fixture_runs", "with_recorded_fixtures"]


def check_fixture_runs(value: object, suite: AgentEvalSuite) -> dict[str, str]:
    """The map's shape: a non-empty object of the suite's task ids → run ids."""
    if not isinstance(value, dict) or not value:
        raise invalid("fixtureRuns", "must be an object mapping taskId to a source runId")
    known = {task.taskId for task in suite.tasks}
    for task_id, run_id in value.items():
        if task_id not in known:
            raise invalid(f"fixtureRuns.{task_id}", "the suite has no task with this taskId")
        if not isinstance(run_id, str) or not _RUN_ID_RE.fullmatch(run_id):
            raise invalid("fixtureRuns", UNUSABLE_FIXTURE_RUN)
    return dict(value)


async def _recorded(store: EventStore, tenant: str, task_id: str, run_id: str) -> dict[str, Any]:
    unusable = invalid("fixtureRuns", UNUSABLE_FIXTURE_RUN)
    if not run_id.startswith(tenant + "/"):
        raise unusable
    record = await store.get_run(run_id)
    if (
        record is None
        or record.tenant != tenant
        or record.kind != "eval"
        or record.status != "completed"
    ):
        raise unusable
    try:
        (recorded,) = await fold_log(store, run_id, lambda log: record_tasks(log, [task_id]))
    except RecordError as exc:
        raise unusable from exc
    return recorded.fixtures(None)


async def with_recorded_fixtures(
    store: EventStore, tenant: str, suite: AgentEvalSuite, fixture_runs: dict[str, str]
) -> AgentEvalSuite:
    """The suite with each named task's fixtures recorded from its source run."""
    document = suite_to_document(suite)
    tasks: list[dict[str, Any]] = [dict(task) for task in document["tasks"]]  # type: ignore[attr-defined]
    for task in tasks:
        source = fixture_runs.get(str(task["taskId"]))
        if source is not None:
            recorded = await _recorded(store, tenant, str(task["taskId"]), source)
            seed = (task.get("fixtures") or {}).get("memorySeed")
            task["fixtures"] = {**({"memorySeed": seed} if seed else {}), **recorded}
    return parse_suite({**document, "tasks": tasks}, source="fixtureRuns")
