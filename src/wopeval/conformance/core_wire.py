"""The requests the core host legs make (OpenWOP v2 runs.md, events.md), over httpx.

The eval kit's :class:`~wopeval.conformance.client.WireClient` reads eval runs to their end; the
core legs need more of the wire: response headers (``ETag``, ``OpenWOP-Idempotent-Replay``),
conditional and keyed requests, cancel, the poll with any cursor, and raw SSE frames with
``Last-Event-ID``. Every request carries ``OpenWOP-Version: 2.0`` and, but for discovery, the
bearer key; run ids go into paths projected (``~2F``), as the SDK sends them.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any

import anyio
import httpx

from wopeval.conformance.client import WireError, kit_http, project_id

TERMINAL_STATUSES = frozenset({"completed", "failed", "cancelled"})
TERMINAL_EVENTS = frozenset({"run.completed", "run.failed", "run.cancelled"})
# Two reads this far apart that agree mean the log has settled (v2-terminal-event-once uses 2 s).
SETTLE_S = 1.0


@dataclass(frozen=True)
class Answer:
    """One HTTP answer: status, headers and the JSON body (None when not JSON)."""

    status: int
    headers: httpx.Headers
    body: Any

    @property
    def error(self) -> str | None:
        """The envelope's ``error`` code, if the body is an error envelope."""
        code = self.body.get("error") if isinstance(self.body, dict) else None
        return code if isinstance(code, str) else None


@dataclass(frozen=True)
class Frame:
    """One SSE frame: its ``id``, ``event`` and ``data`` (decoded JSON, or the raw text)."""

    id: str | None
    event: str | None
    data: Any


@dataclass
class Stream:
    """What a ``GET /runs/{id}/events`` answered: status, frames, and who ended it."""

    status: int
    frames: list[Frame] = field(default_factory=list)
    closed_by_server: bool = False
    body: Any = None  # the JSON body of a non-200 answer

    @property
    def error(self) -> str | None:
        code = self.body.get("error") if isinstance(self.body, dict) else None
        return code if isinstance(code, str) else None

    def sequences(self) -> list[int]:
        """The frames' ``id``s that are integers, in order."""
        return [int(f.id) for f in self.frames if f.id is not None and f.id.isdigit()]


def _answer(response: httpx.Response) -> Answer:
    try:
        body: Any = response.json()
    except ValueError:
        body = None
    return Answer(response.status_code, response.headers, body)


def parse_frames(text: str) -> list[Frame]:
    """SSE frames (WHATWG event-stream): blank-line separated; comments and ``retry`` ignored."""
    frames: list[Frame] = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        fields: dict[str, list[str]] = {}
        for line in block.split("\n"):
            if not line or line.startswith(":"):
                continue
            name, _, value = line.partition(":")
            fields.setdefault(name, []).append(value.removeprefix(" "))
        if "data" not in fields:
            continue
        raw = "\n".join(fields["data"])
        try:
            data: Any = json.loads(raw)
        except ValueError:
            data = raw
        ids, events = fields.get("id"), fields.get("event")
        frames.append(Frame(ids[-1] if ids else None, events[-1] if events else None, data))
    return frames


class CoreWire:
    """Use as ``async with CoreWire(base_url, api_key) as wire``."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        request_timeout_s: float = 30.0,
    ) -> None:
        self._http = kit_http(
            base_url, transport, request_timeout_s, Authorization=f"Bearer {api_key}"
        )

    @property
    def base_url(self) -> str:
        return str(self._http.base_url).rstrip("/")

    async def __aenter__(self) -> CoreWire:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._http.aclose()

    async def _send(self, method: str, path: str, **kwargs: Any) -> Answer:
        try:
            response = await self._http.request(method, path, **kwargs)
        except httpx.HTTPError as exc:
            raise WireError(f"{method} {path}: {type(exc).__name__}: {exc}") from exc
        return _answer(response)

    async def create(self, body: Any, headers: dict[str, str] | None = None) -> Answer:
        """``POST /runs``."""
        return await self._send("POST", "/runs", json=body, headers=headers or {})

    async def snapshot(self, run_id: str, headers: dict[str, str] | None = None) -> Answer:
        """``GET /runs/{runId}`` (the RunSnapshot)."""
        return await self._send("GET", f"/runs/{project_id(run_id)}", headers=headers or {})

    async def poll(self, run_id: str, **params: Any) -> Answer:
        """``GET /runs/{runId}/events/poll`` with the given query (``timeout`` defaults to 1)."""
        query = {"timeout": 1, **params}
        return await self._send("GET", f"/runs/{project_id(run_id)}/events/poll", params=query)

    async def cancel(self, run_id: str, body: Any = None) -> Answer:
        """``POST /runs/{runId}/cancel``."""
        path = f"/runs/{project_id(run_id)}/cancel"
        return await self._send("POST", path, json={} if body is None else body)

    async def stream(
        self,
        run_id: str,
        *,
        stream_mode: str | None = "debug",
        last_event_id: str | None = None,
        timeout_s: float = 8.0,
    ) -> Stream:
        """Read ``GET /runs/{runId}/events`` until the server ends it or ``timeout_s`` passes."""
        params = {} if stream_mode is None else {"streamMode": stream_mode}
        headers = {"Accept": "text/event-stream", "Cache-Control": "no-cache"}
        if last_event_id is not None:
            headers["Last-Event-ID"] = last_event_id
        path = f"/runs/{project_id(run_id)}/events"
        chunks: list[str] = []
        try:
            async with self._http.stream("GET", path, params=params, headers=headers) as response:
                if response.status_code != 200:
                    await response.aread()
                    return Stream(response.status_code, body=_answer(response).body)
                result = Stream(200)
                with anyio.move_on_after(timeout_s):
                    async for text in response.aiter_text():
                        chunks.append(text)
                    result.closed_by_server = True
        except httpx.HTTPError as exc:
            raise WireError(f"GET {path}: {type(exc).__name__}: {exc}") from exc
        result.frames = parse_frames("".join(chunks))
        return result

    async def wait_status(
        self, run_id: str, done: Callable[[str], bool], timeout_s: float
    ) -> str | None:
        """Read the snapshot until ``done(status)``; the last status read (None if unreadable)."""
        deadline = time.monotonic() + timeout_s
        status: str | None = None
        while True:
            answer = await self.snapshot(run_id)
            body = answer.body if isinstance(answer.body, dict) else {}
            status = str(body.get("status")) if answer.status == 200 else None
            if status is not None and done(status):
                return status
            if time.monotonic() > deadline:
                return status
            await anyio.sleep(0.05)

    async def log(self, run_id: str) -> list[dict[str, Any]] | None:
        """The whole log in one poll without a cursor (None when the poll does not answer 200)."""
        answer = await self.poll(run_id)
        events = answer.body.get("events") if isinstance(answer.body, dict) else None
        if answer.status != 200 or not isinstance(events, list):
            return None
        return [e for e in events if isinstance(e, dict)]

    async def settled_log(self, run_id: str, bound_s: float = 10.0) -> list[dict[str, Any]] | None:
        """Re-read the log until two reads :data:`SETTLE_S` apart have the same length."""
        deadline = time.monotonic() + bound_s
        last = await self.log(run_id)
        while time.monotonic() < deadline:
            await anyio.sleep(SETTLE_S)
            now = await self.log(run_id)
            if now is None or (last is not None and len(now) == len(last)):
                return now if now is not None else last
            last = now
        return last


def types_of(events: list[dict[str, Any]]) -> list[str]:
    return [str(event.get("type")) for event in events]
