"""Legs ``0244.trials-per-task`` and ``0244.trial-stats-formula`` (RFC 0244 §B).

Over ``conformance-eval-trials`` (``count: 3``, ``k: 2``), whose scripted trials pass and fail in
a pattern fixed by the script's per-trial overrides:

* trials-per-task: one ``eval.started`` carrying ``trialCount`` = count; per task, ``trialIndex``
  0..count−1 exactly once on ``eval.scored``; one bracket per trial; each trial's ``passed`` as
  the script fixes it; the summary's ``trials.n`` = count.
* trial-stats-formula: per task, ``passedCount``, ``meanScore``, ``passAtK``, ``passHatK``, the
  task ``score`` (= meanScore) and ``passed`` (``passRule``), and the suite's ``trialStats``
  (``k``, mean pass@k and pass^k, ``scoreStderr``), all against the formulas evaluated over the
  *observed* ``eval.scored`` events, within ``1e-9 · max(1, |formula|)``.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from wopeval.conformance.attribution import attribute
from wopeval.conformance.formulas import (
    agrees,
    clustered_stderr,
    exact_mean,
    pass_at_k,
    pass_hat_k,
)
from wopeval.conformance.legs.common import Checker, RunCapture
from wopeval.conformance.suites import Task, expected_pass, tasks_of, trial_plan


def _check_indices(ck: Checker, task_id: str, scored: list[dict[str, Any]], count: int) -> None:
    indices = [p.get("trialIndex") for p in scored]
    integral = [i for i in indices if isinstance(i, int) and not isinstance(i, bool)]
    ck.check(
        len(integral) == len(indices),
        f"{task_id}: an eval.scored lacks an integer trialIndex ({indices})",
    )
    ck.check(
        len(indices) == count and sorted(integral) == list(range(count)),
        f"{task_id}: trialIndex values {indices}, want 0..{count - 1} exactly once each",
    )


def _check_pattern(ck: Checker, task: Task, scored: list[dict[str, Any]]) -> None:
    for payload in scored:
        index = payload.get("trialIndex")
        if not isinstance(index, int) or isinstance(index, bool):
            continue
        known = expected_pass(task, index)
        if known is not None:
            ck.check(
                payload.get("passed") is known,
                f"{task['taskId']} trial {index}: passed={payload.get('passed')!r}, "
                f"the scripted trial must give {known}",
            )


def check_trials_per_task(capture: RunCapture) -> Checker:
    """``0244.trials-per-task``: ``trialCount``, contiguous unique ``trialIndex``, brackets."""
    ck = Checker()
    count, _, _ = trial_plan(capture.suite)
    started = capture.payloads("eval.started")
    if ck.check(len(started) == 1, f"{len(started)} eval.started events, want 1"):
        trial_count = started[0].get("trialCount")
        ck.check(trial_count == count, f"eval.started.trialCount {trial_count!r}, want {count}")
    tasks = tasks_of(capture.suite)
    brackets = attribute(capture.events).bracket_count
    ck.check(
        brackets == len(tasks) * count,
        f"{brackets} trial brackets in the log, want {len(tasks) * count} "
        f"({len(tasks)} tasks × {count} trials)",
    )
    for task in tasks:
        task_id = str(task["taskId"])
        scored = capture.scored(task_id)
        _check_indices(ck, task_id, scored, count)
        _check_pattern(ck, task, scored)
        entry = capture.summary_task(task_id) or {}
        n = (entry.get("trials") or {}).get("n")
        ck.check(n == count, f"{task_id}: summary trials.n {n!r}, want {count}")
    return ck


def _observed(scored: list[dict[str, Any]]) -> tuple[int, list[float]] | None:
    """``(c, scores)`` over the observed trials; None when an event lacks a score or passed."""
    scores: list[float] = []
    for payload in scored:
        score = payload.get("score")
        if isinstance(score, bool) or not isinstance(score, int | float):
            return None
        if not isinstance(payload.get("passed"), bool):
            return None
        scores.append(float(score))
    return sum(1 for p in scored if p.get("passed") is True), scores


def _check_task_stats(
    ck: Checker,
    task_id: str,
    entry: dict[str, Any],
    observed: tuple[int, list[float]],
    k: int,
    rule: str,
) -> tuple[Fraction, Fraction, Fraction]:
    c, scores = observed
    n = len(scores)
    mean, at_k, hat_k = exact_mean(scores), pass_at_k(n, c, k), pass_hat_k(n, c, k)
    block = entry.get("trials") if isinstance(entry.get("trials"), dict) else {}
    assert isinstance(block, dict)
    ck.check(
        block.get("passedCount") == c,
        f"{task_id}: trials.passedCount "
        f"{block.get('passedCount')!r}, observed {c} passing eval.scored",
    )
    for name, formula in (("meanScore", mean), ("passAtK", at_k), ("passHatK", hat_k)):
        ck.check(
            agrees(block.get(name), formula),
            f"{task_id}: trials.{name} "
            f"{block.get(name)!r}, formula over the observed trials gives {float(formula)!r}"
            f" (n={n}, c={c}, k={k})",
        )
    ck.check(
        agrees(entry.get("score"), mean),
        f"{task_id}: score {entry.get('score')!r} is not meanScore {float(mean)!r}",
    )
    if rule in ("all", "any"):
        want = c == n if rule == "all" else c >= 1
        ck.check(
            entry.get("passed") is want,
            f"{task_id}: passed={entry.get('passed')!r}, passRule {rule!r} with c={c}/{n} "
            f"gives {want}",
        )
    return mean, at_k, hat_k


def _check_suite_stats(
    ck: Checker,
    summary: dict[str, Any],
    k: int,
    per_task: list[tuple[Fraction, Fraction, Fraction]],
) -> None:
    stats = summary.get("trialStats")
    if not ck.check(isinstance(stats, dict), "the summary has no trialStats"):
        return
    assert isinstance(stats, dict)
    ck.check(stats.get("k") == k, f"trialStats.k {stats.get('k')!r}, want {k}")
    for name, column in (("passAtK", 1), ("passHatK", 2)):
        formula = exact_mean([values[column] for values in per_task])
        ck.check(
            agrees(stats.get(name), formula),
            f"trialStats.{name} {stats.get(name)!r}, "
            f"the mean of the per-task formula values is {float(formula)!r}",
        )
    stderr = clustered_stderr([values[0] for values in per_task])
    if stderr is None:
        ck.check("scoreStderr" not in stats, "trialStats.scoreStderr present with < 2 tasks")
    else:
        ck.check(
            agrees(stats.get("scoreStderr"), stderr),
            f"trialStats.scoreStderr "
            f"{stats.get('scoreStderr')!r}, the formula over the observed per-task means "
            f"gives {stderr!r}",
        )


def check_trial_stats(capture: RunCapture) -> Checker:
    """``0244.trial-stats-formula``: the §B numbers against the formulas over observed trials."""
    ck = Checker()
    count, k, rule = trial_plan(capture.suite)
    per_task: list[tuple[Fraction, Fraction, Fraction]] = []
    for task in tasks_of(capture.suite):
        task_id = str(task["taskId"])
        scored = capture.scored(task_id)
        observed = _observed(scored)
        if not ck.check(
            observed is not None and len(scored) == count,
            f"{task_id}: {len(scored)} well-formed eval.scored needed {count}; "
            "the formulas cannot be evaluated",
        ):
            continue
        assert observed is not None
        entry = capture.summary_task(task_id)
        if not ck.check(entry is not None, f"{task_id}: no summary entry"):
            continue
        assert entry is not None
        per_task.append(_check_task_stats(ck, task_id, entry, observed, k, rule))
    if len(per_task) == len(tasks_of(capture.suite)):
        _check_suite_stats(ck, capture.summary, k, per_task)
    return ck
