"""Extension legs for the RFC 0246 correction of RFC 0244 §A–§B: the score stays, the gate reads 0.

Opt-in (``--extended``), reported under ``wopeval.ext.*``. RFC 0244 §A: a golden or rubric
trial with a ``trajectory`` "MUST NOT pass unless the trajectory matched. The trial's ``score``
stays the output score." RFC 0246: "the two pass decisions read a gating score in which this
trial counts 0"; ``passRule: "mean"`` reads the task gating score, the suite ``passed`` reads
the gating aggregate, ``meanScore`` is unchanged. A trial that failed closed on a fixture miss
(§D) also counts 0.

* unmatched-keeps-score, over ``conformance-eval-unmatched-score``: each golden trial reports
  its output score (1 when the scripted output matches ``expected.match``, else 0) on
  ``eval.scored``, matched or not; an unmatched trial does not pass; the task ``score`` and the
  ``aggregateScore`` are the means of those output scores.
* gating-score-mean, over ``conformance-eval-gating-mean`` (``passRule: "mean"``): per task,
  ``meanScore`` and ``score`` are the plain mean of the observed trial scores, and ``passed`` is
  the mean *gating* score (a trial whose scripted path is unmatched, or that misses a fixture
  under ``onMiss: "fail"``, counts 0; any other its observed score) against ``passScore``; a
  gated trial does not pass; when the gating aggregate (the mean of the task gating scores) is
  below ``passScore``, the suite does not pass. Decisions are exact (``formulas.meets``).

The script fixes each trial's path (docs/agents.md), so the kit knows in advance which trials
are gated: :func:`trial_facts`. That the log's calls follow the script is
``0244.trajectory-graded``'s business.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from wopeval.conformance.catalog import SCRIPTED_AGENT_ID
from wopeval.conformance.formulas import agrees, exact_mean, meets, recorded
from wopeval.conformance.legs.common import Checker, RunCapture
from wopeval.conformance.reference import grade
from wopeval.conformance.suites import (
    Suite,
    Task,
    expectation_of,
    fixture_misses,
    output_matches,
    scripted_calls,
    scripted_plan,
    tasks_of,
    trial_plan,
)


@dataclass(frozen=True)
class TrialFacts:
    """What the script fixes about one trial: its expected score, and why it is gated."""

    score: Fraction | None  # None: the kit cannot grade the output unaided
    unmatched: bool
    failed_closed: bool

    @property
    def gated(self) -> bool:
        return self.unmatched or self.failed_closed

    @property
    def why(self) -> str:
        return "failed closed" if self.failed_closed else "unmatched" if self.unmatched else ""


def trial_facts(task: Task, index: int) -> TrialFacts:
    """The script's trial ``index`` of a task: score 0 when it fails closed (§D), else golden."""
    calls = scripted_calls(task.get("input"), index)
    fixtures = task.get("fixtures") or {}
    failed_closed = fixtures.get("onMiss") == "fail" and fixture_misses(task, calls) > 0
    expectation = expectation_of(task)
    unmatched = expectation is not None and not grade(expectation, calls, SCRIPTED_AGENT_ID).matched
    expected = task.get("expected") or {}
    score: Fraction | None = None
    if failed_closed:
        score = Fraction(0)
    elif expected.get("kind") == "golden":
        ok = output_matches(
            expected.get("match") or {}, scripted_plan(task.get("input"), index).get("output")
        )
        score = None if ok is None else Fraction(int(ok))
    return TrialFacts(score, unmatched, failed_closed)


def pass_score_of(suite: Suite) -> float | None:
    return _number((suite.get("thresholds") or {}).get("passScore"))


def _by_index(ck: Checker, task_id: str, scored: list[dict[str, Any]], count: int) -> list[Any]:
    """The task's ``eval.scored`` payloads by trial index (``trialIndex`` may be absent at 1)."""
    found: dict[int, dict[str, Any]] = {}
    for payload in scored:
        index = payload.get("trialIndex", 0 if count == 1 else None)
        if isinstance(index, int) and not isinstance(index, bool) and 0 <= index < count:
            found.setdefault(index, payload)
    ck.check(
        len(scored) == count and len(found) == count,
        f"{task_id}: eval.scored trial indices "
        f"{[p.get('trialIndex') for p in scored]}, want 0..{count - 1} once each",
    )
    return [found.get(index) for index in range(count)]


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _score(payload: dict[str, Any] | None) -> float | None:
    return _number((payload or {}).get("score"))


def check_unmatched_keeps_score(capture: RunCapture) -> Checker:
    """``wopeval.ext.unmatched-keeps-score``: an unmatched golden trial keeps its output score."""
    ck = Checker()
    count, _, _ = trial_plan(capture.suite)
    task_means: list[Fraction] = []
    for task in tasks_of(capture.suite):
        task_id = str(task["taskId"])
        facts = [trial_facts(task, index) for index in range(count)]
        for index, (payload, fact) in enumerate(
            zip(_by_index(ck, task_id, capture.scored(task_id), count), facts, strict=True)
        ):
            if payload is None or fact.score is None:
                continue
            where = f"{task_id} trial {index}"
            path = "unmatched" if fact.unmatched else "matched"
            ck.check(
                agrees(payload.get("score"), fact.score),
                f"{where}: score {payload.get('score')!r}, the output score is "
                f"{float(fact.score)!r} (trajectory {path}; §A: the score stays the output score)",
            )
            if fact.unmatched:
                ck.check(
                    payload.get("passed") is False,
                    f"{where}: passed={payload.get('passed')!r}, but the trajectory is unmatched",
                )
        if any(fact.score is None for fact in facts):
            continue
        mean = exact_mean([fact.score for fact in facts if fact.score is not None])
        task_means.append(mean)
        entry = capture.summary_task(task_id) or {}
        ck.check(
            agrees(entry.get("score"), mean),
            f"{task_id}: summary score {entry.get('score')!r}, the mean output score is "
            f"{float(mean)!r}",
        )
        if all(fact.unmatched for fact in facts):
            ck.check(entry.get("passed") is False, f"{task_id}: passed={entry.get('passed')!r}")
    if task_means:
        aggregate = exact_mean(task_means)
        ck.check(
            agrees(capture.summary.get("aggregateScore"), aggregate),
            f"aggregateScore {capture.summary.get('aggregateScore')!r}, the mean of the task "
            f"output scores is {float(aggregate)!r}",
        )
    return ck


def _task_gating(
    ck: Checker, task: Task, capture: RunCapture, count: int
) -> tuple[Fraction, Fraction] | None:
    """``(meanScore, gating score)`` over the observed trials; None when a score is missing."""
    task_id = str(task["taskId"])
    scores: list[Fraction] = []
    gating: list[Fraction] = []
    for index, payload in enumerate(_by_index(ck, task_id, capture.scored(task_id), count)):
        score = _score(payload)
        if payload is None or score is None:
            ck.fail(f"{task_id} trial {index}: no eval.scored with a numeric score")
            return None
        fact = trial_facts(task, index)
        if fact.gated:
            ck.check(
                payload.get("passed") is False,
                f"{task_id} trial {index}: passed={payload.get('passed')!r}, but it {fact.why}",
            )
        scores.append(recorded(score))
        gating.append(Fraction(0) if fact.gated else recorded(score))
    return exact_mean(scores), exact_mean(gating)


def _check_task(
    ck: Checker, task_id: str, entry: dict[str, Any], means: tuple[Fraction, Fraction], bar: float
) -> None:
    mean, gating = means
    block = entry.get("trials") if isinstance(entry.get("trials"), dict) else {}
    assert isinstance(block, dict)
    for name, value in (
        ("trials.meanScore", block.get("meanScore")),
        ("score", entry.get("score")),
    ):
        ck.check(
            agrees(value, mean),
            f"{task_id}: {name} {value!r}, the mean of the observed scores is {float(mean)!r} "
            "(RFC 0246: meanScore is unchanged)",
        )
    want = meets(gating, bar)
    ck.check(
        entry.get("passed") is want,
        f"{task_id}: passed={entry.get('passed')!r}; passRule 'mean' reads the gating score "
        f"{float(gating):.6g} (gated trials count 0) against passScore {bar!r}: {want} "
        f"(meanScore {float(mean):.6g} would give {meets(mean, bar)})",
    )


def check_gating_mean(capture: RunCapture) -> Checker:
    """``wopeval.ext.gating-score-mean``: ``passRule: "mean"`` and the suite read the gate."""
    ck = Checker()
    count, _, rule = trial_plan(capture.suite)
    bar = pass_score_of(capture.suite)
    ck.check(rule == "mean", f"the fixture's passRule is {rule!r}; the leg needs 'mean'")
    if not ck.check(bar is not None, "the fixture declares no thresholds.passScore"):
        return ck
    assert bar is not None
    per_task: list[tuple[Fraction, Fraction]] = []
    for task in tasks_of(capture.suite):
        task_id = str(task["taskId"])
        means = _task_gating(ck, task, capture, count)
        entry = capture.summary_task(task_id)
        if means is None or not ck.check(entry is not None, f"{task_id}: no summary entry"):
            continue
        assert entry is not None
        _check_task(ck, task_id, entry, means, bar)
        per_task.append(means)
    if len(per_task) < len(tasks_of(capture.suite)):
        return ck
    aggregate = exact_mean([mean for mean, _ in per_task])
    gating = exact_mean([gate for _, gate in per_task])
    reported = capture.summary.get("aggregateScore")
    ck.check(
        agrees(reported, aggregate),
        f"aggregateScore {reported!r}, the mean of the task meanScores is {float(aggregate)!r}",
    )
    if not meets(gating, bar):
        ck.check(
            capture.summary.get("passed") is False,
            f"suite passed={capture.summary.get('passed')!r}, but the gating aggregate "
            f"{float(gating):.6g} is below passScore {bar!r} (RFC 0246; aggregateScore "
            f"{float(aggregate):.6g} would pass)",
        )
    return ck
