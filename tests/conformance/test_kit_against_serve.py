"""The conformance kit against ``wopeval serve`` on a real socket, on both stores.

Twice, as the conformance issue asks: with every facet advertised (every leg executed-pass but the
refusal leg, inapplicable), and with ``trials`` switched off in the config (the refusal leg
executed-pass, the trials legs inapplicable). Both with ``--require-behavior``. Then once more
with ``--extended``: every ``wopeval.ext.*`` leg executed-pass, the eight RFC results unchanged.
The host with every facet is a ``wopeval serve`` process, made once per store for the module with
the plain kit's answer from it (the kit only adds runs of its own); other configs are the same
app on a real socket in this process (:func:`hosting`), the command's start-up being tested
elsewhere (tests/host/test_serve_cmd.py).
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.host.helpers import ServerThread
from wopeval.cli.app import app
from wopeval.conformance import catalog as C
from wopeval.host.app import create_app
from wopeval.host.config import parse_config

KEY = "conformance-key-123456"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def serving(store_url: str, config: dict[str, Any], tmp_path: Path) -> Iterator[str]:
    config_file = tmp_path / "host.json"
    config_file.write_text(json.dumps(_host_config(config)))
    port = _free_port()
    command = [sys.executable, "-m", "wopeval.cli", "serve", "--port", str(port),
               "--store", store_url, "--config", str(config_file)]  # fmt: skip
    log = tmp_path / "serve.log"
    with log.open("w") as stderr:
        server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=stderr)
    try:
        deadline = time.monotonic() + 30
        while True:
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if server.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"serve did not start: {log.read_text()}")
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(timeout=30)


def _host_config(config: dict[str, Any]) -> dict[str, Any]:
    return {"apiKeys": [{"key": KEY, "tenant": "kit"}], **config}


@contextmanager
def hosting(store_url: str, config: dict[str, Any]) -> Iterator[str]:
    """The host as ``wopeval serve --config`` makes it, on a real socket, served by a thread of
    this process; its base URL."""
    app = create_app(parse_config(_host_config(config)), store_url=store_url)
    with ServerThread(app) as server:
        yield server.base_url


def _kit(base_url: str, *extra: str) -> tuple[int, dict[str, str]]:
    result = CliRunner().invoke(app, ["conformance", "--base-url", base_url, "--api-key", KEY,
                                      "--require-behavior", "--json", *extra])  # fmt: skip
    doc = json.loads(result.output)
    assert doc.get("extended", False) is ("--extended" in extra)
    statuses = {r["requirement"]: r["status"] for r in doc["results"]}
    return result.exit_code, statuses


@pytest.fixture(scope="module")
def every_facet(module_store_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """``wopeval serve`` with its default config (every facet advertised); its base URL."""
    with serving(module_store_url, {}, tmp_path_factory.mktemp("serve")) as base_url:
        yield base_url


@pytest.fixture(scope="module")
def plain_kit(every_facet: str) -> tuple[int, dict[str, str]]:
    """The kit (``--require-behavior``) against :func:`every_facet`."""
    return _kit(every_facet)


def test_0244_kit_passes_wopeval_serve_with_every_facet(
    plain_kit: tuple[int, dict[str, str]],
) -> None:
    code, statuses = plain_kit[0], dict(plain_kit[1])
    assert code == 0, statuses
    refusal = statuses.pop("0244.unadvertised-feature-refused")
    assert refusal == "inapplicable"
    assert set(statuses.values()) == {"executed-pass"}, statuses
    assert len(statuses) == 7
    assert not [req for req in statuses if req.startswith(C.EXT_PREFIX)]


def test_0244_G_kit_refusal_leg_passes_with_trials_switched_off(store_url: str) -> None:
    with hosting(store_url, {"evalSuite": {"trials": False}}) as base_url:
        code, statuses = _kit(base_url)
    assert code == 0, statuses
    assert statuses["0244.unadvertised-feature-refused"] == "executed-pass"
    assert statuses["0244.trials-per-task"] == "inapplicable"
    assert statuses["0244.trajectory-graded"] == "executed-pass"
    assert statuses["0244.fixture-miss-fails"] == "executed-pass"


def test_kit_extension_legs_pass_wopeval_serve(
    every_facet: str, plain_kit: tuple[int, dict[str, str]]
) -> None:
    """RFC 0244 §B isolation and Cost, §C, §D live: the opt-in legs, on the real host."""
    plain_code, plain = plain_kit
    code, statuses = _kit(every_facet, "--extended")
    assert code == plain_code == 0, statuses
    assert list(statuses) == [*C.REQUIREMENTS, *C.EXTENSIONS]
    assert {req: statuses[req] for req in C.EXTENSIONS} == dict.fromkeys(
        C.EXTENSIONS, "executed-pass"
    )
    assert {req: statuses[req] for req in C.REQUIREMENTS} == plain
    assert list(plain) == list(C.REQUIREMENTS)
