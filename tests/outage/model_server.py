"""A loopback OpenAI-compatible server that fails the way outages do, on a real socket.

``GET /v1/models/{id}`` answers the model (200) when it is one of ``models``, else a 404 as
``not_found`` says: OpenAI's (``model_not_found``), vLLM's (a message naming the model) or a
server's without that route (``{"detail": "Not Found"}``). ``POST /v1/chat/completions``
answers by ``mode``: ``answer`` (an assistant message), ``error-500`` (every request, with a 1 ms
``retry-after-ms`` so the SDK's retries are quick) or ``hang`` (never answers while the server
is open); in ``error-500`` mode ``GET`` answers 500 too. With ``fail_first=n`` the first ``n``
completion requests answer 500 whatever the mode (an outage that passes). ``refused_url()`` is
a URL nothing listens on. Every request's method and path is kept in ``requests``.
"""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Literal

from wopeval.agents.scripted_openai import Reply, completion_json

Mode = Literal["answer", "error-500", "hang"]
NotFound = Literal["openai", "vllm", "route"]


def refused_url() -> str:
    """An OpenAI base URL on a loopback port nothing listens on (connections are refused)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


class ModelServer:
    """``with ModelServer("error-500") as server: server.base_url``."""

    def __init__(
        self,
        mode: Mode,
        *,
        models: tuple[str, ...] = ("m1",),
        not_found: NotFound = "openai",
        answer: str = "late",
        fail_first: int = 0,
    ) -> None:
        self.mode = mode
        self.fail_first = fail_first
        self.not_found = not_found
        self.models = models
        self.answer = answer
        self.requests: list[tuple[str, str]] = []
        self._released = threading.Event()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    @property
    def completions(self) -> int:
        return sum(1 for method, _ in self.requests if method == "POST")

    def __enter__(self) -> ModelServer:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._released.set()  # a hanging answer returns, so its thread ends
        self._server.shutdown()
        self._server.server_close()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_GET(self) -> None:
                server.requests.append(("GET", self.path))
                model = self.path.removeprefix("/v1/models/")
                if server.mode == "error-500":
                    self._send(500, {"error": {"message": "overloaded", "type": "server_error"}})
                elif model in server.models:
                    self._send(200, {"id": model, "object": "model", "created": 0,
                                     "owned_by": "test"})  # fmt: skip
                else:
                    self._send(404, _not_found(server.not_found, model))

            def do_POST(self) -> None:
                server.requests.append(("POST", self.path))
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if server.mode == "error-500" or server.completions <= server.fail_first:
                    error = {"error": {"message": "upstream failed", "type": "server_error"}}
                    self._send(500, error, {"retry-after-ms": "1"})
                    return
                if server.mode == "hang":
                    server._released.wait(60)
                    return
                reply = Reply(content=server.answer)
                self._send(200, completion_json(reply, str(body.get("model")), 0))

            def _send(
                self, status: int, doc: dict[str, Any], headers: dict[str, str] | None = None
            ) -> None:
                data = json.dumps(doc).encode("utf-8")
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

        return Handler


def _not_found(style: NotFound, model: str) -> dict[str, Any]:
    if style == "route":
        return {"detail": "Not Found"}
    if style == "vllm":
        return {"error": {"message": f"The model `{model}` does not exist.", "code": 404}}
    message = f"The model '{model}' does not exist"
    return {"error": {"message": message, "type": "invalid_request_error",
                      "code": "model_not_found"}}  # fmt: skip
