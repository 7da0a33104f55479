"""A restarted host resumes the runs a crashed host left unfinished (issue 13, configurable)."""

from __future__ import annotations

from tests.host.helpers import SLOW_AGENT, host_config, running_host
from wopeval.engine.run import RunSettings
from wopeval.events.store import EventStore
from wopeval.service.runs import create_run_record
from wopeval.suite import parse_suite
from wopeval.wire.events import EvalScored, RunStarted
from wopeval.wire.request import HostRequest

SUITE = {
    "suiteId": "core.wopeval.evals.resume",
    "version": "1.0.0",
    "modes": ["golden"],
    "trials": {"count": 2},
    "tasks": [
        {
            "taskId": f"echo-{i}",
            "input": {"output": "hello", "sleep": 0.01},
            "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "hello"}},
        }
        for i in range(3)
    ],
}


async def _left_running(store_url: str) -> str:
    """A host run that died after its first trial was scored."""
    suite = parse_suite(SUITE)
    async with await EventStore.open(store_url) as store:
        record = await create_run_record(
            store, suite, SLOW_AGENT, RunSettings(), tenant="acme",
            host=HostRequest(bodySha256="0" * 64),
        )  # fmt: skip
        await store.set_status(record.run_id, "running")
        await store.emit(record.run_id, RunStarted(workflowId=suite.suiteId, transport="rest"))
        scored = EvalScored(taskId="echo-0", score=1.0, passed=True, trialIndex=0)
        await store.emit(record.run_id, scored)
        return record.run_id


async def test_restart_resumes_host_runs_left_unfinished(store_url: str) -> None:
    run_id = await _left_running(store_url)
    async with running_host(store_url) as host:
        store = host.state.store
        assert host.state.manager.owns(run_id)  # resumed at start-up
        await host.state.manager.wait(run_id, 30)
        record = await store.get_run(run_id)
        events = await store.events(run_id)
    assert record is not None
    assert record.status == "completed"
    assert [e.sequence for e in events] == list(range(len(events)))  # one gap-free log
    assert [e.type for e in events].count("run.started") == 1
    scored = [(p.taskId, p.trialIndex) for e in events if isinstance(p := e.typed, EvalScored)]
    assert sorted(scored) == sorted((f"echo-{i}", t) for i in range(3) for t in range(2))
    assert events[-1].type == "run.completed"


async def test_restart_with_resume_off_fails_them(store_url: str) -> None:
    run_id = await _left_running(store_url)
    async with running_host(store_url, host_config(resumeInterrupted=False)) as host:
        record = await host.state.store.get_run(run_id)
    assert record is not None
    assert record.status == "failed"
    assert record.error is not None
    assert record.error["code"] == "wopeval.interrupted"
