"""Varied synthetic run logs for the fold tests: interleaved trials, missing and unscored trials,
budget skips, judge scores and costs, fixture misses, trajectories, resumed attempts, logs of
another host (positional, or with causation chains) and logs that touch a closed trial."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from wopeval.suite.models import AgentEvalSuite
from wopeval.wire.events import (
    Decided,
    EvalScored,
    Failure,
    InvocationCompleted,
    InvocationStarted,
    Payload,
    ProviderUsage,
    RunEvent,
    ToolCalled,
    ToolReturned,
    TrialFailed,
)
from wopeval.wire.vocab import X_TASK_ID

AGENT = "core.acme.agent"
TOOLS = ["kb:search", "kb:fetch", "crm:update"]
COSTS = [0.0, 0.1, 0.2, 0.7, 0.30000000000000004]
SCORES = [0.0, 0.1, 0.3, 0.5, 0.7, 1.0]


def suite_doc(rng: random.Random, tasks: int, count: int) -> dict[str, Any]:
    """A suite of golden, rubric and trajectory tasks (some gated, some fixtured)."""
    docs = []
    for i in range(tasks):
        kind = rng.choice(["golden", "rubric", "trajectory"])
        expected: dict[str, Any] = {"kind": kind}
        if kind == "golden":
            expected["match"] = {"strategy": "exact", "value": "ok"}
        if kind == "rubric":
            expected["rubric"] = [{"criterion": "is polite", "weight": 1}]
        if kind == "trajectory" or rng.random() < 0.4:
            expected["trajectory"] = {
                "match": rng.choice(["exact", "subset", "in-order", "any-order"]),
                "calls": [
                    {"tool": t, "args": {"q": 1}, "argsMatch": rng.choice(["exact", "ignore"])}
                    for t in rng.sample(TOOLS, rng.randint(1, 2))
                ],
                **({"forbidden": ["crm:update"]} if rng.random() < 0.3 else {}),
            }
        task: dict[str, Any] = {"taskId": f"task-{i}", "input": "hi", "expected": expected}
        if rng.random() < 0.5:
            task["fixtures"] = {
                "onMiss": "fail",
                "toolResponses": [{"tool": t, "response": {"ok": True}} for t in TOOLS[:2]],
            }
        docs.append(task)
    thresholds: dict[str, Any] = {"passScore": rng.choice([0.5, 0.7, 1.0])}
    if rng.random() < 0.3:
        thresholds["maxCostUsd"] = rng.choice([0.3, 1.0, 100.0])
    if rng.random() < 0.3:
        thresholds["maxP95LatencyMs"] = rng.choice([5, 500, 5000])
    trials: dict[str, Any] = {"count": count}
    trials["k"] = rng.randint(1, count)
    trials["passRule"] = rng.choice(["all", "any", "mean"])
    return {
        "suiteId": "core.acme.evals.fold",
        "version": "1.0.0",
        "modes": ["golden"],
        "thresholds": thresholds,
        "trials": trials,
        "tasks": docs,
    }


@dataclass
class _Step:
    payload: Payload
    root: bool = False  # the trial's root invocation-started
    caused: bool = True  # carries causationId = the root


@dataclass
class _Trial:
    steps: list[_Step] = field(default_factory=list)


def _bracket(rng: random.Random, task_id: str, index: int, tag: str) -> list[_Step]:
    inv = f"inv-{task_id}-{index}-{tag}"
    steps = [
        _Step(
            InvocationStarted.model_validate(
                {
                    "invocationId": inv,
                    "agentId": AGENT,
                    "source": "run-api",
                    X_TASK_ID: task_id,
                    "x-wopeval-trialIndex": index,
                }
            ),
            root=True,
        )
    ]
    for n in range(rng.randint(0, 4)):
        tool = rng.choice(TOOLS)
        call = f"call-{task_id}-{index}-{tag}-{n}"
        inputs = {"q": rng.choice([1, 2])}
        steps.append(_Step(ToolCalled(agentId=AGENT, toolName=tool, callId=call, inputs=inputs)))
        fixture = rng.choice([None, "served", "served", "miss-failed", "miss-live"])
        returned: dict[str, Any] = {"agentId": AGENT, "toolName": tool, "callId": call}
        if fixture is not None:
            returned["x-wopeval-fixture"] = fixture
            if fixture == "served":
                returned["x-wopeval-fixtureIndex"] = rng.randint(0, 1)
        steps.append(_Step(ToolReturned.model_validate(returned)))
    for _ in range(rng.randint(0, 2)):
        usage = ProviderUsage(
            provider="mock", model="m", inputTokens=rng.randint(0, 50),
            outputTokens=rng.randint(0, 50), costEstimateUsd=rng.choice(COSTS),
        )  # fmt: skip
        steps.append(_Step(usage))
    error = rng.choice([None, None, None, "agent-error", "timeout", "output-not-json"])
    if error is None:
        steps.append(_Step(Decided(agentId=AGENT, decision=rng.choice(["ok", "ok", "no"]))))
    completed = InvocationCompleted.model_validate({
        "invocationId": inv, "agentId": AGENT,
        "outcome": "completed" if error is None else "failed",
        **({"x-wopeval-error": error} if error else {}),
        **({"x-wopeval-failure": Failure(message="boom").model_dump()} if error else {}),
    })  # fmt: skip
    steps.append(_Step(completed))
    return steps


def _score(
    rng: random.Random, task_id: str, index: int, label: str | None = None, reasons: float = 0.85
) -> list[_Step]:
    score = 0.0 if label else rng.choice(SCORES)
    passed = label is None and rng.random() < 0.6
    label = label or rng.choice(["pass", "fail", "trajectory-unmatched", "unscored"])
    evaluator = rng.choice(["deterministic", "llm_judge"])
    scored = EvalScored(
        taskId=task_id, score=score, passed=passed, trialIndex=index, scoreLabel=label,
        evaluatorType=evaluator,
    )  # fmt: skip
    steps = [_Step(scored)]
    if not passed and rng.random() < reasons:  # older and imported logs may lack the reason
        kind = "skipped-budget" if label == "skipped-budget" else rng.choice(
            ["output-mismatch", "trajectory", "agent-error", "fixture-miss", "below-pass-score"]
        )  # fmt: skip
        reason = TrialFailed(taskId=task_id, trialIndex=index, kind=kind, message="why")
        steps.append(_Step(reason))
    return steps


SHAPES = {"normal": 10, "missing": 1, "unscored": 1, "skipped": 1, "resumed": 1, "judge": 1}
CLEAN = {"normal": 10, "missing": 1, "skipped": 1, "judge": 1}  # every trial closes


def _trial(
    rng: random.Random, task_id: str, index: int, shapes: dict[str, int], reasons: float
) -> _Trial | None:
    shape = rng.choices(list(shapes), weights=list(shapes.values()))[0]
    if shape == "missing":
        return None
    if shape == "skipped":
        return _Trial(_score(rng, task_id, index, "skipped-budget", reasons))
    steps = _bracket(rng, task_id, index, "a")
    if shape == "unscored":
        return _Trial(steps)
    if shape == "resumed":  # an attempt interrupted before its eval.scored, then run again
        steps = steps[: rng.randint(1, len(steps))] + _bracket(rng, task_id, index, "b")
    if shape == "judge":  # the judge's usage carries no causationId
        usage = ProviderUsage(provider="judge", model="j", inputTokens=3, outputTokens=1,
                              costEstimateUsd=rng.choice(COSTS))  # fmt: skip
        steps.append(_Step(usage, caused=False))
    return _Trial(steps + _score(rng, task_id, index, reasons=reasons))


def run_log(
    rng: random.Random,
    suite: AgentEvalSuite,
    *,
    concurrency: int = 4,
    style: str = "wopeval",
    shapes: dict[str, int] = SHAPES,
    reasons: float = 0.85,
) -> list[RunEvent]:
    """The log of a run of ``suite``: trials interleaved ``concurrency`` at a time.

    ``shapes`` weighs the kinds of trial; ``reasons`` is the share of trials that did not pass
    with a recorded reason. ``style``: ``wopeval`` (causation to the root), ``positional``
    (another host's log: no trial markers, no causation, one trial after another), ``chained``
    (another host whose events each name the previous one as their cause), ``late`` (a closed
    trial touched again).
    """
    count = suite.trial_plan.effective_count
    trials = [
        t
        for task in suite.tasks
        for i in range(count)
        if (t := _trial(rng, task.taskId, i, shapes, reasons))
    ]
    rng.shuffle(trials)
    if style in ("positional", "chained"):
        concurrency = 1
    order: list[_Step] = []
    roots: list[int] = []  # the index in ``order`` of each step's root
    running: list[tuple[_Trial, int, int]] = []  # (trial, next step, root position)
    pending = list(trials)
    while pending or running:
        while pending and len(running) < concurrency:
            running.append((pending.pop(0), 0, -1))
        pick = rng.randrange(len(running))
        trial, at, root = running[pick]
        step = trial.steps[at]
        if step.root:
            root = len(order)
        order.append(step)
        roots.append(root)
        if at + 1 < len(trial.steps):
            running[pick] = (trial, at + 1, root)
        else:
            running.pop(pick)
    events = [_event(n, step, roots[n], style) for n, step in enumerate(order)]
    if style == "late" and events:
        scored = [e for e in events if e.type == "eval.scored"]
        if scored:
            events.append(_copy(scored[0], len(events)))
    return events


def _event(n: int, step: _Step, root: int, style: str) -> RunEvent:
    payload = step.payload.to_wire()
    cause: str | None = None
    if style == "positional" or style == "chained":
        payload.pop(X_TASK_ID, None)
        payload.pop("x-wopeval-trialIndex", None)
        cause = f"evt-fold-{n - 1:08d}" if style == "chained" and n else None
    elif step.caused and not step.root and root >= 0:
        cause = f"evt-fold-{root:08d}"
    return RunEvent(
        eventId=f"evt-fold-{n:08d}",
        runId="run-fold",
        type=step.payload.event_type,
        payload=payload,
        timestamp=f"2026-12-01T09:{n // 600 % 60:02d}:{n // 10 % 60:02d}.{n % 10}00Z",
        sequence=n,
        causationId=cause,
    )


def _copy(event: RunEvent, n: int) -> RunEvent:
    return event.model_copy(update={"eventId": f"evt-fold-{n:08d}", "sequence": n})
