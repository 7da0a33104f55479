"""A small fake OpenWOP host serving hand-made eval runs of the conformance fixtures.

It plays the scripted agent itself (its own few lines, not the kit's helpers), and its grades and
summaries are hand-worked constants (``GRADES``, ``TRIALS``), so the kit is checked against data
nobody computed with the kit. ``defects`` switch on one deliberate bug each (``DEFECTS``).

``flavor`` picks how trials are attributable in the log: ``markers`` (wopeval's vendor keys and
causation chain), ``causation`` (the same chain without the vendor keys: ``eval.scored`` names
the root) or ``position`` (no ``causationId`` at all; trials in log order).

The extension fixtures (``--extended``) are served too: the scripted ``usage`` is reported as
``provider.usage`` inside the bracket, a judge-style ``provider.usage`` follows each efficiency
trial outside it, and ``recall``/``remember`` run over a per-trial copy of ``memorySeed``; the
RFC 0246 fixtures' grades are hand-worked too (``UNMATCHED``, ``GATING``).
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
    "conformance-eval-efficiency",
    "conformance-eval-isolation",
    "conformance-eval-onmiss-live",
    "conformance-eval-unmatched-score",
    "conformance-eval-gating-mean",
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

# --- extension fixtures ------------------------------------------------------------------
# conformance-eval-efficiency (3 trials; the per-trial script is in the fixture):
#   lean-lookup       trials 0, 1: 1 call, 1 usage (120 in, 30 out, $0.00125)
#                     trial 2:     2 calls, 2 usages (120+80 in, 30+20 out, $0.00125+$0.00075)
#   busy-but-correct  trials 0, 2: 12 calls, 4 usages of (40000 in, 6000 out, $0.015)
#                     trial 1:     10 calls, 3 usages
# Means over the three trials (toolCallCount, modelCallCount, inputTokens, outputTokens):
#   lean-lookup       (1+1+2)/3 = 4/3, 4/3, (120+120+200)/3 = 440/3, (30+30+50)/3 = 110/3
#   busy-but-correct  (12+10+12)/3 = 34/3, (4+3+4)/3 = 11/3, 440000/3, (24000+18000+24000)/3
EFFICIENCY: dict[str, tuple[float, float, float, float]] = {
    "lean-lookup": (4 / 3, 4 / 3, 440 / 3, 110 / 3),
    "busy-but-correct": (34 / 3, 11 / 3, 440000 / 3, 22000.0),
}
# The last trial alone (the "efficiency-last-trial" defect): trial 2 of each.
EFFICIENCY_LAST = {"lean-lookup": (2, 2, 200, 50), "busy-but-correct": (12, 4, 160000, 24000)}
# A judge-style usage after every efficiency trial, outside the bracket: 6 × $0.0005 = $0.003.
JUDGE_USAGE = {"provider": "mock", "model": "judge", "inputTokens": 500, "outputTokens": 50,
               "costEstimateUsd": 0.0005}  # fmt: skip
# Cost inside the brackets: lean 3 × 0.00125 + 0.00075 = 0.0045; busy 11 × 0.015 = 0.165.
COST_INSIDE = 0.1695
COST_TOTAL = 0.1725  # + the judge's 0.003
# conformance-eval-isolation: what every trial must recall (the seed, or nothing).
RECALLS: dict[str, Any] = {"recall-seeded": "seeded-open", "recall-unseeded": None}
# conformance-eval-onmiss-live: one unfixtured call under onMiss "live" (no live tool here).
LIVE_MISSES = {"missed-live": 1, "served-live": 0}
# conformance-eval-unmatched-score (1 trial), (score, passed, label): the first two call the
# refund before the lookup (in-order unmatched); the output score stays (1, then 0: "declined").
UNMATCHED: dict[str, tuple[float, bool, str]] = {
    "unmatched-right-output": (1.0, False, "trajectory-unmatched"),
    "unmatched-wrong-output": (0.0, False, "trajectory-unmatched"),
    "matched-right-output": (1.0, True, "pass"),
}
# conformance-eval-gating-mean (3 trials, passRule mean, passScore 0.6), per trial. mixed-gates:
# clean; refund before lookup (unmatched, output right); refund 99999 misses (fails closed).
GATING: dict[str, tuple[tuple[float, bool, str], ...]] = {
    "mixed-gates": ((1.0, True, "pass"), (1.0, False, "trajectory-unmatched"),
                    (0.0, False, "fixture-miss")),
    "one-gate-passes": ((1.0, True, "pass"), (1.0, True, "pass"),
                        (1.0, False, "trajectory-unmatched")),
}  # fmt: skip
# Gating scores (gated trials count 0): (1+0+0)/3 = 1/3 < 0.6 fails, (1+1+0)/3 = 2/3 passes,
# though meanScore 2/3 and 1 both reach 0.6. Suite: gating aggregate (1/3 + 2/3)/2 = 1/2 < 0.6,
# so it fails, though aggregateScore (2/3 + 1)/2 = 5/6.
GATING_PASSED = {"mixed-gates": False, "one-gate-passes": True}

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
        "efficiency-outside-brackets",  # the judge's usage counted into efficiency
        "efficiency-last-trial",  # efficiency of the last trial, not the mean
        "efficiency-gated",  # busy-but-correct failed for its counts
        "cost-misses-judge",  # totalCostUsd without the judge's usage
        "memory-bleed",  # one memory per task, shared by its trials
        "onmiss-live-uncounted",  # a miss under onMiss "live" not counted
        "unmatched-zeroes-score",  # unmatched-right-output reports score 0, not its output's 1
        "mean-reads-mean-score",  # passRule mean and the suite read meanScore, not the gate
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
    memory: dict[tuple[str, int], list[dict[str, Any]]] = field(default_factory=dict)
    outcomes: dict[tuple[str, int], bool] = field(default_factory=dict)

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
        for usage in plan.get("usage") or []:
            log.emit("provider.usage", usage, cause)
        for n, call in enumerate(plan.get("calls") or []):
            body = {"agentId": AGENT, "toolName": call["tool"], "callId": f"c-{trial}-{n}"}
            inputs = {} if self.redact_inputs else {"inputs": call.get("args")}
            called = log.emit("agent.tool-called", {**body, **inputs}, cause)
            if "duplicate-tool-event" in self.defects:
                log.emit("agent.tool-called", {**body, "inputs": call.get("args")}, cause)
            missed = task["taskId"] in ("missed-call", "missed-live") or (
                (task["taskId"], trial, n) == ("mixed-gates", 2, 1)
            )
            returned = {**body, "status": "error" if missed else "ok"}
            log.emit("agent.tool-returned", returned, called)
        output = self._remembering(task, trial, plan) if "recall" in plan else plan.get("output")
        log.emit("agent.decided", {"agentId": AGENT, "decision": output}, cause)
        log.emit("agent.invocation-completed", {**started, "outcome": "completed"}, cause)
        if task["taskId"] in EFFICIENCY:
            log.emit("provider.usage", JUDGE_USAGE)  # a judge call: outside every bracket
        log.emit("eval.scored", self._scored(task, trial, count), root)

    def _remembering(self, task: dict[str, Any], trial: int, plan: dict[str, Any]) -> Any:
        """Recall, then remember, over this trial's copy of the seed (or a shared one)."""
        seed = (task.get("fixtures") or {}).get("memorySeed") or []
        key = (task["taskId"], 0 if "memory-bleed" in self.defects else trial)
        memory = self.memory.setdefault(key, [dict(entry) for entry in seed])
        found = [e["value"] for e in memory if e["key"] == plan["recall"]]
        memory.extend(dict(entry) for entry in plan.get("remember") or [])
        recalled = found[-1] if found else None
        self.outcomes[(task["taskId"], trial)] = recalled == RECALLS[task["taskId"]]
        return {"recalled": recalled}

    def _grade(self, task_id: str, trial: int) -> tuple[float, bool, str]:
        if task_id in TRIALS:
            passed = TRIALS[task_id][trial]
            return (1.0 if passed else 0.0), passed, "pass" if passed else "fail"
        if task_id in RECALLS:
            passed = self.outcomes[(task_id, trial)]
            return (1.0 if passed else 0.0), passed, "pass" if passed else "fail"
        if task_id in UNMATCHED:
            score, passed, label = UNMATCHED[task_id]
            if task_id == "unmatched-right-output" and "unmatched-zeroes-score" in self.defects:
                score = 0.0
            return score, passed, label
        if task_id in GATING:
            return GATING[task_id][trial]
        if task_id in EFFICIENCY or task_id in LIVE_MISSES:
            if task_id == "busy-but-correct" and "efficiency-gated" in self.defects:
                return 1.0, False, "over-budget"
            return 1.0, True, "pass"
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

    def _ext_entry(self, task_id: str, count: int, k: int) -> dict[str, Any]:
        grades = [self._grade(task_id, trial) for trial in range(count)]
        c = sum(1 for _, passed, _ in grades if passed)
        mean = sum(score for score, _, _ in grades) / count
        entry: dict[str, Any] = {"taskId": task_id, "score": mean, "passed": c == count}
        if count > 1:
            entry["trials"] = {
                "n": count,
                "passedCount": c,
                "meanScore": mean,
                "passAtK": 1 - math.comb(count - c, k) / math.comb(count, k),
                "passHatK": math.comb(c, k) / math.comb(count, k),
            }
        if task_id in EFFICIENCY:
            values = list(EFFICIENCY[task_id])
            if "efficiency-last-trial" in self.defects:
                values = list(map(float, EFFICIENCY_LAST[task_id]))
            if "efficiency-outside-brackets" in self.defects:  # + 1 judge call a trial
                values = [values[0], values[1] + 1, values[2] + 500, values[3] + 50]
            keys = ("toolCallCount", "modelCallCount", "inputTokens", "outputTokens")
            entry["efficiency"] = dict(zip(keys, values, strict=True))
        if task_id in LIVE_MISSES and "onmiss-live-uncounted" not in self.defects:
            entry["fixtureMissCount"] = LIVE_MISSES[task_id]
        if task_id in GATING_PASSED:  # the defect: meanScore 2/3 and 1 both reach 0.6
            entry["passed"] = GATING_PASSED[task_id] or "mean-reads-mean-score" in self.defects
        return entry

    def _task_entry(self, task_id: str, count: int, k: int) -> dict[str, Any]:
        if task_id not in GRADES and task_id not in TRIALS:
            return self._ext_entry(task_id, count, k)
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
        count = (suite.get("trials") or {}).get("count", 1)
        k = (suite.get("trials") or {}).get("k", count)
        tasks = [self._task_entry(task["taskId"], count, k) for task in suite["tasks"]]
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
        if suite["suiteId"].endswith("conformance-eval-efficiency"):
            missing = "cost-misses-judge" in self.defects
            summary["totalCostUsd"] = COST_INSIDE if missing else COST_TOTAL
        if suite["suiteId"].endswith("conformance-eval-trials"):
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
