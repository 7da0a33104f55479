"""One peer workload in this process, its figures as one JSON line (``bench/scale.py`` times it).

``python3 -m bench.peers.oneshot PEER WORKLOAD TRIALS`` with PEER ``inspect`` or
``pydantic_evals`` and WORKLOAD ``overhead`` (instant agent, 3 canned tool calls, concurrency
16; Inspect with ``warmup=0``: the process's first eval, as a user runs it) or ``concurrency``
(50 ms agent at concurrency 200). The caller times the whole process, spawn to exit, so
Inspect's ``importSeconds`` (a second interpreter) is not measured here.
"""

from __future__ import annotations

import importlib
import json
import sys
from typing import Any


def main(argv: list[str]) -> None:
    peer, workload, trials = argv[0], argv[1], int(argv[2])
    module: Any = importlib.import_module(f"bench.peers.{peer}_peer")
    if peer == "inspect":  # its figures would spawn a second interpreter inside the timed process
        module.import_seconds = lambda: None
    if workload == "overhead":
        kwargs: dict[str, object] = {"trials": trials, "concurrency": 16}
        if peer == "inspect":
            kwargs["warmup"] = 0
        result = module.run_overhead(**kwargs)
    elif workload == "concurrency":
        result = module.run_concurrency(trials=trials, sleep_s=0.05, concurrency=200)
    else:
        raise SystemExit(f"unknown workload {workload}")
    result["version"] = module.version()
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
