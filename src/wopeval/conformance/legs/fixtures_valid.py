"""Leg ``0244.fixtures-valid`` (server-free): the three eval-suite fixtures are well formed.

Each fixture must:

* validate against the shipped ``agent-eval-suite`` schema (upstream + RFC 0244 fields);
* obey the suite rules that are not schema conditionals (RFC 0244 acceptance criteria):
  ``kind: "trajectory"`` carries no ``match``/``rubric`` and has a ``trajectory``; ``golden``
  has a ``match``, ``rubric`` a ``rubric``; ``1 ≤ k ≤ count``; ``argsMatch: exact``/``subset``
  has ``args`` (an object for ``subset``); task ids are unique;
* keep the kit's fixture contract: its suite id and version ``1.0.0``, target the scripted
  agent, give every task a scripted-agent input, and be designed so that each leg is decisive
  (every trajectory call is served; a missed task's output would otherwise match; the trial
  pattern is mixed).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from wopeval.conformance.catalog import (
    FIXTURE_MISS_FIXTURE,
    SCRIPTED_AGENT_ID,
    TRAJECTORY_FIXTURE,
    TRIALS_FIXTURE,
    Fixture,
)
from wopeval.conformance.legs.common import Checker
from wopeval.conformance.shapes import suite_errors
from wopeval.conformance.suites import (
    Suite,
    Task,
    expected_pass,
    fixture_misses,
    output_matches,
    scripted_calls,
    scripted_plan,
    tasks_of,
    trial_plan,
)


def _args_rules(path: str, entry: dict[str, Any]) -> list[str]:
    mode = entry.get("argsMatch") or "ignore"
    if mode == "ignore":
        return []
    if "args" not in entry or entry["args"] is None:
        return [f"{path}.args: required when argsMatch is {mode!r}"]
    if mode == "subset" and not isinstance(entry["args"], dict):
        return [f"{path}.args: must be an object when argsMatch is 'subset'"]
    return []


def _task_rules(path: str, task: Task) -> list[str]:
    errors: list[str] = []
    expected = task.get("expected") or {}
    kind = expected.get("kind")
    if kind == "trajectory":
        errors += [
            f"{path}.expected.{m}: not allowed when kind is 'trajectory'"
            for m in ("match", "rubric")
            if m in expected
        ]
        if "trajectory" not in expected:
            errors.append(f"{path}.expected.trajectory: required when kind is 'trajectory'")
    elif kind in ("golden", "rubric"):
        member = "match" if kind == "golden" else "rubric"
        if member not in expected:
            errors.append(f"{path}.expected.{member}: required when kind is {kind!r}")
    for j, call in enumerate((expected.get("trajectory") or {}).get("calls") or []):
        errors += _args_rules(f"{path}.expected.trajectory.calls[{j}]", call)
    for j, entry in enumerate((task.get("fixtures") or {}).get("toolResponses") or []):
        errors += _args_rules(f"{path}.fixtures.toolResponses[{j}]", entry)
    return errors


def rule_errors(suite: Suite) -> list[str]:
    """The suite rules RFC 0244 keeps out of the schema; run on a schema-valid suite."""
    errors: list[str] = []
    seen: set[str] = set()
    for index, task in enumerate(tasks_of(suite)):
        if task.get("taskId") in seen:
            errors.append(f"tasks[{index}].taskId: duplicate {task.get('taskId')!r}")
        seen.add(str(task.get("taskId")))
        errors += _task_rules(f"tasks[{index}]", task)
    trials = suite.get("trials") or {}
    count, k = trials.get("count", 1), trials.get("k")
    if k is not None and k > count:
        errors.append(f"trials.k: {k} exceeds trials.count {count}")
    return errors


def _scripted_input_errors(path: str, task_input: Any) -> list[str]:
    if not isinstance(task_input, dict):
        return [f"{path}.input: a scripted-agent input must be an object"]
    errors: list[str] = []
    for j, call in enumerate(task_input.get("calls") or []):
        ok = isinstance(call, dict) and (
            isinstance(call.get("tool"), str) or isinstance(call.get("delegate"), dict)
        )
        if not ok:
            errors.append(f"{path}.input.calls[{j}]: neither a tool call nor a delegation")
    for key in task_input.get("trials") or {}:
        if not str(key).isdigit():
            errors.append(f"{path}.input.trials.{key}: not a trial index")
    return errors


def _design_errors(fixture: Fixture, suite: Suite) -> list[str]:
    """Each fixture is built so that its leg is decisive."""
    count, _, _ = trial_plan(suite)
    tasks = tasks_of(suite)
    errors: list[str] = []
    if fixture == TRAJECTORY_FIXTURE:
        for task in tasks:
            if fixture_misses(task, scripted_calls(task.get("input"), 0)):
                errors.append(f"{task.get('taskId')}: a scripted call is not served by a fixture")
    elif fixture == TRIALS_FIXTURE:
        pattern = {expected_pass(t, i) for t in tasks for i in range(count)}
        if count < 2 or pattern != {True, False}:
            errors.append("the trials fixture needs count ≥ 2 and a mixed, known pass pattern")
    elif fixture == FIXTURE_MISS_FIXTURE:
        missed = [t for t in tasks if fixture_misses(t, scripted_calls(t.get("input"), 0))]
        decoy = [
            t
            for t in missed
            if output_matches(
                (t.get("expected") or {}).get("match") or {},
                scripted_plan(t.get("input"), 0).get("output"),
            )
        ]
        if not decoy or len(missed) == len(tasks):
            errors.append("needs a missed task whose output matches and a served task")
    return errors


def check_fixture(fixture: Fixture, suite: Suite) -> list[str]:
    """Every problem with one fixture suite document (empty when valid)."""
    errors = [f"schema: {message}" for message in suite_errors(suite)]
    if errors:
        return errors
    errors += [f"rule: {message}" for message in rule_errors(suite)]
    if suite.get("suiteId") != fixture.suite_id or suite.get("version") != fixture.version:
        errors.append(
            f"contract: suite is {suite.get('suiteId')}@{suite.get('version')}, "
            f"want {fixture.suite_id}@{fixture.version}"
        )
    if suite.get("targetAgentId") != SCRIPTED_AGENT_ID:
        errors.append(f"contract: targetAgentId {suite.get('targetAgentId')!r}")
    for index, task in enumerate(tasks_of(suite)):
        errors += [
            f"contract: {e}" for e in _scripted_input_errors(f"tasks[{index}]", task.get("input"))
        ]
    return errors + [f"design: {message}" for message in _design_errors(fixture, suite)]


def check_fixtures(
    suites: dict[Fixture, Suite | str],
    errors_of: Callable[[Fixture, Suite], list[str]] = check_fixture,
) -> Checker:
    """The leg over every fixture (a string stands for a fixture that could not be read)."""
    ck = Checker()
    for fixture, suite in suites.items():
        if isinstance(suite, str):
            ck.fail(f"{fixture.fixture_id}: {suite}")
            continue
        errors = errors_of(fixture, suite)
        ck.check(not errors, f"{fixture.fixture_id}: {errors[0] if errors else ''}")
        for message in errors[1:]:
            ck.fail(f"{fixture.fixture_id}: {message}")
    return ck
