"""Extension legs ``wopeval.ext.trial-isolation`` (RFC 0244 §B) and ``onmiss-live-reported`` (§D).

Opt-in (``--extended``), reported under ``wopeval.ext.*``.

* trial-isolation, over ``conformance-eval-isolation`` (``count`` ≥ 3): each scripted task first
  ``recall``s a memory key, then ``remember``s a new value under it (docs/agents.md). Its golden
  expectation is ``{"recalled": <the memorySeed value, or null>}`` under ``json-match``, so a
  trial passes only if it saw the seed snapshot and no earlier trial's write ("each trial MUST
  start from the same … memorySeed snapshot"; "memory written by one trial MUST NOT be visible
  to another trial"). Every ``eval.scored`` must pass, and the summary must report
  ``passedCount`` = n. One task has no seed but shares the key, so a bleed across tasks shows too.
  The RFC marks this row seam-gated (G3); the scripted agent's ``recall``/``remember`` is the seam.
* onmiss-live-reported, over ``conformance-eval-onmiss-live``: under ``onMiss: "live"`` a task
  whose call matches no fixture reports ``fixtureMissCount`` = its misses (the §D selection run
  over the scripted calls), whatever the live call did; a fully served task reports none. The
  missed tool is a suite-owned name (``conformance:unfixtured-probe``) no host is expected to
  have, so the live call is an ordinary tool error: the leg needs no live tool, and whether the
  task passes is not asserted.
"""

from __future__ import annotations

from wopeval.conformance.legs.common import Checker, RunCapture
from wopeval.conformance.suites import (
    Task,
    fixture_misses,
    scripted_calls,
    scripted_plan,
    tasks_of,
    trial_plan,
)

MIN_ISOLATION_TRIALS = 3


def recall_expectation(task: Task) -> object:
    """What the task's golden ``json-match`` says every trial must recall."""
    value = ((task.get("expected") or {}).get("match") or {}).get("value")
    return value.get("recalled") if isinstance(value, dict) else None


def check_trial_isolation(capture: RunCapture) -> Checker:
    """``wopeval.ext.trial-isolation``: no trial sees another trial's memory write (§B)."""
    ck = Checker()
    count, _, _ = trial_plan(capture.suite)
    ck.check(
        count >= MIN_ISOLATION_TRIALS,
        f"the fixture runs {count} trials; the leg needs {MIN_ISOLATION_TRIALS}",
    )
    for task in tasks_of(capture.suite):
        task_id = str(task["taskId"])
        key = scripted_plan(task.get("input"), 0).get("recall")
        want = recall_expectation(task)
        scored = capture.scored(task_id)
        ck.check(len(scored) == count, f"{task_id}: {len(scored)} eval.scored, want {count}")
        for payload in scored:
            ck.check(
                payload.get("passed") is True,
                f"{task_id} trial {payload.get('trialIndex')}: did not pass, so recalling "
                f"{key!r} did not give the seed snapshot's {want!r}: the trial saw memory "
                "another trial wrote",
            )
        entry = capture.summary_task(task_id) or {}
        trials = entry.get("trials") if isinstance(entry.get("trials"), dict) else {}
        assert isinstance(trials, dict)
        ck.check(
            trials.get("passedCount") == count,
            f"{task_id}: trials.passedCount {trials.get('passedCount')!r}, want {count} "
            "(every trial recalls the seed snapshot)",
        )
        ck.check(entry.get("passed") is True, f"{task_id}: passed={entry.get('passed')!r}")
    return ck


def check_onmiss_live(capture: RunCapture) -> Checker:
    """``wopeval.ext.onmiss-live-reported``: a live miss is still counted (§D)."""
    ck = Checker()
    count, _, _ = trial_plan(capture.suite)
    live_missed = 0
    for task in tasks_of(capture.suite):
        task_id = str(task["taskId"])
        entry = capture.summary_task(task_id)
        if not ck.check(entry is not None, f"{task_id}: no summary entry"):
            continue
        assert entry is not None
        live = (task.get("fixtures") or {}).get("onMiss") == "live"
        misses = sum(
            fixture_misses(task, scripted_calls(task.get("input"), i)) for i in range(count)
        )
        reported = entry.get("fixtureMissCount")
        if live and misses:
            live_missed += 1
            ck.check(
                reported == misses,
                f"{task_id}: missed {misses} fixture(s) under onMiss 'live', but "
                f"fixtureMissCount is {reported!r}; §D: MUST carry fixtureMissCount > 0",
            )
        elif not misses:
            ck.check(
                reported in (None, 0),
                f"{task_id}: every call was served, fixtureMissCount {reported!r}",
            )
    ck.check(live_missed > 0, "the fixture has no task that misses under onMiss 'live'")
    return ck
