"""The HTTP transport under a run's model client when a cassette is in force
(:mod:`wopeval.agents.cassette`): recording wraps the real transport and keeps each trial's
requests and responses; replaying answers from the cassette and has no transport under it, so
it cannot open a socket. A forked run's (``prefix`` mode) answers from the cassette while its
trial is inside the prefix, then passes requests to the real transport, unrecorded.

A request outside a trial (the model check before the run) is passed through unrecorded when
recording and refused as unreachable when replaying (the check then proves nothing, as for a
server that is down).
"""

from __future__ import annotations

import json
from types import ModuleType
from typing import Any

from wopeval.agents.cassette import Cassette, current_tape

__all__ = ["cassette_transport"]


def _body(content: bytes) -> Any:
    """A request's or response's body as stored: its JSON, else its text."""
    try:
        return json.loads(content) if content else None
    except ValueError:
        return content.decode("utf-8", "replace")


def _content(body: Any) -> bytes:
    if body is None:
        return b""
    if isinstance(body, str):
        return body.encode()
    return json.dumps(body, ensure_ascii=False).encode()


def cassette_transport(httpx: ModuleType, cassette: Cassette, inner: Any | None) -> Any:
    """A transport of the HTTP package ``httpx`` that records into (over ``inner``) or replays
    from ``cassette`` (in ``prefix`` mode: replays, then passes on to ``inner``)."""

    class CassetteTransport(httpx.AsyncBaseTransport):  # type: ignore[name-defined,misc]
        async def handle_async_request(self, request: Any) -> Any:
            tape = current_tape()
            method, path = request.method, request.url.path
            if cassette.mode == "replay":
                if tape is None:
                    raise httpx.ConnectError(
                        "a replayed run reaches no model server", request=request
                    )
                return await self._replayed(request, tape)
            if cassette.mode == "prefix" and tape is not None and not tape.live:
                return await self._replayed(request, tape)
            assert inner is not None  # a recording (or a fork) has the real transport under it
            response = await inner.handle_async_request(request)
            if tape is None or cassette.mode == "prefix":  # the fork's live part: unrecorded
                return response
            content = await response.aread()
            await response.aclose()
            kept = {
                "status": response.status_code,
                "body": _body(content),
                "contentType": response.headers.get("content-type", "application/json"),
            }
            cassette.record(tape, method, path, _body(await request.aread()), kept)
            headers = {"content-type": kept["contentType"]}
            return httpx.Response(
                response.status_code, headers=headers, content=content, request=request
            )

        async def _replayed(self, request: Any, tape: Any) -> Any:
            body = _body(await request.aread())
            recorded = cassette.find(tape, request.method, request.url.path, body)
            headers = {"content-type": recorded.get("contentType", "application/json")}
            return httpx.Response(
                recorded["status"],
                headers=headers,
                content=_content(recorded["body"]),
                request=request,
            )

        async def aclose(self) -> None:
            if inner is not None:
                await inner.aclose()

    return CassetteTransport()
