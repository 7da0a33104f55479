"""The kit's wire client (wopeval.conformance.client) on hand-made answers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from wopeval.conformance.catalog import TRIALS_FIXTURE
from wopeval.conformance.client import WireClient, WireError, project_id

Handler = Callable[[httpx.Request], httpx.Response]


def _client(handler: Handler) -> WireClient:
    return WireClient("http://h.test/", "key-1", transport=httpx.MockTransport(handler))


@pytest.mark.parametrize(
    ("run_id", "path"),
    [
        ("acme/r-9f3c", "acme~2Fr-9f3c"),
        ("anon:t/abc_DEF.0-1", "anon~3At~2Fabc_DEF.0-1"),
        ("t/a~b", "t~2Fa~7Eb"),  # "~" itself is escaped, so projection is reversible
        ("t/é", "t~2F~C3~A9"),  # every UTF-8 byte
    ],
)
def test_run_id_path_projection(run_id: str, path: str) -> None:
    assert project_id(run_id) == path


async def test_requests_carry_version_auth_and_projected_ids() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if request.url.path.endswith("/poll"):
            body = {"runId": "t/r", "events": [], "lastSequence": -1}
            return httpx.Response(200, json={**body, "status": "completed", "isTerminal": True})
        return httpx.Response(200, json={})

    async with _client(handler) as client:
        await client.discovery()
        await client.create_eval_run(TRIALS_FIXTURE)
        log = await client.read_run("t/run-1", deadline_s=5)
    assert log.events == []
    assert log.status == "completed"
    discovery, create, poll = seen
    assert all(r.headers["OpenWOP-Version"] == "2.0" for r in seen)
    assert "authorization" not in discovery.headers
    assert create.headers["authorization"] == "Bearer key-1"
    assert create.read() == (
        b'{"mode":"eval","evalSuiteRef":"suite://core.openwop.evals.conformance-eval-trials@1.0.0",'
        b'"agentId":"core.conformance.agents.scripted"}'
    )
    assert poll.url.raw_path.startswith(b"/runs/t~2Frun-1/events/poll?")
    assert "afterSequence" not in poll.url.params  # first poll: from sequence 0


async def test_poll_reads_until_caught_up_and_dedups() -> None:
    events: list[dict[str, Any]] = [{"sequence": n, "type": "x"} for n in range(5)]
    cursors: list[str | None] = []

    def handler(request: httpx.Request) -> httpx.Response:
        after = request.url.params.get("afterSequence")
        cursors.append(after)
        start = -1 if after is None else int(after)
        page = [e for e in events if e["sequence"] > start][:2] + events[:1]  # a repeat
        body = {"runId": "t/r", "events": page, "lastSequence": 4, "status": "completed"}
        return httpx.Response(200, json={**body, "isTerminal": True})

    async with _client(handler) as client:
        log = await client.read_run("t/r", deadline_s=5)
    assert [e["sequence"] for e in log.events] == [0, 1, 2, 3, 4]
    assert cursors == [None, "1", "3"]


async def test_a_run_that_never_ends_times_out() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        body = {"runId": "t/r", "events": [], "lastSequence": -1, "status": "running"}
        return httpx.Response(200, json={**body, "isTerminal": False})

    async with _client(handler) as client:
        with pytest.raises(WireError, match="did not reach a terminal state"):
            await client.read_run("t/r", deadline_s=0.2)


async def test_summary_409_is_retried() -> None:
    answers = iter([409, 409, 200])

    def handler(request: httpx.Request) -> httpx.Response:
        status = next(answers)
        return httpx.Response(status, json={"suiteId": "x"} if status == 200 else {})

    async with _client(handler) as client:
        reply = await client.read_summary("t/r")
    assert (reply.status, reply.body) == (200, {"suiteId": "x"})
