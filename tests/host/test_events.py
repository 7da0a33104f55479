"""The events channel: SSE frames, stream modes, resume, batching, keep-alive, and the poll.

Reading a run's events changes nothing: the tests that read a finished run read one run, made
once per store for the module on a host of the module (:func:`completed`).
"""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
import pytest_asyncio

from tests.host.helpers import (
    ON_SHARED_HOST,
    SLOW_AGENT,
    SLOW_REF,
    Host,
    auth,
    eval_body,
    module_host,
    running_host,
    segment,
    serving,
)
from tests.host.wire_schemas import validate_error, validate_event
from wopeval.host import events_api


def parse_sse(text: str) -> list[dict[str, Any]]:
    """SSE frames as dicts of their fields (``data`` decoded); comments as ``{"comment": ...}``."""
    frames: list[dict[str, Any]] = []
    for block in text.split("\n\n"):
        if not block.strip():
            continue
        frame: dict[str, Any] = {}
        for line in block.split("\n"):
            if line.startswith(":"):
                frame["comment"] = line[1:].strip()
                continue
            field, _, value = line.partition(": ")
            frame[field] = json.loads(value) if field == "data" else value
        frames.append(frame)
    return frames


async def _sse(host: Host, run_id: str, query: str = "", **headers: str) -> list[dict[str, Any]]:
    path = f"/runs/{segment(run_id)}/events{query}"
    async with host.client.stream("GET", path, headers={**auth(), **headers}) as response:
        assert response.status_code == 200, await response.aread()
        assert response.headers["content-type"].startswith("text/event-stream")
        assert response.headers["openwop-version"] == "2.0"
        body = (await response.aread()).decode()
    return [f for f in parse_sse(body) if "data" in f]


host = module_host("host")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def completed(host: Host) -> tuple[str, list[dict[str, Any]]]:
    """A run of the module's host, completed; its id and log."""
    run_id = await host.run_id()
    await host.wait_terminal(run_id)
    log = [e.to_wire() for e in await host.state.store.events(run_id)]
    return run_id, log


@ON_SHARED_HOST
async def test_sse_default_updates_carries_run_and_eval_events_only(
    host: Host, completed: tuple[str, list[dict[str, Any]]]
) -> None:
    run_id, log = completed
    frames = await _sse(host, run_id)
    explicit = await _sse(host, run_id, "?streamMode=updates&resumable=true")
    expected = [e for e in log if e["type"].startswith(("run.", "eval."))]
    assert [f["data"] for f in frames] == expected == [f["data"] for f in explicit]
    for frame in frames:
        assert frame["id"] == str(frame["data"]["sequence"])
        assert frame["event"] == frame["data"]["type"]
        validate_event(frame["data"])
    assert frames[-1]["event"] == "run.completed"


@ON_SHARED_HOST
async def test_sse_debug_carries_the_whole_log(
    host: Host, completed: tuple[str, list[dict[str, Any]]]
) -> None:
    run_id, log = completed
    debug = await _sse(host, run_id, "?streamMode=debug")
    mixed = await _sse(host, run_id, "?streamMode=updates,debug")
    assert [f["data"] for f in debug] == log
    assert {"agent.tool-called", "provider.usage"} <= {f["event"] for f in debug}
    assert [f["data"] for f in mixed] == log
    assert {f["event"] for f in mixed} == {"updates", "debug"}
    for frame in mixed:
        is_update = frame["data"]["type"].startswith(("run.", "eval."))
        assert frame["event"] == ("updates" if is_update else "debug")


@pytest.mark.parametrize("mode", ["values", "messages", "bogus", "updates,values", "Updates"])
@ON_SHARED_HOST
async def test_sse_unsupported_stream_mode(
    host: Host, completed: tuple[str, list[dict[str, Any]]], mode: str
) -> None:
    run_id, _ = completed
    response = await host.get(f"/runs/{segment(run_id)}/events?streamMode={mode}")
    assert response.status_code == 400
    body = response.json()
    validate_error(body)
    assert body["error"] == "unsupported_stream_mode"
    assert body["details"]["supported"] == ["updates", "debug"]


@ON_SHARED_HOST
async def test_sse_resumes_after_last_event_id(
    host: Host, completed: tuple[str, list[dict[str, Any]]]
) -> None:
    run_id, log = completed
    middle = log[len(log) // 2]["sequence"]
    resumed = await _sse(host, run_id, "?streamMode=debug", **{"Last-Event-ID": str(middle)})
    at_end = await _sse(
        host, run_id, "?streamMode=debug", **{"Last-Event-ID": str(log[-1]["sequence"])}
    )
    bad = await host.get(f"/runs/{segment(run_id)}/events", headers={"Last-Event-ID": "x"})
    assert [f["data"]["sequence"] for f in resumed] == [
        e["sequence"] for e in log if e["sequence"] > middle
    ]
    assert at_end == []  # a terminal run with nothing left: the stream closes at once
    assert bad.status_code == 400
    assert bad.json()["details"]["field"] == "Last-Event-ID"


@ON_SHARED_HOST
async def test_sse_buffer_ms_batches_frames(
    host: Host, completed: tuple[str, list[dict[str, Any]]]
) -> None:
    run_id, log = completed
    frames = await _sse(host, run_id, "?streamMode=debug&bufferMs=50")
    too_big = await host.get(f"/runs/{segment(run_id)}/events?bufferMs=5001")
    bad_flag = await host.get(f"/runs/{segment(run_id)}/events?resumable=maybe")
    assert frames
    assert all(f["event"] == "batch" for f in frames)
    flattened = [doc for f in frames for doc in f["data"]]
    assert flattened == log
    for frame in frames:
        assert frame["id"] == str(frame["data"][-1]["sequence"])
    assert too_big.status_code == bad_flag.status_code == 400
    assert too_big.json()["details"]["field"] == "bufferMs"
    assert bad_flag.json()["details"]["field"] == "resumable"


def test_sse_keep_alive_then_closes_after_cancel(
    store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Over a real socket (the ASGI test transport buffers whole responses)."""
    monkeypatch.setattr(events_api, "KEEPALIVE_S", 0.05)
    text = ""
    with serving(store_url) as server, httpx.Client(base_url=server.base_url) as client:
        created = client.post("/runs", json=eval_body(SLOW_REF, agent=SLOW_AGENT), headers=auth())
        path = f"/runs/{segment(created.json()['runId'])}"
        with client.stream("GET", f"{path}/events", headers=auth()) as response:
            cancelled = None
            for chunk in response.iter_text():
                text += chunk
                if ": keep-alive" in text and cancelled is None:
                    cancelled = client.post(f"{path}/cancel", headers=auth())
    frames = parse_sse(text)
    assert any(f.get("comment") == "keep-alive" for f in frames)
    assert cancelled is not None
    assert cancelled.json()["status"] == "cancelled"
    events = [f for f in frames if "data" in f]
    assert events[-1]["event"] == "run.cancelled"


@ON_SHARED_HOST
async def test_poll_returns_events_after_cursor(
    host: Host, completed: tuple[str, list[dict[str, Any]]]
) -> None:
    run_id, log = completed
    last = log[-1]["sequence"]
    everything = (await host.get(f"/runs/{segment(run_id)}/events/poll")).json()
    tail = (await host.get(f"/runs/{segment(run_id)}/events/poll?afterSequence=3")).json()
    legacy = (await host.get(f"/runs/{segment(run_id)}/events/poll?since=3")).json()
    past = (await host.get(f"/runs/{segment(run_id)}/events/poll?afterSequence=999")).json()
    assert everything == {
        "runId": run_id,
        "events": log,
        "lastSequence": last,
        "status": "completed",
        "isTerminal": True,
    }
    assert tail["events"] == [e for e in log if e["sequence"] > 3] == legacy["events"]
    assert past["events"] == []
    assert past["lastSequence"] == last


@ON_SHARED_HOST
async def test_poll_pages_never_make_a_client_skip_events(
    host: Host, completed: tuple[str, list[dict[str, Any]]]
) -> None:
    """The SDK's loop feeds ``lastSequence`` back as ``afterSequence``: over pages of 3 it
    reads every event exactly once, in order; an uncut page reports the log's end."""
    run_id, log = completed
    seen: list[int] = []
    cursor: int | None = None
    for _ in range(len(log) + 2):
        query = "limit=3" + (f"&afterSequence={cursor}" if cursor is not None else "")
        page = (await host.get(f"/runs/{segment(run_id)}/events/poll?{query}")).json()
        seen += [e["sequence"] for e in page["events"]]
        if not page["events"]:
            break
        cursor = page["lastSequence"]
    whole = (await host.get(f"/runs/{segment(run_id)}/events/poll?limit=1000")).json()
    assert len(log) > 3
    assert seen == [e["sequence"] for e in log]
    assert whole["lastSequence"] == log[-1]["sequence"]


async def test_poll_long_polls_a_running_run(store_url: str) -> None:
    async with running_host(store_url) as host:
        run_id = await host.run_id(eval_body(SLOW_REF, agent=SLOW_AGENT))
        await host.wait_event(run_id, "agent.invocation-started")
        first = (await host.get(f"/runs/{segment(run_id)}/events/poll")).json()
        cursor = first["lastSequence"]
        waited = (
            await host.get(f"/runs/{segment(run_id)}/events/poll?afterSequence={cursor}&timeout=1")
        ).json()
    assert first["events"]
    assert not first["isTerminal"]
    assert waited["events"] == []
    assert waited["lastSequence"] == cursor
    assert waited["status"] == "running"
    assert waited["isTerminal"] is False


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("timeout=0", "timeout"),
        ("timeout=61", "timeout"),
        ("timeout=soon", "timeout"),
        ("afterSequence=-2", "afterSequence"),
        ("afterSequence=x", "afterSequence"),
    ],
)
@ON_SHARED_HOST
async def test_poll_parameters_validated(
    host: Host, completed: tuple[str, list[dict[str, Any]]], query: str, field: str
) -> None:
    run_id, _ = completed
    response = await host.get(f"/runs/{segment(run_id)}/events/poll?{query}")
    assert response.status_code == 400
    validate_error(response.json())
    assert response.json()["details"]["field"] == field
