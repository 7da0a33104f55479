"""Event cursors: ``Last-Event-ID`` (SSE) is validated exactly like the poll's ``afterSequence``.

A cursor beyond a signed 64-bit integer used to reach SQLite and abort the stream with an
``OverflowError``; now both endpoints answer the same ``400 validation_error`` naming the cursor.

Refused cursors and paths leave nothing behind: those tests ask one host per store for the
module, in process (:func:`completed`) and over a real socket (:func:`served`), of one run each.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
import pytest_asyncio

from tests.host.helpers import (
    Host,
    ServerThread,
    auth,
    eval_body,
    segment,
    serving,
    shared_host,
)
from tests.host.wire_schemas import validate_error
from wopeval.host.events_api import MAX_CURSOR

BAD_CURSORS = [
    str(2**63),  # the reported value: SQLite's INTEGER overflows
    str(2**64 + 1),
    str(MAX_CURSOR + 1),
    "-1",
    "-9223372036854775809",
    "9" * 5000,  # beyond int()'s digit limit
    "1_0",  # int() would read 10
    "1.5",
    "abc",
]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def completed(module_store_url: str) -> AsyncIterator[tuple[Host, str]]:
    """The module's in-process host and a completed run of it."""
    async with shared_host(module_store_url) as host:
        run_id = await host.run_id()
        await host.wait_terminal(run_id)
        yield host, run_id


@pytest.fixture(scope="module")
def served(module_store_url: str) -> Iterator[tuple[ServerThread, str]]:
    """The module's host on a real socket and a run of it (a completed one: its log is read)."""
    with serving(module_store_url) as server, httpx.Client(base_url=server.base_url) as client:
        run_id = client.post("/runs", json=eval_body(), headers=auth()).json()["runId"]
        path, query = f"/runs/{segment(run_id)}/events/poll", {"timeout": 5}
        for _ in range(60):  # long polls, each answered by the run's next events
            page = client.get(path, params=query, headers=auth()).json()
            if page["isTerminal"]:
                break
            query["afterSequence"] = page["lastSequence"]
        yield server, run_id


@pytest.mark.asyncio(loop_scope="module")
@pytest.mark.parametrize("cursor", BAD_CURSORS, ids=lambda c: c[:24])
async def test_last_event_id_out_of_range_is_the_poll_cursor_refusal(
    completed: tuple[Host, str], cursor: str
) -> None:
    host, run_id = completed
    sse = await host.get(f"/runs/{segment(run_id)}/events", headers={"Last-Event-ID": cursor})
    poll = await host.get(f"/runs/{segment(run_id)}/events/poll?afterSequence={cursor}")
    for response, field in ((sse, "Last-Event-ID"), (poll, "afterSequence")):
        assert response.status_code == 400, response.text
        body = response.json()
        validate_error(body)
        assert body["error"] == "validation_error"
        assert body["details"] == {"field": field}
        assert len(body["message"]) < 200  # a huge cursor is not echoed whole
    assert sse.json()["message"].replace("Last-Event-ID", "afterSequence") == poll.json()["message"]


@pytest.mark.asyncio(loop_scope="module")
async def test_the_highest_cursor_is_served(completed: tuple[Host, str]) -> None:
    host, run_id = completed
    path = f"/runs/{segment(run_id)}/events"
    sse = await host.get(path, headers={"Last-Event-ID": f" {MAX_CURSOR} "})
    poll = await host.get(f"{path}/poll?afterSequence={MAX_CURSOR}&timeout=1")
    assert sse.status_code == 200
    assert "data:" not in sse.text  # a terminal run past its end: the stream closes at once
    assert poll.status_code == 200
    assert poll.json()["events"] == []


def test_last_event_id_2_63_over_a_real_socket(served: tuple[ServerThread, str]) -> None:
    """The reproduction: uvicorn, a completed run, ``Last-Event-ID: 9223372036854775808``."""
    server, run_id = served
    with httpx.Client(base_url=server.base_url) as client:
        path = f"/runs/{segment(run_id)}/events"
        poll = client.get(path + "/poll?timeout=5", headers=auth())
        response = client.get(path, headers={**auth(), "Last-Event-ID": str(2**63)})
    assert poll.json()["isTerminal"] is True
    assert response.status_code == 400
    assert response.json()["details"]["field"] == "Last-Event-ID"


@pytest.mark.parametrize(
    ("escape", "status"),
    [("~2F", 200), ("%2F", 200), ("%252F", 200), ("%25252F", 400), ("~252F", 400)],
)
def test_run_id_path_decoding_is_single_pass_after_the_server(
    served: tuple[ServerThread, str], escape: str, status: int
) -> None:
    """The server percent-decodes the path once; the segment is then un-projected once, taking
    ``~XX`` and ``%XX`` alike (as the SDK's ``unproject_id``). So ``%252F`` (the server leaves
    ``%2F``) names the run, and any further layer is malformed (identity.md §5: ``400``),
    never decoded again."""
    server, run_id = served
    with httpx.Client(base_url=server.base_url) as client:
        response = client.get("/runs/" + run_id.replace("/", escape), headers=auth())
    assert response.status_code == status
    if status == 200:
        assert response.json()["runId"] == run_id
    else:
        assert response.json()["details"] == {"field": "runId"}
