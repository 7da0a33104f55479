"""docs/mcp.md's own server, suite and command, run as written: the server is a working ``mcp``
2.x server (the SDK wopeval pins), and ``wopeval run --mcp`` reaches it for an unfixtured task."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import yaml

DOC = (Path(__file__).resolve().parents[2] / "docs" / "mcp.md").read_text(encoding="utf-8")
SECTION = DOC.split("## A server of your own", 1)[1].split("\n## ", 1)[0]


def _block(lang: str) -> str:
    (body,) = re.findall(rf"```{lang}\n(.*?)```", SECTION, flags=re.S)
    return str(body)


def _bin(tmp_path: Path) -> Path:
    """``wopeval`` and ``python3`` on PATH as this interpreter (which has the ``mcp`` SDK)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, run in (("wopeval", "-m wopeval.cli"), ("python3", "")):
        shim = bin_dir / name
        shim.write_text(f'#!/bin/sh\nexec {sys.executable} {run} "$@"\n')
        shim.chmod(0o755)
    return bin_dir


def test_the_docs_mcp_server_serves_a_live_tool_to_wopeval_run(
    tmp_path: Path, store_url: str
) -> None:
    server = _block("python")
    assert "from mcp.server.mcpserver import MCPServer" in server
    suite = _block("yaml")
    (command,) = _block("sh").strip().splitlines()
    suite_file, server_file = command.split()[2], command.split("=python3 ")[1].rstrip('"')
    (tmp_path / server_file).write_text(server, encoding="utf-8")
    (tmp_path / suite_file).write_text(suite, encoding="utf-8")
    assert "fixtures" not in yaml.safe_load(suite)["tasks"][0]  # only the server can answer
    env = {**os.environ, "WOPEVAL_STORE": store_url,
           "PATH": f"{_bin(tmp_path)}{os.pathsep}{os.environ['PATH']}"}  # fmt: skip
    ran = subprocess.run(["bash", "-euo", "pipefail", "-c", f"{command} --json"], cwd=tmp_path,
                         env=env, capture_output=True, text=True, timeout=120)  # fmt: skip
    assert ran.returncode == 0, ran.stdout + ran.stderr
    summary = json.loads(ran.stdout)["summary"]
    assert summary["passed"] is True
    (task,) = summary["tasks"]
    assert task["trajectory"]["matched"] is True
    assert task["efficiency"]["toolCallCount"] == 1
