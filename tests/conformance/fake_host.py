"""A small fake OpenWOP host serving hand-made eval runs of the three fixtures.

It plays the scripted agent itself (its own few lines, not the kit's helpers), and its grades and
summaries are hand-worked constants (``GRADES``, ``TRIALS``), so the kit is checked against data
nobody computed with the kit. ``defects`` switch on one deliberate bug each (``DEFECTS``).

``flavor`` picks how trials are attributable in the log: ``markers`` (wopeval's vendor keys and
causation chain), ``causation`` (the same chain without the vendor keys: ``eval.scored`` names
the root) or ``position`` (no ``causationId`` at all; trials in log order).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

SUITES = Path(__file__).resolve().parents[2] / "src" / "wopeval" / "data" / "suites"
AGENT = "core.conformance.agents.scripted"
API_KEY = "test-key"
FULL_FACET: dict[str, Any] = {
    "modes": ["golden"],
    "trajectory": True,
    "trials": {"maxTrials": 10},
    "fixtureMatching": True,
}
ALL_FIXTURES = (
    "conformance-eval-trajectory",
    "conformance-eval-trials",
    "conformance-eval-fixture-miss",
    "conformance-noop",
)

# Hand-worked grades: (score, passed, label, trajectory block as
# (mode, matched, expectedCount, observedCount, matchedCount, forbiddenCount)).
GRADES: dict[str, tuple[float, bool, str, tuple[Any, ...] | None, int | None]] = {
    # in-order: lookup then refund{amountMinor 4200} ⊂ a subsequence of the 3 calls.
    "in-order-match": (1.0, True, "pass", ("in-order", True, 2, 3, 2, 0), None),
    # refund came before lookup: no subsequence, but both calls pair up one-to-one (2).
    "wrong-order": (1.0, False, "trajectory-unmatched", ("in-order", False, 2, 2, 2, 0), None),
    # lookup(ignore)↔ORD-9000-Z, lookup(exact ORD-7731-C)↔ORD-7731-C: 2; refund-all forbidden.
    "forbidden-hit": (1.0, False, "trajectory-unmatched", ("any-order", False, 2, 3, 2, 1), None),
    # every observed call is a kb:search or the exact lookup; one-to-one pairs: 2 of 4.
    "subset-repeats": (1.0, True, "pass", ("subset", True, 2, 4, 2, 0), None),
    # the lookup carries includeHistory: exact fails; only the refund pairs up.
    "exact-args-mismatch": (0.0, False, "trajectory-unmatched", ("exact", False, 2, 2, 1, 0), None),
    # amountMinor 99999 matches no fixture: fail closed, score 0.
    "missed-call": (0.0, False, "fixture-miss", None, 1),
    "served-call": (1.0, True, "pass", None, None),
}
# Per-trial passes (score = 1 or 0, golden exact). n = 3, k = 2.
TRIALS: dict[str, tuple[bool, bool, bool]] = {
    "passes-three-of-three": (True, True, True),
    "passes-two-of-three": (True, False, True),
    "passes-one-of-three": (False, False, True),
    "passes-none": (False, False, False),
}
# (passedCount, meanScore, passAtK, passHatK), hand-worked with C(3, 2) = 3:
#   c=3: pass@2 = 1 − C(0,2)/3 = 1,   pass^2 = C(3,2)/3 = 1
#   c=2: pass@2 = 1 − C(1,2)/3 = 1,   pass^2 = C(2,2)/3 = 1/3
#   c=1: pass@2 = 1 − C(2,2)/3 = 2/3, pass^2 = C(1,2)/3 = 0
#   c=0: pass@2 = 1 − C(3,2)/3 = 0,   pass^2 = 0
TRIAL_BLOCKS: dict[str, tuple[int, float, float, float]] = {
    "passes-three-of-three": (3, 1.0, 1.0, 1.0),
    "passes-two-of-three": (2, 2 / 3, 1.0, 1 / 3),
    "passes-one-of-three": (1, 1 / 3, 2 / 3, 0.0),
    "passes-none": (0, 0.0, 0.0, 0.0),
}
# Means of the per-task values: pass@2 (1 + 1 + 2/3 + 0)/4 = 2/3; pass^2 (1 + 1/3)/4 = 1/3.
# Per-task means 1, 2/3, 1/3, 0 (mean 1/2): squared deviations sum to 5/9; sample variance
# 5/27; stderr = sqrt(5/27) / sqrt(4) = sqrt(5/108) ≈ 0.2151657.
TRIAL_STATS = {"k": 2, "passAtK": 2 / 3, "passHatK": 1 / 3, "scoreStderr": math.sqrt(5 / 108)}

DEFECTS = frozenset(
    {
        "greedy-any-order",  # matchedCount by greedy first-fit: forbidden-hit reports 1
        "unmatched-passes",  # wrong-order passes (the trajectory gate ignored)
        "subset-as-exact",  # argsMatch subset graded as exact: in-order-match unmatched
        "trajectory-score-fraction",  # exact-args-mismatch scores 0.5 (partial credit)
        "duplicate-tool-event",  # two agent.tool-called for one scripted call
        "miss-keeps-score",  # the fail-closed trial keeps its output score 1
        "miss-not-counted",  # fixtureMissCount absent
        "missing-trial-index",  # one eval.scored without trialIndex
        "trial-count-absent",  # eval.started without trialCount
        "naive-pass-hat-k",  # pass^k as (c/n)^k
        "population-stderr",  # stderr with the n denominator
        "prose-score-label",  # scoreLabel "Looks good to me"
        "tools-in-block",  # a summary trajectory block naming its tools
        "output-in-scored",  # a vendor key on eval.scored echoing the output
        "accept-unadvertised",  # trials fixture accepted without the trials facet
    }
)


def _script(task_input: dict[str, Any], trial: int) -> dict[str, Any]:
    plan = {k: v for k, v in task_input.items() if k != "trials"}
    plan.update((task_input.get("trials") or {}).get(str(trial), {}))
    return plan


@dataclass
class _Log:
    run_id: str
    flavor: str
    events: list[dict[str, Any]] = field(default_factory=list)

    def emit(self, type_: str, payload: dict[str, Any], cause: str | None = None) -> str:
        event_id = f"evt-{len(self.events):012d}"
        event = {
            "eventId": event_id,
            "runId": self.run_id,
            "type": type_,
            "payload": payload,
            "timestamp": "2026-10-20T12:00:00Z",
            "sequence": len(self.events),
            "schemaVersion": 1,
        }
        if cause is not None and self.flavor != "position":
            event["causationId"] = cause
        self.events.append(event)
        return event_id


@dataclass
class FakeHost:
    """Configure, then serve with :meth:`app` through ``httpx.ASGITransport``."""

    eval_suite: dict[str, Any] | None = field(default_factory=lambda: dict(FULL_FACET))
    fixtures: tuple[str, ...] = ALL_FIXTURES
    defects: frozenset[str] = frozenset()
    flavor: str = "markers"
    redact_inputs: bool = False
    page: int = 7
    runs: dict[str, tuple[list[dict[str, Any]], dict[str, Any]]] = field(default_factory=dict)
    created: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        unknown = self.defects - DEFECTS
        assert not unknown, f"unknown defects {unknown}"

    # --- the run ----------------------------------------------------------------------

    def _trial(self, log: _Log, task: dict[str, Any], trial: int, count: int) -> None:
        marks = {"x-wopeval-taskId": task["taskId"], "x-wopeval-trialIndex": trial}
        started = {"invocationId": f"inv-{len(log.events)}", "agentId": AGENT, "source": "run-api"}
        root = log.emit(
            "agent.invocation-started", {**started, **(marks if self.flavor == "markers" else {})}
        )
        cause = root
        plan = _script(task["input"], trial)
        for n, call in enumerate(plan.get("calls") or []):
            body = {"agentId": AGENT, "toolName": call["tool"], "callId": f"c-{trial}-{n}"}
            inputs = {} if self.redact_inputs else {"inputs": call.get("args")}
            called = log.emit("agent.tool-called", {**body, **inputs}, cause)
            if "duplicate-tool-event" in self.defects:
                log.emit("agent.tool-called", {**body, "inputs": call.get("args")}, cause)
            missed = task["taskId"] == "missed-call"
            returned = {**body, "status": "error" if missed else "ok"}
            log.emit("agent.tool-returned", returned, called)
        log.emit("agent.decided", {"agentId": AGENT, "decision": plan.get("output")}, cause)
        log.emit("agent.invocation-completed", {**started, "outcome": "completed"}, cause)
        log.emit("eval.scored", self._scored(task, trial, count), root)

    def _grade(self, task_id: str, trial: int) -> tuple[float, bool, str]:
        if task_id in TRIALS:
            passed = TRIALS[task_id][trial]
            return (1.0 if passed else 0.0), passed, "pass" if passed else "fail"
        score, passed, label, _, _ = GRADES[task_id]
        if task_id == "in-order-match" and "subset-as-exact" in self.defects:
            passed, label = False, "trajectory-unmatched"
        if task_id == "wrong-order" and "unmatched-passes" in self.defects:
            passed, label = True, "pass"
        if task_id == "exact-args-mismatch" and "trajectory-score-fraction" in self.defects:
            score = 0.5
        if task_id == "missed-call" and "miss-keeps-score" in self.defects:
            score = 1.0
        if "prose-score-label" in self.defects:
            label = "Looks good to me"
        return score, passed, label

    def _scored(self, task: dict[str, Any], trial: int, count: int) -> dict[str, Any]:
        score, passed, label = self._grade(task["taskId"], trial)
        payload: dict[str, Any] = {"taskId": task["taskId"], "score": score, "passed": passed}
        payload.update(scoreLabel=label, evaluatorType="deterministic", latencyMs=3)
        skip_index = "missing-trial-index" in self.defects and task["taskId"] == "passes-none"
        if count > 1 and not (skip_index and trial == 1):
            payload["trialIndex"] = trial
        if "output-in-scored" in self.defects:
            payload["x-vendor-echo"] = _script(task["input"], trial).get("output")
        return payload

    def _task_entry(self, task_id: str) -> dict[str, Any]:
        if task_id in TRIALS:
            c, mean, at_k, hat_k = TRIAL_BLOCKS[task_id]
            if "naive-pass-hat-k" in self.defects:
                hat_k = (c / 3) ** 2
            block = {
                "n": 3,
                "passedCount": c,
                "meanScore": mean,
                "passAtK": at_k,
                "passHatK": hat_k,
            }
            return {"taskId": task_id, "score": mean, "passed": c == 3, "trials": block}
        score, passed, _ = self._grade(task_id, 0)
        entry: dict[str, Any] = {"taskId": task_id, "score": score, "passed": passed}
        _, _, _, traj, misses = GRADES[task_id]
        if traj is not None:
            keys = ("mode", "matched", "expectedCount", "observedCount", "matchedCount")
            counts: dict[str, Any] = dict(zip((*keys, "forbiddenCount"), traj, strict=True))
            if task_id == "forbidden-hit" and "greedy-any-order" in self.defects:
                counts["matchedCount"] = 1
            if task_id == "in-order-match" and "subset-as-exact" in self.defects:
                counts.update(matched=False, matchedCount=1)
            if "tools-in-block" in self.defects:
                counts["tools"] = ["crm:lookup-order"]
            entry["trajectory"] = counts
        if misses is not None and "miss-not-counted" not in self.defects:
            entry["fixtureMissCount"] = misses
        return entry

    def _summary(self, suite: dict[str, Any]) -> dict[str, Any]:
        tasks = [self._task_entry(task["taskId"]) for task in suite["tasks"]]
        passed = sum(1 for entry in tasks if entry["passed"])
        summary: dict[str, Any] = {
            "suiteId": suite["suiteId"],
            "suiteVersion": suite["version"],
            "aggregateScore": sum(entry["score"] for entry in tasks) / len(tasks),
            "passed": passed == len(tasks),
            "taskCount": len(tasks),
            "passedCount": passed,
            "tasks": tasks,
        }
        if "trials" in suite:
            stats = dict(TRIAL_STATS)
            if "population-stderr" in self.defects:
                stats["scoreStderr"] = math.sqrt(5 / 36) / 2  # pstdev: variance 5/36
            summary["trialStats"] = stats
        return summary

    def _execute(self, run_id: str, suite: dict[str, Any]) -> None:
        log = _Log(run_id, self.flavor)
        count = (suite.get("trials") or {}).get("count", 1)
        log.emit("run.started", {"workflowId": suite["suiteId"]})
        started: dict[str, Any] = {
            "suiteId": suite["suiteId"],
            "suiteVersion": suite["version"],
            "taskCount": len(suite["tasks"]),
            "modes": ["golden"],
        }
        if count > 1 and "trial-count-absent" not in self.defects:
            started["trialCount"] = count
        log.emit("eval.started", started)
        for trial in range(count):
            for task in suite["tasks"]:
                self._trial(log, task, trial, count)
        summary = self._summary(suite)
        completed = {
            k: summary[k] for k in ("aggregateScore", "passed", "taskCount", "passedCount")
        }
        log.emit("eval.completed", completed)
        log.emit("run.completed", {"outputs": summary})
        self.runs[run_id] = (log.events, summary)

    # --- HTTP ---------------------------------------------------------------------------

    async def discovery(self, request: Request) -> JSONResponse:
        doc: dict[str, Any] = {"protocolVersions": ["2.0"], "preferredVersion": "2.0"}
        doc["implementation"] = {"name": "fake-host", "version": "0.0.1"}
        doc["fixtures"] = list(self.fixtures)
        if self.eval_suite is not None:
            doc["agents"] = {"status": "stable", "since": "2.0", "witness": "witnessable-gated"}
            doc["agents"]["evalSuite"] = self.eval_suite
        return JSONResponse(doc)

    def _refusal(self, suite: dict[str, Any]) -> JSONResponse | None:
        facet = self.eval_suite or {}
        count = (suite.get("trials") or {}).get("count", 1)
        if count > 1 and "trials" not in facet and "accept-unadvertised" not in self.defects:
            message = "trials.count: trials are not advertised by this host"
            body = {"error": "validation_error", "message": message}
            return JSONResponse(body, status_code=400)
        return None

    async def create(self, request: Request) -> JSONResponse:
        if request.headers.get("authorization") != f"Bearer {API_KEY}":
            return JSONResponse({"error": "unauthenticated", "message": "bad key"}, 401)
        body = await request.json()
        match = re.fullmatch(
            r"suite://core\.openwop\.evals\.([a-z0-9-]+)@1\.0\.0", body["evalSuiteRef"]
        )
        assert match is not None
        assert body["agentId"] == AGENT
        assert body["mode"] == "eval"
        suite = json.loads((SUITES / f"{match.group(1)}.json").read_text())
        refused = self._refusal(suite)
        if refused is not None:
            return refused
        run_id = f"acme/run-{len(self.runs):016d}"
        self._execute(run_id, suite)
        self.created.append(run_id)
        return JSONResponse({"runId": run_id, "status": "pending", "eventsUrl": "/x"}, 201)

    def _run(self, request: Request) -> str:
        projected = request.path_params["rid"]
        return re.sub(r"~([0-9A-F]{2})", lambda m: chr(int(m.group(1), 16)), projected)

    async def poll(self, request: Request) -> JSONResponse:
        run_id = self._run(request)
        events, _ = self.runs[run_id]
        after = int(request.query_params.get("afterSequence", -1))
        page = [e for e in events if e["sequence"] > after][: self.page]
        body = {"runId": run_id, "events": page, "lastSequence": len(events) - 1}
        return JSONResponse({**body, "status": "completed", "isTerminal": True})

    async def summary(self, request: Request) -> JSONResponse:
        return JSONResponse(self.runs[self._run(request)][1])

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/.well-known/openwop", self.discovery),
                Route("/runs", self.create, methods=["POST"]),
                Route("/runs/{rid}/events/poll", self.poll),
                Route("/runs/{rid}/eval-summary", self.summary),
            ]
        )
