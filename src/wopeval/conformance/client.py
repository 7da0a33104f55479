"""A small client for the OpenWOP v2 eval lane (openwop-wire.md §1–§4), over httpx.

Discovery is unauthenticated; every other request carries ``Authorization: Bearer``. Every
request carries ``OpenWOP-Version: 2.0``. Run ids go into paths in their projected form
(identity.md §5): every UTF-8 byte outside ``[A-Za-z0-9._-]`` becomes ``~XX``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import anyio
import httpx

from wopeval.conformance.catalog import SCRIPTED_AGENT_ID, Fixture
from wopeval.errors import WopevalError

PROTOCOL_VERSION = "2.0"
CLIENT_VERSION = "2.46.32"
TERMINAL_STATUSES = frozenset({"completed", "failed", "cancelled"})
_SAFE = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-")


class WireError(WopevalError):
    """The host answered in a way the wire does not allow, or not at all."""


def project_id(run_id: str) -> str:
    """The path form of an id: each UTF-8 byte outside ``[A-Za-z0-9._-]`` becomes ``~XX``."""
    return "".join(chr(b) if b in _SAFE else f"~{b:02X}" for b in run_id.encode("utf-8"))


@dataclass(frozen=True)
class Reply:
    """A decoded HTTP answer: the status and the JSON body (None when not JSON)."""

    status: int
    body: Any


@dataclass(frozen=True)
class RunLog:
    """A run read to its end: its events in sequence order and its terminal status."""

    run_id: str
    status: str
    events: list[dict[str, Any]]


def _decode(response: httpx.Response) -> Reply:
    try:
        body: Any = response.json()
    except ValueError:
        body = None
    return Reply(response.status_code, body)


def kit_http(
    base_url: str,
    transport: httpx.AsyncBaseTransport | None,
    timeout_s: float,
    **headers: str,
) -> httpx.AsyncClient:
    """The kit's HTTP client: the host's base URL and the OpenWOP version headers."""
    return httpx.AsyncClient(
        base_url=base_url.rstrip("/"),
        transport=transport,
        timeout=timeout_s,
        headers={"OpenWOP-Version": PROTOCOL_VERSION, "OpenWOP-Client-Version": CLIENT_VERSION,
                 **headers},
    )  # fmt: skip


class WireClient:
    """The requests the kit makes. Use as ``async with WireClient(...) as client``."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        request_timeout_s: float = 70.0,
    ) -> None:
        self._http = kit_http(base_url, transport, request_timeout_s, Accept="application/json")
        self._auth = {"Authorization": f"Bearer {api_key}"}

    async def __aenter__(self) -> WireClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._http.aclose()

    async def _get(self, path: str, *, auth: bool = True, **params: Any) -> Reply:
        try:
            response = await self._http.get(path, params=params, headers=self._auth if auth else {})
        except httpx.HTTPError as exc:
            raise WireError(f"GET {path}: {type(exc).__name__}: {exc}") from exc
        return _decode(response)

    async def discovery(self) -> Reply:
        """``GET /.well-known/openwop`` (unauthenticated)."""
        return await self._get("/.well-known/openwop", auth=False)

    async def create_eval_run(self, fixture: Fixture) -> Reply:
        """``POST /runs`` in eval mode for a fixture suite, on the scripted agent."""
        body = {"mode": "eval", "evalSuiteRef": fixture.suite_ref, "agentId": SCRIPTED_AGENT_ID}
        try:
            response = await self._http.post("/runs", json=body, headers=self._auth)
        except httpx.HTTPError as exc:
            raise WireError(f"POST /runs: {type(exc).__name__}: {exc}") from exc
        return _decode(response)

    async def poll(self, run_id: str, after: int | None, timeout_s: int) -> Reply:
        """``GET /runs/{id}/events/poll``: events after ``after`` (all when None)."""
        params: dict[str, Any] = {"timeout": timeout_s}
        if after is not None:
            params["afterSequence"] = after
        return await self._get(f"/runs/{project_id(run_id)}/events/poll", **params)

    async def eval_summary(self, run_id: str) -> Reply:
        """``GET /runs/{id}/eval-summary``."""
        return await self._get(f"/runs/{project_id(run_id)}/eval-summary")

    async def read_run(self, run_id: str, *, deadline_s: float, poll_timeout_s: int = 5) -> RunLog:
        """Poll a run to its terminal state and return every event (debug semantics)."""
        events: dict[int, dict[str, Any]] = {}
        until = time.monotonic() + deadline_s
        while True:
            last = max(events) if events else None
            reply = await self.poll(run_id, last, poll_timeout_s)
            body = reply.body
            if reply.status != 200 or not isinstance(body, dict):
                raise WireError(f"poll of {run_id} answered {reply.status}")
            for event in body.get("events") or []:
                if isinstance(event, dict) and isinstance(event.get("sequence"), int):
                    events.setdefault(event["sequence"], event)
            caught_up = body.get("lastSequence") == (max(events) if events else -1)
            if body.get("isTerminal") is True and caught_up:
                ordered = [events[sequence] for sequence in sorted(events)]
                return RunLog(run_id, str(body.get("status")), ordered)
            if time.monotonic() > until:
                raise WireError(f"run {run_id} did not reach a terminal state in {deadline_s:g} s")
            if not body.get("events"):
                await anyio.sleep(0.05)

    async def read_summary(self, run_id: str, *, attempts: int = 20) -> Reply:
        """The eval summary; a ``409`` right after the terminal event is retried briefly."""
        reply = await self.eval_summary(run_id)
        for _ in range(attempts):
            if reply.status != 409:
                break
            await anyio.sleep(0.1)
            reply = await self.eval_summary(run_id)
        return reply
