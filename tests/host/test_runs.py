"""Reading and cancelling runs: RunSnapshot + ETag, the eval summary by run state, cancel."""

from __future__ import annotations

import pytest

from tests.host.helpers import (
    SLOW_AGENT,
    SLOW_REF,
    auth,
    eval_body,
    host_config,
    running_host,
    segment,
)
from tests.host.wire_schemas import validate_error, validate_snapshot, validate_summary


async def test_snapshot_validates_and_caches_with_strong_etag(store_url: str) -> None:
    async with running_host(store_url) as host:
        run_id = await host.run_id(eval_body(SLOW_REF, agent=SLOW_AGENT, tags=["nightly"],
                                             metadata={"build": 7}))  # fmt: skip
        await host.wait_event(run_id, "agent.invocation-started")  # then the agent sleeps
        first = await host.get(f"/runs/{segment(run_id)}")
        etag = first.headers["ETag"]
        again = await host.get(f"/runs/{segment(run_id)}", headers={"If-None-Match": etag})
        weak = await host.get(f"/runs/{segment(run_id)}", headers={"If-None-Match": "W/" + etag})
        await host.client.post(f"/runs/{segment(run_id)}/cancel", headers=auth(), json={})
        after = await host.get(f"/runs/{segment(run_id)}", headers={"If-None-Match": etag})
    snapshot = first.json()
    validate_snapshot(snapshot)
    assert snapshot["status"] == "running"
    assert snapshot["workflowId"] == "core.wopeval.evals.slow"
    assert snapshot["eventLogSchemaVersion"] == 3
    assert (snapshot["tags"], snapshot["metadata"]) == (["nightly"], {"build": 7})
    assert not etag.startswith("W/")
    assert again.status_code == weak.status_code == 304
    assert again.headers["ETag"] == etag
    assert again.headers["openwop-version"] == "2.0"
    assert after.status_code == 200
    assert after.headers["ETag"] != etag
    assert after.json()["status"] == "cancelled"
    assert "completedAt" in after.json()


async def test_0081_C_eval_summary_follows_run_state(store_url: str) -> None:
    async with running_host(store_url) as host:
        slow = await host.run_id(eval_body(SLOW_REF, agent=SLOW_AGENT))
        await host.wait_status(slow, "running")
        while_running = await host.get(f"/runs/{segment(slow)}/eval-summary")
        await host.client.post(f"/runs/{segment(slow)}/cancel", headers=auth(), json={})
        after_cancel = await host.get(f"/runs/{segment(slow)}/eval-summary")
        done = await host.run_id()
        await host.wait_terminal(done)
        completed = await host.get(f"/runs/{segment(done)}/eval-summary")
    for response, status in ((while_running, "running"), (after_cancel, "cancelled")):
        assert response.status_code == 409
        body = response.json()
        validate_error(body)
        assert body["error"] == "run_state_conflict"
        assert body["details"] == {"runStatus": status}
    assert completed.status_code == 200
    validate_summary(completed.json())


async def test_cancel_running_run_records_run_cancelled(store_url: str) -> None:
    async with running_host(store_url) as host:
        run_id = await host.run_id(eval_body(SLOW_REF, agent=SLOW_AGENT))
        await host.wait_status(run_id, "running")
        cancelled = await host.client.post(
            f"/runs/{segment(run_id)}/cancel", headers=auth(), json={"reason": "enough"}
        )
        again = await host.client.post(f"/runs/{segment(run_id)}:cancel", headers=auth())
        events = await host.state.store.events(run_id)
    assert cancelled.status_code == 200
    assert cancelled.json() == {"runId": run_id, "status": "cancelled"}
    assert again.json() == {"runId": run_id, "status": "cancelled"}
    assert events[0].type == "run.started"
    assert events[-1].type == "run.cancelled"
    assert [e.sequence for e in events] == list(range(len(events)))


async def test_cancel_queued_run_never_starts_it(store_url: str) -> None:
    async with running_host(store_url, host_config(concurrency=1)) as host:
        first = await host.run_id(eval_body(SLOW_REF, agent=SLOW_AGENT))
        await host.wait_status(first, "running")
        queued = await host.run_id(eval_body(SLOW_REF, agent=SLOW_AGENT))
        pending = (await host.get(f"/runs/{segment(queued)}")).json()
        cancelled = await host.client.post(f"/runs/{segment(queued)}/cancel", headers=auth())
        queued_events = await host.state.store.events(queued)
        first_status = (await host.get(f"/runs/{segment(first)}")).json()["status"]
    validate_snapshot(pending)
    assert pending["status"] == "pending"
    assert "startedAt" not in pending
    assert cancelled.json()["status"] == "cancelled"
    assert [e.type for e in queued_events] == ["run.cancelled"]
    assert first_status == "running"


async def test_cancel_completed_run_is_run_terminal(store_url: str) -> None:
    async with running_host(store_url) as host:
        run_id = await host.run_id()
        await host.wait_terminal(run_id)
        response = await host.client.post(f"/runs/{segment(run_id)}/cancel", headers=auth())
        bad_body = await host.client.post(
            f"/runs/{segment(run_id)}/cancel", headers=auth(), json={"force": True}
        )
    assert response.status_code == 409
    assert response.json()["error"] == "run_terminal"
    assert response.json()["details"] == {"runStatus": "completed"}
    assert bad_body.status_code == 400
    assert bad_body.json()["details"]["field"] == "force"


@pytest.mark.parametrize(
    ("method", "path", "status", "code"),
    [
        ("GET", "/runs", 404, "not_found"),
        ("GET", "/no/such/path", 404, "not_found"),
        ("DELETE", "/runs", 405, "wopeval.method_not_allowed"),
        ("PUT", "/.well-known/openwop", 405, "wopeval.method_not_allowed"),
    ],
)
async def test_unserved_paths_answer_with_envelopes(
    store_url: str, method: str, path: str, status: int, code: str
) -> None:
    async with running_host(store_url) as host:
        response = await host.client.request(method, path, headers=auth())
    assert response.status_code == status
    validate_error(response.json())
    assert response.json()["error"] == code
    assert response.headers["openwop-version"] == "2.0"


@pytest.mark.parametrize("version", ["3.0", "1.0", "two", "2.0.1"])
async def test_unserved_protocol_version_is_406(store_url: str, version: str) -> None:
    async with running_host(store_url) as host:
        discovery = await host.client.get("/.well-known/openwop",
                                          headers={"OpenWOP-Version": version})  # fmt: skip
        create = await host.create(headers={"OpenWOP-Version": version})
    for response in (discovery, create):
        assert response.status_code == 406
        body = response.json()
        validate_error(body)
        assert body["error"] == "protocol_version_unsupported"
        assert body["details"] == {"protocolVersions": ["2.0"]}
        assert response.headers["openwop-version"] == "2.0"


@pytest.mark.parametrize("version", ["2", "2.0", "2.7", "2.000", "2.01"])
async def test_served_major_with_any_minor_is_accepted(store_url: str, version: str) -> None:
    async with running_host(store_url) as host:
        response = await host.client.get("/.well-known/openwop",
                                         headers={"OpenWOP-Version": version})  # fmt: skip
    assert response.status_code == 200
    assert response.headers["openwop-version"] == "2.0"
