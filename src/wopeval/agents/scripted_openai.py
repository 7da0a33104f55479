"""A scripted OpenAI-compatible chat-completions server on a real loopback socket.

For offline tests and benchmarks of anything speaking the protocol (wopeval's own agent and
judge, or yours): each ``POST /v1/chat/completions`` is answered by the next step of a script —
a :class:`Reply` (an assistant message, optionally with tool calls), an :class:`HttpError`
(status, body, headers such as ``retry-after-ms``), or a callable of the request body returning
either. Every request body is kept in ``requests``; ``connections`` counts the TCP connections
accepted and ``open_connections`` those not yet closed (by either side). Runs in its own thread
(stdlib ``ThreadingHTTPServer``), so it is independent of the caller's event loop.
"""

from __future__ import annotations

import functools
import itertools
import json
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: str  # the raw text the model "wrote": may be invalid JSON on purpose
    id: str = ""


@dataclass(frozen=True)
class Reply:
    content: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    prompt_tokens: int = 10
    completion_tokens: int = 5


@dataclass(frozen=True)
class HttpError:
    status: int
    message: str = "scripted error"
    headers: dict[str, str] = field(default_factory=dict)


Step = Reply | HttpError | Callable[[dict[str, Any]], "Reply | HttpError"]


def call(name: str, args: Any) -> ToolCall:
    """A tool call with JSON arguments."""
    return ToolCall(name, args if isinstance(args, str) else json.dumps(args))


def completion_json(reply: Reply, model: str, serial: int) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.tool_calls:
        message["tool_calls"] = [
            {
                "id": tc.id or f"call_{serial}_{i}",
                "type": "function",
                "function": {"name": tc.name, "arguments": tc.arguments},
            }
            for i, tc in enumerate(reply.tool_calls)
        ]
    usage = {
        "prompt_tokens": reply.prompt_tokens,
        "completion_tokens": reply.completion_tokens,
        "total_tokens": reply.prompt_tokens + reply.completion_tokens,
    }
    return {
        "id": f"chatcmpl-{serial}",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if reply.tool_calls else "stop",
            }
        ],
        "usage": usage,
    }


class ScriptedOpenAI:
    """``with ScriptedOpenAI(steps) as server: server.base_url`` (``…/v1``)."""

    def __init__(self, steps: Iterable[Step], *, repeat_last: bool = False) -> None:
        self._steps = list(steps)
        self._repeat_last = repeat_last
        self._lock = threading.Lock()
        self._serial = itertools.count()
        self.requests: list[dict[str, Any]] = []
        self.connections = 0
        self.open_connections = 0
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        # shutdown() waits for the serve loop to notice, which it does once per poll_interval
        # (0.5 s by default): short, so leaving the ``with`` block costs no half second.
        serve = functools.partial(self._server.serve_forever, poll_interval=0.02)
        self._thread = threading.Thread(target=serve, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def __enter__(self) -> ScriptedOpenAI:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _next(self, body: dict[str, Any]) -> tuple[Reply | HttpError, int]:
        with self._lock:
            self.requests.append(body)
            serial = next(self._serial)
            if self._steps and (len(self._steps) > 1 or not self._repeat_last):
                step = self._steps.pop(0)
            elif self._steps:
                step = self._steps[0]
            else:
                step = HttpError(500, "the script has no more steps")
        return (step(body) if callable(step) else step), serial

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # no 40 ms delayed-ACK stall per answer

            def log_message(self, format: str, *args: Any) -> None:
                return

            def setup(self) -> None:
                super().setup()
                with server._lock:
                    server.connections += 1
                    server.open_connections += 1

            def finish(self) -> None:
                try:
                    super().finish()
                finally:
                    with server._lock:
                        server.open_connections -= 1

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                step, serial = server._next(body)
                if isinstance(step, HttpError):
                    error = {"error": {"message": step.message, "type": "scripted"}}
                    self._send(step.status, error, step.headers)
                    return
                self._send(200, completion_json(step, str(body.get("model")), serial), {})

            def _send(self, status: int, doc: dict[str, Any], headers: dict[str, str]) -> None:
                data = json.dumps(doc).encode("utf-8")
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

        return Handler
