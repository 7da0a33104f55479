"""The HTTP floor of ``bench/host.py``: the host's server stack answering ``POST /runs`` with no
work behind it.

``python bench/http_floor.py PORT`` serves a FastAPI app whose only route reads the JSON body and
answers ``201`` with a created-run body, in uvicorn configured as ``wopeval serve`` configures it
(the same protocol and loop implementations: uvicorn's ``auto``, which picks httptools and uvloop
only when installed; ``proxy_headers`` off; a TCP socket bound with ``IPPROTO_TCP`` so accepted
connections get ``TCP_NODELAY``). No store, no suite, no run: what any create over this stack
costs at least, on the same machine and with the same clients as the host.
"""

from __future__ import annotations

import json
import socket
import sys

import uvicorn
from fastapi import FastAPI, Request, Response
from fastapi.responses import JSONResponse


def floor_app() -> FastAPI:
    app = FastAPI(docs_url=None, redoc_url=None, openapi_url=None)
    counter = iter(range(1 << 62))

    @app.post("/runs")
    async def create(request: Request) -> Response:
        body = json.loads(await request.body())
        run_id = f"bench/{next(counter):026d}"
        url = f"{str(request.base_url).rstrip('/')}/runs/{run_id.replace('/', '~2F')}"
        created = {"runId": run_id, "status": "pending", "eventsUrl": f"{url}/events",
                   "statusUrl": url, "workflowId": body.get("evalSuiteRef")}  # fmt: skip
        return JSONResponse(created, status_code=201, headers={"Location": url})

    @app.get("/.well-known/openwop")
    async def ready() -> Response:
        return JSONResponse({})

    return app


def main() -> None:
    port = int(sys.argv[1])
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    config = uvicorn.Config(floor_app(), log_level="warning", proxy_headers=False)
    uvicorn.Server(config).run(sockets=[sock])


if __name__ == "__main__":
    main()
