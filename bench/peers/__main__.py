"""Run the peers alone and print their figures as JSON (``python3 -m bench.peers --help``).

``bench/engine.py`` is the benchmark; this entry point only checks that the peers work and
shows what they measure, without our engine.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable

Runner = Callable[[], object]


def _inspect(overhead_trials: int, concurrency_trials: int) -> dict[str, Runner]:
    from . import inspect_peer

    return {
        "version": lambda: {"inspect_ai": inspect_peer.version()},
        "overhead": lambda: inspect_peer.run_overhead(overhead_trials),
        "overheadMockllm": lambda: inspect_peer.run_overhead(overhead_trials, mode="mockllm"),
        "concurrency": lambda: inspect_peer.run_concurrency(concurrency_trials),
    }


def _promptfoo(overhead_trials: int, concurrency_trials: int) -> dict[str, Runner]:
    from . import promptfoo_peer

    return {
        "version": lambda: {"promptfoo": promptfoo_peer.version()},
        "overhead": lambda: promptfoo_peer.run_overhead(overhead_trials),
        "concurrency": lambda: promptfoo_peer.run_concurrency(concurrency_trials),
    }


def main() -> None:
    parser = argparse.ArgumentParser(prog="python3 -m bench.peers", description=__doc__)
    parser.add_argument("--peer", choices=["inspect", "promptfoo", "all"], default="all")
    parser.add_argument("--overhead-trials", type=int, default=1000)
    parser.add_argument("--concurrency-trials", type=int, default=2000)
    args = parser.parse_args()
    peers = {"inspect": _inspect, "promptfoo": _promptfoo}
    chosen = list(peers) if args.peer == "all" else [args.peer]
    report: dict[str, object] = {"loadAverage": list(os.getloadavg())}
    for name in chosen:
        runners = peers[name](args.overhead_trials, args.concurrency_trials)
        report[name] = {key: run() for key, run in runners.items()}
    report["loadAverageAfter"] = list(os.getloadavg())
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
