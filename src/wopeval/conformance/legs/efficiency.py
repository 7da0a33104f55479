"""Extension legs over ``conformance-eval-efficiency`` (RFC 0244 §C and §B Cost).

Opt-in (``--extended``), reported under ``wopeval.ext.*``: the official suite leaves these rows
"witnessable, not probed". The fixture runs two scripted tasks three times each; every trial
reports model usage with a cost, the per-trial counts differ, and one task makes many calls and
spends many tokens yet returns the right output.

* ``efficiency-counted``: per task, ``efficiency.toolCallCount`` / ``modelCallCount`` /
  ``inputTokens`` / ``outputTokens`` equal the means over the trials of the ``agent.tool-called``
  and ``provider.usage`` events (token fields summed) inside each trial's bracket
  (:mod:`wopeval.conformance.brackets`); each bracket carries exactly the scripted calls and usage.
* ``efficiency-not-gated``: a task whose output is right on every trial passes, whatever its
  counts, and so does the suite when every task is right ("MUST NOT fail a task or a suite").
* ``cost-counts-every-trial``: ``totalCostUsd`` equals the sum of every ``provider.usage``
  ``costEstimateUsd`` in the log, within 1e-9 relative, and every trial's bracket carries its
  scripted cost (``thresholds.maxCostUsd`` and ``maxCostUsdPerSuite`` "MUST count every trial").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from wopeval.conformance.brackets import trial_events
from wopeval.conformance.formulas import RELATIVE_TOLERANCE, agrees, exact_mean
from wopeval.conformance.legs.common import Checker, RunCapture, is_number
from wopeval.conformance.suites import (
    Task,
    expected_pass,
    scripted_calls,
    scripted_plan,
    tasks_of,
    trial_plan,
)

TOOL_CALLED = "agent.tool-called"
PROVIDER_USAGE = "provider.usage"
HIGH_CALL_COUNT = 10
EFFICIENCY_FIELDS = ("toolCallCount", "modelCallCount", "inputTokens", "outputTokens")


def _number(value: Any) -> Fraction:
    return Fraction(value) if is_number(value) else Fraction(0)


@dataclass(frozen=True)
class Counts:
    """What one trial's bracket (or a scripted trial) holds, in the §C fields and the cost."""

    toolCallCount: int
    modelCallCount: int
    inputTokens: Fraction
    outputTokens: Fraction
    cost: Fraction
    costed: int

    def field(self, name: str) -> Fraction:
        return Fraction(getattr(self, name))

    @classmethod
    def of(cls, calls: int, usages: Iterable[dict[str, Any]]) -> Counts:
        usage = list(usages)
        return cls(
            toolCallCount=calls,
            modelCallCount=len(usage),
            inputTokens=sum((_number(u.get("inputTokens")) for u in usage), Fraction(0)),
            outputTokens=sum((_number(u.get("outputTokens")) for u in usage), Fraction(0)),
            cost=sum((_number(u.get("costEstimateUsd")) for u in usage), Fraction(0)),
            costed=sum(1 for u in usage if is_number(u.get("costEstimateUsd"))),
        )

    @classmethod
    def observed(cls, events: Iterable[Mapping[str, Any]]) -> Counts:
        kept = list(events)
        calls = sum(1 for e in kept if e.get("type") == TOOL_CALLED)
        usage = [e.get("payload") for e in kept if e.get("type") == PROVIDER_USAGE]
        return cls.of(calls, (u if isinstance(u, dict) else {} for u in usage))


def scripted_usage(task_input: Any, trial_index: int) -> list[dict[str, Any]]:
    """The ``usage`` entries the scripted agent reports in a trial, delegates included."""
    plan = scripted_plan(task_input, trial_index)
    found = [u for u in plan.get("usage") or () if isinstance(u, dict)]
    for entry in plan.get("calls") or ():
        if isinstance(entry, dict) and isinstance(entry.get("delegate"), dict):
            found += scripted_usage(entry["delegate"].get("input", {}), 0)
    return found


def scripted_counts(task: Task, trial_index: int) -> Counts:
    """The counts a trial of a scripted task must show (docs/agents.md)."""
    task_input = task.get("input")
    calls = len(scripted_calls(task_input, trial_index))
    return Counts.of(calls, scripted_usage(task_input, trial_index))


def relatively_equal(host: object, want: Fraction) -> bool:
    """``|host − want| ≤ 1e-9 · |want|`` (exactly 0 when ``want`` is 0); non-numbers never are."""
    if not is_number(host):
        return False
    assert isinstance(host, int | float)
    return abs(Fraction(host) - want) <= Fraction(RELATIVE_TOLERANCE) * abs(want)


def _observed_trials(ck: Checker, capture: RunCapture, task: Task) -> list[Counts] | None:
    """Each trial's bracket counts, checked against the script; None when a trial is missing."""
    count, _, _ = trial_plan(capture.suite)
    task_id = str(task["taskId"])
    by_trial = trial_events(capture.events)
    observed: list[Counts] = []
    for index in range(count):
        events = by_trial.get((task_id, index))
        if not ck.check(events is not None, f"{task_id} trial {index}: no bracket in the log"):
            return None
        assert events is not None
        seen, want = Counts.observed(events), scripted_counts(task, index)
        for name in ("toolCallCount", "modelCallCount"):
            ck.check(
                seen.field(name) == want.field(name),
                f"{task_id} trial {index}: {seen.field(name)} {name.removesuffix('Count')} "
                f"events inside the bracket, the script makes {want.field(name)}",
            )
        observed.append(seen)
    return observed


def check_efficiency_counted(capture: RunCapture) -> Checker:
    """``wopeval.ext.efficiency-counted``: §C fields are means over the trials' brackets."""
    ck = Checker()
    for task in tasks_of(capture.suite):
        task_id = str(task["taskId"])
        observed = _observed_trials(ck, capture, task)
        entry = capture.summary_task(task_id) or {}
        block = entry.get("efficiency")
        if not ck.check(isinstance(block, dict), f"{task_id}: the summary has no efficiency"):
            continue
        assert isinstance(block, dict)
        if observed is None:
            continue
        for name in EFFICIENCY_FIELDS:
            values = [counts.field(name) for counts in observed]
            mean = exact_mean(values)
            ck.check(
                agrees(block.get(name), mean),
                f"{task_id}: efficiency.{name} {block.get(name)!r}, the mean over the trials' "
                f"brackets is {float(mean)!r} (per trial {[float(v) for v in values]})",
            )
    return ck


def check_efficiency_not_gated(capture: RunCapture) -> Checker:
    """``wopeval.ext.efficiency-not-gated``: right outputs pass, however busy (§C)."""
    ck = Checker()
    count, _, _ = trial_plan(capture.suite)
    tasks = tasks_of(capture.suite)
    right = [t for t in tasks if all(expected_pass(t, i) is True for i in range(count))]
    busy = [
        t
        for t in right
        if all(scripted_counts(t, i).toolCallCount >= HIGH_CALL_COUNT for i in range(count))
    ]
    ck.check(bool(busy), f"the fixture has no right task with ≥ {HIGH_CALL_COUNT} calls a trial")
    for task in right:
        task_id = str(task["taskId"])
        entry = capture.summary_task(task_id) or {}
        why = f"its output is right on every trial (efficiency {entry.get('efficiency')!r})"
        for payload in capture.scored(task_id):
            ck.check(
                payload.get("passed") is True,
                f"{task_id} trial {payload.get('trialIndex')}: passed="
                f"{payload.get('passed')!r}, but the output is right; §C MUST NOT gate",
            )
        ck.check(entry.get("passed") is True, f"{task_id}: passed={entry.get('passed')!r}; {why}")
    if tasks and len(right) == len(tasks):
        passed = capture.summary.get("passed")
        ck.check(passed is True, f"suite passed={passed!r}, but every task's output is right")
    return ck


def _usage_cost(events: Iterable[Mapping[str, Any]]) -> Fraction:
    return Counts.observed(events).cost


def check_cost_every_trial(capture: RunCapture) -> Checker:
    """``wopeval.ext.cost-counts-every-trial``: ``totalCostUsd`` sums every usage (§B Cost)."""
    ck = Checker()
    count, _, _ = trial_plan(capture.suite)
    ck.check(count > 1, f"the fixture runs {count} trial(s); the leg needs more than one")
    by_trial = trial_events(capture.events)
    inside = Fraction(0)
    for task in tasks_of(capture.suite):
        task_id = str(task["taskId"])
        for index in range(count):
            events = by_trial.get((task_id, index))
            if not ck.check(events is not None, f"{task_id} trial {index}: no bracket in the log"):
                continue
            assert events is not None
            seen, want = Counts.observed(events), scripted_counts(task, index)
            inside += seen.cost
            cost = float(seen.cost)
            ck.check(
                seen.costed >= 1 and relatively_equal(cost, want.cost),
                f"{task_id} trial {index}: the bracket's provider.usage cost {cost!r} "
                f"({seen.costed} priced), the script reports {float(want.cost)!r}",
            )
    total = _usage_cost(capture.events)
    reported = capture.summary.get("totalCostUsd")
    ck.check(
        relatively_equal(reported, total),
        f"totalCostUsd {reported!r}, every provider.usage in the log sums to {float(total)!r} "
        f"({float(inside)!r} inside trial brackets, {float(total - inside)!r} outside)",
    )
    return ck
