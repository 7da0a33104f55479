"""What turn pins (``x-wopeval-pin``) cost the trajectory grader, in the same run.

For each RFC 0244 §A mode and 10, 100 and 1,000 observed calls, CPU time per grade of:

- ``plain``: an expectation without pins, graded as every trial is (``grade_trajectory``);
- ``floor``: the same, with the pin check switched off (``pins=False``): §A alone;
- ``pinned``: the same expectation with every tenth expected call pinned to the turn its
  observed call was made in (so the pins hold, and every pin is looked for).

``plainRatio`` = plain / floor: what a suite that never uses a pin pays for their existence
(1.0: nothing). ``pinnedRatio`` = pinned / floor. Minimum of REPEATS interleaved rounds; the
load average is printed before and after: on a loaded machine the figures are noisy.

    python3 bench/turn_pins.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from typing import Any

from wopeval.grading.trajectory import ObservedCall, grade_trajectory
from wopeval.suite.models import TrajectoryExpectation

MODES = ("exact", "in-order", "any-order", "subset")


def _workload(n: int, mode: str, pinned: bool) -> tuple[TrajectoryExpectation, list[ObservedCall]]:
    turn = [i // 10 for i in range(n)]
    observed = [
        ObservedCall(f"t{i % 10}", {"id": i, "q": f"q-{i}"}, "a", turn[i]) for i in range(n)
    ]
    calls: list[dict[str, Any]] = []
    for i in range(n):
        call: dict[str, Any] = {"tool": f"t{i % 10}", "args": {"id": i}, "argsMatch": "subset"}
        if pinned and i % 10 == 0:
            call["x-wopeval-pin"] = {"turn": turn[i]}
        calls.append(call)
    expectation = TrajectoryExpectation.model_validate({"match": mode, "calls": calls})
    return expectation, observed


def _cpu(expectation: TrajectoryExpectation, observed: list[ObservedCall], pins: bool) -> float:
    reps = max(3, 3000 // len(observed))
    start = time.process_time()
    for _ in range(reps):
        block = grade_trajectory(expectation, observed, "a", pins=pins)
    assert block.matched
    return (time.process_time() - start) / reps


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    repeats = 3 if args.quick else 7
    load_before = os.getloadavg()[0]
    rows = []
    for n in (10, 100) if args.quick else (10, 100, 1000):
        for mode in MODES:
            plain, observed = _workload(n, mode, pinned=False)
            pinned, _ = _workload(n, mode, pinned=True)
            best = {"plain": float("inf"), "floor": float("inf"), "pinned": float("inf")}
            for _ in range(repeats):
                best["floor"] = min(best["floor"], _cpu(plain, observed, pins=False))
                best["plain"] = min(best["plain"], _cpu(plain, observed, pins=True))
                best["pinned"] = min(best["pinned"], _cpu(pinned, observed, pins=True))
            rows.append(
                {
                    "calls": n,
                    "mode": mode,
                    **{f"{k}Us": round(v * 1e6, 2) for k, v in best.items()},
                    "plainRatio": round(best["plain"] / best["floor"], 3),
                    "pinnedRatio": round(best["pinned"] / best["floor"], 3),
                }
            )
    print(
        json.dumps(
            {"loadBefore": load_before, "loadAfter": os.getloadavg()[0], "rows": rows}, indent=2
        )
    )


if __name__ == "__main__":
    main()
