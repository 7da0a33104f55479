"""A crash worker's process started ahead of its test: ``python -m tests.service.warm_worker``
imports what the workers need, then reads one line from stdin, ``MODULE ARG...`` (JSON), and runs
that worker module as ``python -m MODULE ARG...`` would. Its start-up (seconds of imports on a
loaded machine) is spent while the test before it runs (:class:`tests.service.conftest.Warm`)."""

from __future__ import annotations

import json
import runpy
import sys

import tests.service.crash_worker
import tests.service.shard_worker  # noqa: F401  (imported ahead, as its command would)

if __name__ == "__main__":
    module, *args = json.loads(sys.stdin.readline())
    sys.argv = [module, *args]
    runpy.run_module(module, run_name="__main__", alter_sys=True)
