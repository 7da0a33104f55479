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
  served task.
"""

from __future__ import annotations

from wopeval.conformance.catalog import EFFICIENCY_FIXTURE, ISOLATION_FIXTURE, Fixture
from wopeval.conformance.legs.common import Checker
from wopeval.conformance.legs.efficiency import HIGH_CALL_COUNT, scripted_counts
from wopeval.conformance.legs.fixtures_valid import check_fixture, check_fixtures
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


def ext_fixture_errors(fixture: Fixture, suite: Suite) -> list[str]:
    """Every problem with one extension fixture (empty when sound)."""
    errors = check_fixture(fixture, suite)
    if errors:
        return errors
    if fixture == EFFICIENCY_FIXTURE:
        design = _efficiency_errors(suite)
    elif fixture == ISOLATION_FIXTURE:
        design = _isolation_errors(suite)
    else:
        design = _onmiss_live_errors(suite)
    return [f"design: {message}" for message in design]


def check_ext_fixtures(suites: dict[Fixture, Suite | str]) -> Checker:
    """The leg over every extension fixture (a string stands for one that could not be read)."""
    return check_fixtures(suites, ext_fixture_errors)
