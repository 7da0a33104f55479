"""Extension leg ``wopeval.ext.fixtures-valid`` (server-free): the extension fixtures are sound.

Each extension fixture passes every check of ``0244.fixtures-valid`` (schema, suite rules, the
kit's contract), and is designed so that its legs are decisive:

* ``conformance-eval-efficiency``: more than one trial; every trial of every task reports usage
  with a cost and has every call served; the per-trial counts differ for some task (so a host
  reporting one trial instead of the mean is caught); some task makes ≥ 10 calls a trial and is
  right on every trial (the not-gated probe);
* ``conformance-eval-isolation``: at least three trials; each task recalls a key, then remembers
  a different value under it, and expects ``{"recalled": <its memorySeed value or null>}``;
  some task has no seed for that key;
* ``conformance-eval-onmiss-live``: a task that misses under ``onMiss: "live"`` and a fully
  served task;
* ``conformance-eval-unmatched-score``: every call served; an unmatched golden trial whose output
  matches (score 1 to keep) and one whose output does not;
* ``conformance-eval-gating-mean``: ``passRule: "mean"`` with a ``passScore``; an unmatched trial
  whose output matches and a trial that fails closed; some task whose mean score meets
  ``passScore`` while its gating score does not, another whose gating score meets it; a suite
  whose mean of task scores meets ``passScore`` while the gating aggregate does not; no
  decision within 0.01 of ``passScore``, so float arithmetic cannot tip it.
"""

from __future__ import annotations

from fractions import Fraction

from wopeval.conformance.catalog import (
    EFFICIENCY_FIXTURE,
    GATING_MEAN_FIXTURE,
    ISOLATION_FIXTURE,
    ONMISS_LIVE_FIXTURE,
    UNMATCHED_SCORE_FIXTURE,
    Fixture,
)
from wopeval.conformance.formulas import exact_mean, recorded
from wopeval.conformance.legs.common import Checker
from wopeval.conformance.legs.efficiency import HIGH_CALL_COUNT, scripted_counts
from wopeval.conformance.legs.fixtures_valid import check_fixture, check_fixtures
from wopeval.conformance.legs.gating_score import TrialFacts, pass_score_of, trial_facts
from wopeval.conformance.legs.isolation import MIN_ISOLATION_TRIALS, recall_expectation
from wopeval.conformance.reference import json_equal
from wopeval.conformance.suites import (
    Suite,
    Task,
    expected_pass,
    fixture_misses,
    scripted_calls,
    scripted_plan,
    tasks_of,
    trial_plan,
)


def _efficiency_errors(suite: Suite) -> list[str]:
    count, _, _ = trial_plan(suite)
    tasks = tasks_of(suite)
    errors = [] if count > 1 else ["needs more than one trial"]
    for task in tasks:
        for index in range(count):
            counts = scripted_counts(task, index)
            if counts.costed == 0 or counts.costed != counts.modelCallCount:
                errors.append(f"{task.get('taskId')} trial {index}: usage without a cost")
            if fixture_misses(task, scripted_calls(task.get("input"), index)):
                errors.append(f"{task.get('taskId')} trial {index}: a call is not served")
    if not any(len({scripted_counts(t, i) for i in range(count)}) > 1 for t in tasks):
        errors.append("no task's counts differ between trials")
    busy = [
        t
        for t in tasks
        if all(
            expected_pass(t, i) is True and scripted_counts(t, i).toolCallCount >= HIGH_CALL_COUNT
            for i in range(count)
        )
    ]
    if not busy:
        errors.append(f"needs a task right on every trial with ≥ {HIGH_CALL_COUNT} calls")
    return errors


def _seed_value(task: Task, key: object) -> object:
    for entry in (task.get("fixtures") or {}).get("memorySeed") or ():
        if isinstance(entry, dict) and entry.get("key") == key:
            return entry.get("value")
    return None


def _isolation_errors(suite: Suite) -> list[str]:
    count, _, _ = trial_plan(suite)
    errors = [] if count >= MIN_ISOLATION_TRIALS else [f"needs {MIN_ISOLATION_TRIALS} trials"]
    unseeded = 0
    for task in tasks_of(suite):
        task_id = task.get("taskId")
        plan = scripted_plan(task.get("input"), 0)
        key = plan.get("recall")
        written = [e.get("value") for e in plan.get("remember") or () if e.get("key") == key]
        expected = (task.get("expected") or {}).get("match") or {}
        seed = _seed_value(task, key)
        unseeded += seed is None
        if key is None or not written or any(json_equal(v, seed) for v in written):
            errors.append(f"{task_id}: must recall a key, then remember another value under it")
        if expected.get("strategy") != "json-match" or not json_equal(
            recall_expectation(task), seed
        ):
            errors.append(f"{task_id}: must expect json-match {{'recalled': {seed!r}}}")
    if not unseeded:
        errors.append("needs a task without a seed for its key")
    return errors


def _onmiss_live_errors(suite: Suite) -> list[str]:
    tasks = tasks_of(suite)
    misses = {
        str(t.get("taskId")): fixture_misses(t, scripted_calls(t.get("input"), 0)) for t in tasks
    }
    live = [t for t in tasks if (t.get("fixtures") or {}).get("onMiss") == "live"]
    if not any(misses[str(t.get("taskId"))] for t in live) or all(misses.values()):
        return ["needs a task that misses under onMiss 'live' and a fully served task"]
    return []


def _facts(suite: Suite) -> list[list[TrialFacts]]:
    count, _, _ = trial_plan(suite)
    return [[trial_facts(task, index) for index in range(count)] for task in tasks_of(suite)]


def _unmatched_score_errors(suite: Suite) -> list[str]:
    trials = [fact for task in _facts(suite) for fact in task]
    errors = [] if not any(f.failed_closed for f in trials) else ["no trial may fail closed"]
    if any(fixture_misses(t, scripted_calls(t.get("input"), 0)) for t in tasks_of(suite)):
        errors.append("every scripted call must be served")
    kept = {fact.score for fact in trials if fact.unmatched}
    if kept != {Fraction(0), Fraction(1)}:
        errors.append("needs unmatched trials whose output matches and does not match")
    return errors


def _gating_mean_errors(suite: Suite) -> list[str]:
    _, _, rule = trial_plan(suite)
    bar = pass_score_of(suite)
    facts = _facts(suite)
    trials = [fact for task in facts for fact in task]
    if rule != "mean" or bar is None or any(fact.score is None for fact in trials):
        return ["needs passRule 'mean', a passScore and golden tasks the kit can grade"]
    errors: list[str] = []
    if not any(f.unmatched and not f.failed_closed and f.score == 1 for f in trials):
        errors.append("needs an unmatched trial whose output matches")
    if not any(f.failed_closed for f in trials):
        errors.append("needs a trial that fails closed")
    means = [exact_mean([f.score or Fraction(0) for f in task]) for task in facts]
    gates = [exact_mean([Fraction(0) if f.gated else f.score or 0 for f in task]) for task in facts]
    limit = recorded(bar)
    if not any(mean >= limit > gate for mean, gate in zip(means, gates, strict=True)):
        errors.append("needs a task whose mean score meets passScore and gating score does not")
    if not any(gate >= limit for gate in gates):
        errors.append("needs a task whose gating score meets passScore")
    if not exact_mean(means) >= limit > exact_mean(gates):
        errors.append("the mean task score must meet passScore, the gating aggregate must not")
    decided = [*means, *gates, exact_mean(means), exact_mean(gates)]
    if any(abs(value - limit) < Fraction(1, 100) for value in decided):
        errors.append("a decision lies within 0.01 of passScore")
    return errors


DESIGNS = {
    EFFICIENCY_FIXTURE: _efficiency_errors,
    ISOLATION_FIXTURE: _isolation_errors,
    ONMISS_LIVE_FIXTURE: _onmiss_live_errors,
    UNMATCHED_SCORE_FIXTURE: _unmatched_score_errors,
    GATING_MEAN_FIXTURE: _gating_mean_errors,
}


def ext_fixture_errors(fixture: Fixture, suite: Suite) -> list[str]:
    """Every problem with one extension fixture (empty when sound)."""
    errors = check_fixture(fixture, suite)
    if errors:
        return errors
    return [f"design: {message}" for message in DESIGNS[fixture](suite)]


def check_ext_fixtures(suites: dict[Fixture, Suite | str]) -> Checker:
    """The leg over every extension fixture (a string stands for one that could not be read)."""
    return check_fixtures(suites, ext_fixture_errors)
