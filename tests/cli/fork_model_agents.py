"""An OpenAI-compatible agent reachable by import path, so that a forked run rebuilds it (a
``--model`` agent is built by the command line and is not stored with the run). The test sets
``agent`` to one pointed at its loopback server before each command."""

from __future__ import annotations

from typing import Any

agent: Any = None
