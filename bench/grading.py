"""Trajectory grading benchmark: wopeval against LangChain ``agentevals``, in the same run.

Prints one JSON document: trajectories graded per second at 10, 100, 1,000 and 10,000 observed
calls for each RFC 0244 §A mode, the same workload through ``agentevals``'
``create_trajectory_match_evaluator`` where it has a counterpart, and the ratio
(wopeval throughput / agentevals throughput; > 1 means wopeval is faster).

Workload (every cell is a trajectory that matches, so neither grader can stop early): ``n``
observed calls cycling over 10 tools, each with inputs ``{"id": i, "query": "q-i", "opts":
{"limit": i % 7}}``.

* ``exact``: the ``n`` calls expected in order, ``argsMatch: exact`` (agentevals ``strict``).
* ``in-order``: every 10th call expected, args ``{"id": i}`` with ``argsMatch: subset``.
  agentevals has no in-order mode; that cell reports only wopeval.
* ``any-order``: every 10th call expected in reverse order, ``argsMatch: exact`` (agentevals
  ``superset``: extra calls allowed; its ``unordered`` forbids extra calls, so it is not the
  counterpart).
* ``subset``: all ``n`` calls expected in reverse order, ``argsMatch: exact`` (agentevals
  ``subset``). agentevals pairs each observed call with a *distinct* reference call, RFC 0244
  ``subset`` allows repeats; with one expected call per observed call both must say "matched".

agentevals takes OpenAI-style message lists: each observed call is one assistant message with
one tool call. Its evaluator converts both lists through ``langchain_core`` on every call; that
conversion is part of its cost and is reported separately (``agentevals_normalize_s``).

Two further wopeval-only workloads were quadratic before the term index
(``quadratic_cases``): ``subset`` patterns whose first field every call shares
(``{"region": "eu", "orderId": i}``) and all-object patterns (``{"filter": {"id": i}}``), each
with ``n`` expected calls against ``n`` observed calls, graded in every mode that applies. The
``growth`` figure is CPU(10n) / CPU(n): 10 is linear, 100 quadratic.

Issue 13 §4 rows (``cpu_10k``, ``whole_trial_10k``, ``headline``):

* ``cpu_10k``: CPU milliseconds per grade of a 10,000-call trajectory for every mode × every
  ``argsMatch`` (the minimum of several grades). Expected args are deep copies, as a suite's
  would be. The expected side is compiled once per expectation object
  (``wopeval.grading.patterns.compiled``), as it is for every trial of a task after the first;
  the observed calls are looked up again on every grade. ``cpu_10k_cold`` grades a fresh copy
  of the expectation each time, so every grade compiles the expected calls too (a task graded
  once). The ``results`` cells and ``quadratic_cases`` carry both figures likewise
  (``wopeval_per_s`` / ``wopeval_cold_per_s``, ``cpu_s`` / ``cold_cpu_s``); on a tree without
  the cache (``--base``) the two are the same measurement.
* ``whole_trial_10k``: the same trajectory as an event log (``agent.tool-called`` events read
  back as the store does): ``collect_trials`` (the views) and ``grade_trial`` separately
  (``grade_trial_cold_ms``: the task's expectation graded for the first time).
* ``headline``: the worst ``cpu_10k`` cell, and wopeval / agentevals at 1,000 calls with exact
  args for each mode agentevals has.
* ``--base COMMIT``: the same two rows for that commit's ``src`` (``git archive``), run in a
  subprocess in the same invocation: before and after side by side.

The cold table (``--cold-table``, :mod:`bench.grading_cold`): only the rows above, for this
tree and ``--base`` in ``--repeats`` interleaved rounds (each round a fresh process per tree),
and every cold cell again in a process of its own that grades it once (what a user's one
``wopeval grade`` pays): per cell the compiled, the in-process cold and the fresh cold CPU ms
(median, min–max); ``met``: the compiled and the fresh medians are under 50 ms.

Usage: ``python3 bench/grading.py [--quick] [--no-peers] [--base COMMIT] [--cold-table
[--repeats N]]``.
"""

from __future__ import annotations

import argparse
import copy
import functools
import importlib
import itertools
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from wopeval.grading.trajectory import ObservedCall, grade_trajectory
from wopeval.suite.models import ArgsMatch, ExpectedCall, TrajectoryExpectation, TrajectoryMode

AGENT = "bench-agent"
SIZES = (10, 100, 1_000, 10_000)
QUICK_SIZES = (10, 100, 1_000)
MODES: tuple[TrajectoryMode, ...] = ("exact", "in-order", "any-order", "subset")
PEER_MODES: dict[TrajectoryMode, str | None] = {
    "exact": "strict",
    "in-order": None,
    "any-order": "superset",
    "subset": "subset",
}
WOPEVAL_BUDGET_S = 0.3
PEER_BUDGET_S = 1.0


def _inputs(i: int) -> dict[str, Any]:
    return {"id": i, "query": f"q-{i}", "opts": {"limit": i % 7}}


def observed_calls(n: int) -> list[ObservedCall]:
    return [
        ObservedCall(tool=f"kb:tool-{i % 10}", inputs=_inputs(i), agent_id=AGENT) for i in range(n)
    ]


def expected_calls(mode: TrajectoryMode, observed: Sequence[ObservedCall]) -> list[ExpectedCall]:
    if mode == "exact":
        return [ExpectedCall(tool=c.tool, args=c.inputs, argsMatch="exact") for c in observed]
    if mode == "in-order":
        return [
            ExpectedCall(tool=c.tool, args={"id": i}, argsMatch="subset")
            for i, c in enumerate(observed)
            if i % 10 == 0
        ]
    if mode == "any-order":
        every_tenth = [c for i, c in enumerate(observed) if i % 10 == 0]
        return [
            ExpectedCall(tool=c.tool, args=c.inputs, argsMatch="exact") for c in every_tenth[::-1]
        ]
    return [ExpectedCall(tool=c.tool, args=c.inputs, argsMatch="exact") for c in observed[::-1]]


def _quadratic_workload(shape: str, n: int) -> tuple[list[ObservedCall], list[ExpectedCall]]:
    def inputs(i: int) -> dict[str, Any]:
        return (
            {"region": "eu", "orderId": i}
            if shape == "shared-first-field"
            else {"filter": {"id": i}}
        )

    observed = [ObservedCall(tool="kb:orders", inputs=inputs(i), agent_id=AGENT) for i in range(n)]
    expected = [
        ExpectedCall(tool="kb:orders", args=inputs(i), argsMatch="subset") for i in range(n)
    ]
    return observed, expected[::-1]


def _cold(
    expectation: TrajectoryExpectation, observed: Sequence[ObservedCall]
) -> Callable[[], object]:
    """A grade of a fresh copy of ``expectation`` (the same calls, not yet compiled)."""
    return lambda: grade_trajectory(expectation.model_copy(), observed, AGENT)


def quadratic_cases(sizes: Sequence[int]) -> list[dict[str, Any]]:
    """CPU seconds per grade of the two formerly quadratic ``subset`` shapes, and the growth."""
    rows: list[dict[str, Any]] = []
    modes: tuple[TrajectoryMode, ...] = ("any-order", "subset")
    for shape in ("shared-first-field", "all-object-fields"):
        for mode in modes:
            seconds: dict[int, float] = {}
            cold: dict[int, float] = {}
            for n in sizes:
                observed, expected = _quadratic_workload(shape, n)
                expectation = TrajectoryExpectation(match=mode, calls=expected)
                per_s, _, block = _throughput(
                    functools.partial(grade_trajectory, expectation, observed, AGENT),
                    WOPEVAL_BUDGET_S,
                )
                seconds[n] = 1 / per_s
                assert getattr(block, "matched", None) is True
                cold_per_s, _, _ = _throughput(_cold(expectation, observed), WOPEVAL_BUDGET_S)
                cold[n] = 1 / cold_per_s
            growth = {
                f"{a}->{b}": round(seconds[b] / seconds[a], 1) for a, b in itertools.pairwise(sizes)
            }
            rows.append(
                {
                    "shape": shape,
                    "mode": mode,
                    "cpu_s": {str(n): round(s, 5) for n, s in seconds.items()},
                    "cold_cpu_s": {str(n): round(s, 5) for n, s in cold.items()},
                    "growth": growth,
                    "cold_growth": {
                        f"{a}->{b}": round(cold[b] / cold[a], 1)
                        for a, b in itertools.pairwise(sizes)
                    },
                }
            )
    return rows


def _throughput(grade: Callable[[], object], budget_s: float) -> tuple[float, int, object]:
    """Run ``grade`` until ``budget_s`` of CPU time is spent (at least once); calls per second.

    CPU time of this process, not wall time, so that other load on the machine does not skew
    one side of a ratio more than the other.
    """
    reps = 0
    start = time.process_time()
    elapsed = 0.0
    verdict: object = None
    while reps == 0 or elapsed < budget_s:
        verdict = grade()
        reps += 1
        elapsed = time.process_time() - start
    return reps / max(elapsed, 1e-9), reps, verdict


class Peer:
    """agentevals, loaded lazily and offline (LangSmith tracing off)."""

    def __init__(self) -> None:
        for name in ("LANGSMITH_TRACING", "LANGCHAIN_TRACING_V2", "LANGSMITH_TRACING_V2"):
            os.environ[name] = "false"
        self.version = metadata.version("agentevals")
        self._match: Any = importlib.import_module("agentevals.trajectory.match")
        self._utils: Any = importlib.import_module("agentevals.trajectory.utils")

    @staticmethod
    def messages(calls: Sequence[tuple[str, object]]) -> list[dict[str, Any]]:
        return [
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {
                        "id": f"call-{i}",
                        "type": "function",
                        "function": {"name": tool, "arguments": json.dumps(args)},
                    }
                ],
            }
            for i, (tool, args) in enumerate(calls)
        ]

    def evaluator(self, mode: str) -> Callable[..., Any]:
        evaluator: Callable[..., Any] = self._match.create_trajectory_match_evaluator(
            trajectory_match_mode=mode, tool_args_match_mode="exact"
        )
        return evaluator

    def normalize_seconds(
        self, outputs: list[dict[str, Any]], reference: list[dict[str, Any]]
    ) -> float:
        start = time.process_time()
        self._utils._normalize_to_openai_messages_list(outputs)
        self._utils._normalize_to_openai_messages_list(reference)
        return time.process_time() - start


def _wopeval_cell(mode: TrajectoryMode, observed: list[ObservedCall]) -> dict[str, Any]:
    expectation = TrajectoryExpectation(match=mode, calls=expected_calls(mode, observed))
    per_s, reps, block = _throughput(
        lambda: grade_trajectory(expectation, observed, AGENT), WOPEVAL_BUDGET_S
    )
    matched = getattr(block, "matched", None)
    cold_per_s, _, _ = _throughput(_cold(expectation, observed), WOPEVAL_BUDGET_S)
    return {
        "expected": len(expectation.calls),
        "wopeval_per_s": round(per_s, 2),
        "wopeval_cold_per_s": round(cold_per_s, 2),
        "wopeval_reps": reps,
        "wopeval_matched": matched,
    }


def _peer_cell(peer: Peer, mode: TrajectoryMode, observed: list[ObservedCall]) -> dict[str, Any]:
    peer_mode = PEER_MODES[mode]
    if peer_mode is None:
        return {"agentevals_mode": None, "agentevals_note": "agentevals has no in-order mode"}
    expected = expected_calls(mode, observed)
    outputs = peer.messages([(c.tool, c.inputs) for c in observed])
    reference = peer.messages([(c.tool, c.args) for c in expected])
    evaluator = peer.evaluator(peer_mode)
    per_s, reps, result = _throughput(
        lambda: evaluator(outputs=outputs, reference_outputs=reference), PEER_BUDGET_S
    )
    score = result.get("score") if isinstance(result, dict) else None
    return {
        "agentevals_mode": peer_mode,
        "agentevals_per_s": round(per_s, 2),
        "agentevals_reps": reps,
        "agentevals_matched": score,
        "agentevals_normalize_s": round(peer.normalize_seconds(outputs, reference), 4),
    }


def _load_peer() -> tuple[Peer | None, str | None]:
    try:
        return Peer(), None
    except Exception as error:  # any import failure is reported, never raised
        return None, f"{type(error).__name__}: {error}"


ARGS_MATCHES: tuple[ArgsMatch, ...] = ("ignore", "exact", "subset")
MATRIX_CALLS = 10_000
MATRIX_REPS = 5


def _pattern(args_match: ArgsMatch, i: int, inputs: dict[str, Any]) -> Any:
    if args_match == "ignore":
        return None
    return copy.deepcopy(inputs) if args_match == "exact" else {"id": i, "opts": {}}


def matrix_expected(
    mode: TrajectoryMode, args_match: ArgsMatch, observed: Sequence[ObservedCall]
) -> list[ExpectedCall]:
    """Expected calls that the observed ones match, for one mode and one ``argsMatch``."""
    picked = list(enumerate(observed))
    if mode in ("in-order", "any-order"):
        picked = picked[::10]
    if mode in ("any-order", "subset"):
        picked = picked[::-1]
    return [
        ExpectedCall(tool=c.tool, args=_pattern(args_match, i, _inputs(i)), argsMatch=args_match)
        for i, c in picked
    ]


def cpu_matrix(n: int = MATRIX_CALLS, cold: bool = False) -> dict[str, dict[str, float]]:
    """CPU ms per grade of ``n`` observed calls, per mode and ``argsMatch`` (minimum of reps);
    ``cold``: a fresh copy of the expectation per grade, so the expected side is compiled too."""
    observed = observed_calls(n)
    cells: dict[str, dict[str, float]] = {}
    for mode in MODES:
        for args_match in ARGS_MATCHES:
            expectation = TrajectoryExpectation(
                match=mode, calls=matrix_expected(mode, args_match, observed)
            )
            best = float("inf")
            for _ in range(MATRIX_REPS):
                graded = expectation.model_copy() if cold else expectation
                start = time.process_time()
                block = grade_trajectory(graded, observed, AGENT)
                best = min(best, time.process_time() - start)
                assert block.matched, (mode, args_match)
            cells.setdefault(mode, {})[args_match] = round(best * 1000, 2)
    return cells


def _log(observed: Sequence[ObservedCall], agent: str) -> list[Any]:
    """A trial's events as the store reads them back for grading: ``LoggedEvent`` rows (the
    payload's stored text) on a tree that has them, else ``RunEvent``s with decoded payloads."""
    from wopeval.wire.events import RunEvent

    try:
        from wopeval.events.logged import LoggedEvent
    except ImportError:  # a tree from before the grading read path
        LoggedEvent = None  # type: ignore[assignment,misc]

    def event(seq: int, type_: str, payload: dict[str, Any], root: bool = False) -> Any:
        if LoggedEvent is not None:
            text = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
            cause = None if root else "e0"
            return LoggedEvent(seq, f"e{seq}", type_, text, "2026-12-01T09:00:00Z", cause)
        return RunEvent.model_construct(
            eventId=f"e{seq}",
            runId="run-bench",
            type=type_,
            payload=json.loads(json.dumps(payload)),
            timestamp="2026-12-01T09:00:00Z",
            sequence=seq,
            schemaVersion=1,
            causationId=None if root else "e0",
        )

    started = {"invocationId": "i0", "agentId": agent, "source": "run-api"}
    events = [
        event(
            0,
            "agent.invocation-started",
            {**started, "x-wopeval-taskId": "t", "x-wopeval-trialIndex": 0},
            root=True,
        )
    ]
    for i, call in enumerate(observed, start=1):
        payload = {
            "agentId": agent,
            "toolName": call.tool,
            "callId": f"c{i}",
            "inputs": call.inputs,
        }
        events.append(event(i, "agent.tool-called", payload))
    done = {"invocationId": "i0", "agentId": agent, "outcome": "completed"}
    events.append(event(len(events), "agent.invocation-completed", done))
    return events


def _fresh_task(task: Any) -> Any:
    """The task with a new expectation object (same calls): graded as if for the first time."""
    trajectory = task.expected.trajectory.model_copy()
    expected = task.expected.model_copy(update={"trajectory": trajectory})
    return task.model_copy(update={"expected": expected})


def whole_trial(n: int = MATRIX_CALLS) -> dict[str, dict[str, float]]:
    """``collect_trials`` and ``grade_trial`` CPU ms on an ``n``-call log, per mode (exact args)."""
    from wopeval.grading.trial import grade_trial
    from wopeval.grading.views import collect_trials
    from wopeval.suite.models import Task

    agent = "core.acme.bench-agent"
    observed = [ObservedCall(c.tool, c.inputs, agent) for c in observed_calls(n)]
    rows: dict[str, dict[str, float]] = {}
    for mode in MODES:
        calls = matrix_expected(mode, "exact", observed)
        trajectory = {"match": mode, "calls": [c.model_dump(exclude_none=True) for c in calls]}
        task = Task.model_validate(
            {
                "taskId": "t",
                "input": "x",
                "expected": {"kind": "trajectory", "trajectory": trajectory},
            }
        )
        views_s = grade_s = cold_s = float("inf")
        for _ in range(MATRIX_REPS):
            events = _log(observed, agent)
            start = time.process_time()
            view = collect_trials(events)[("t", 0)]
            middle = time.process_time()
            grade = grade_trial(task, view, target_agent_id=agent, pass_score=1.0)
            views_s = min(views_s, middle - start)
            grade_s = min(grade_s, time.process_time() - middle)
            assert grade.passed, mode
            fresh = _fresh_task(task)
            start = time.process_time()
            grade_trial(fresh, view, target_agent_id=agent, pass_score=1.0)
            cold_s = min(cold_s, time.process_time() - start)
        rows[mode] = {
            "collect_trials_ms": round(views_s * 1000, 2),
            "grade_trial_ms": round(grade_s * 1000, 2),
            "grade_trial_cold_ms": round(cold_s * 1000, 2),
        }
    return rows


def adversarial(n: int = MATRIX_CALLS) -> dict[str, dict[str, float]]:
    """Compiled and cold CPU ms per grade of the formerly quadratic shapes
    (:func:`_quadratic_workload`) at ``n`` calls, per mode (minimum of reps)."""
    cells: dict[str, dict[str, float]] = {}
    for shape in ("shared-first-field", "all-object-fields"):
        observed, expected = _quadratic_workload(shape, n)
        for mode in ("any-order", "subset"):
            expectation = TrajectoryExpectation(match=mode, calls=expected)
            best = {"compiled_ms": float("inf"), "cold_ms": float("inf")}
            for _ in range(MATRIX_REPS):
                for name, graded in (
                    ("cold_ms", expectation.model_copy()),
                    ("compiled_ms", expectation),
                ):
                    start = time.process_time()
                    block = grade_trajectory(graded, observed, AGENT)
                    best[name] = min(best[name], time.process_time() - start)
                    assert block.matched, (shape, mode)
            cells[f"{shape}/{mode}"] = {name: round(s * 1000, 2) for name, s in best.items()}
    return cells


def _issue_rows() -> dict[str, Any]:
    return {
        "cpu_10k": cpu_matrix(),
        "cpu_10k_cold": cpu_matrix(cold=True),
        "whole_trial_10k": whole_trial(),
        "adversarial_10k": adversarial(),
    }


def _rows_in(src: str) -> dict[str, Any]:
    """The issue rows measured by this script in a subprocess importing ``src``."""
    env = {**os.environ, "PYTHONPATH": src}
    done = subprocess.run(
        [sys.executable, __file__, "--issue-rows-only"], capture_output=True, text=True, env=env
    )
    if done.returncode != 0:
        return {"error": done.stderr[-600:]}
    rows: dict[str, Any] = json.loads(done.stdout)
    return rows


def _base_src(base: str, tmp: str) -> str:
    """``base``'s ``src`` extracted under ``tmp`` (``git archive``)."""
    root = Path(__file__).resolve().parent.parent
    archive = subprocess.run(
        ["git", "-C", str(root), "archive", base, "src"], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
    return str(Path(tmp) / "src")


def _base_rows(base: str) -> dict[str, Any]:
    """The issue rows for ``base``'s ``src``, measured by this script in a subprocess."""
    with tempfile.TemporaryDirectory() as tmp:
        return {"commit": base, **_rows_in(_base_src(base, tmp))}


def _worst(cells: dict[str, dict[str, float]]) -> dict[str, Any]:
    mode, match, ms = max(
        ((mode, match, ms) for mode, row in cells.items() for match, ms in row.items()),
        key=lambda cell: cell[2],
    )
    return {"mode": mode, "argsMatch": match, "ms": ms}


def _headline(report: dict[str, Any]) -> dict[str, Any]:
    at_1000 = [c for c in report["results"] if c["observed"] == 1_000 and "ratio" in c]
    return {
        "cpu_10k_worst_ms": _worst(report["cpu_10k"]),
        "cpu_10k_cold_worst_ms": _worst(report["cpu_10k_cold"]),
        "cpu_10k_goal_ms": 50,
        "agentevals_ratio_1000_exact_args": {cell["mode"]: cell["ratio"] for cell in at_1000},
        "agentevals_ratio_1000_exact_args_cold": {
            cell["mode"]: cell["cold_ratio"] for cell in at_1000
        },
        "agentevals_ratio_goal": 100,
    }


def run(sizes: Sequence[int], with_peer: bool) -> dict[str, Any]:
    peer, peer_error = _load_peer() if with_peer else (None, "disabled (--no-peers)")
    cells: list[dict[str, Any]] = []
    for n in sizes:
        observed = observed_calls(n)
        for mode in MODES:
            cell: dict[str, Any] = {"observed": n, "mode": mode, **_wopeval_cell(mode, observed)}
            if peer is not None:
                cell.update(_peer_cell(peer, mode, observed))
                if "agentevals_per_s" in cell:
                    cell["ratio"] = round(cell["wopeval_per_s"] / cell["agentevals_per_s"], 2)
                    cold = cell["wopeval_cold_per_s"] / cell["agentevals_per_s"]
                    cell["cold_ratio"] = round(cold, 2)
                    cell["verdicts_agree"] = cell["wopeval_matched"] == cell["agentevals_matched"]
            cells.append(cell)
    return {
        "benchmark": "grading.trajectory",
        "unit": "trajectories graded per CPU second of this process (time.process_time)",
        "ratio": "wopeval / agentevals throughput; > 1 means wopeval is faster",
        "python": sys.version.split()[0],
        "peer": {
            "name": "agentevals",
            "available": peer is not None,
            "version": peer.version if peer is not None else None,
            "error": peer_error,
            "api": "create_trajectory_match_evaluator(trajectory_match_mode=…, "
            "tool_args_match_mode='exact')",
        },
        "mode_map": {mode: PEER_MODES[mode] for mode in MODES},
        "notes": [
            "in-order has no agentevals equivalent: only wopeval is measured.",
            "any-order maps to agentevals superset (extras allowed); unordered forbids extras.",
            "agentevals subset needs a distinct reference call per observed call; RFC 0244 "
            "subset allows repeats. The workload expects every observed call once.",
            "wopeval also computes matchedCount (a maximum matching) on every grade.",
        ],
        "results": cells,
        "quadratic_cases": quadratic_cases([n for n in sizes if n >= 100]),
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--quick", action="store_true", help="stop at 1,000 observed calls")
    parser.add_argument("--no-peers", action="store_true", help="measure wopeval only")
    parser.add_argument("--base", help="also measure the issue rows for this commit's src")
    parser.add_argument(
        "--cold-table", action="store_true", help="only the cold and compiled 10,000-call table"
    )
    parser.add_argument("--repeats", type=int, default=3, help="rounds of --cold-table")
    parser.add_argument("--issue-rows-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.issue_rows_only:
        print(json.dumps(_issue_rows()))
        return
    if args.cold_table:
        sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
        from bench import grading_cold  # it imports this module: loaded only when asked for

        print(json.dumps(grading_cold.cold_table(args.base, args.repeats), indent=2))
        return
    started = time.perf_counter()
    load_before = os.getloadavg()
    report = run(QUICK_SIZES if args.quick else SIZES, with_peer=not args.no_peers)
    report.update(_issue_rows())
    report["headline"] = _headline(report)
    if args.base:
        report["before"] = _base_rows(args.base)
    report["wall_s"] = round(time.perf_counter() - started, 1)
    report["load_average"] = {"before": load_before, "after": os.getloadavg()}
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
