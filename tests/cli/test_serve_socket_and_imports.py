"""`serve`'s socket gives keep-alive connections TCP_NODELAY; `run` imports no numpy/scipy."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys

from wopeval.cli.serve_cmd import _listen


async def test_accepted_connections_get_tcp_nodelay() -> None:
    sock = _listen("127.0.0.1", 0)
    sock.listen()
    seen: list[int] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        accepted = writer.get_extra_info("socket")
        seen.append(accepted.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
        writer.close()

    server = await asyncio.start_server(handle, sock=sock)
    host, port = sock.getsockname()[:2]
    reader, writer = await asyncio.open_connection(host, port)
    await reader.read()
    writer.close()
    server.close()
    await server.wait_closed()
    assert seen
    assert seen[0] != 0  # asyncio set TCP_NODELAY: the socket's proto is TCP


def test_the_run_command_and_the_run_service_import_no_numpy_or_scipy() -> None:
    code = (
        "import sys\n"
        "import wopeval.cli.run_cmds, wopeval.service.runs, wopeval.engine.run\n"
        "print(sorted(m for m in ('numpy', 'scipy') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout
