"""The fixture suites as plain JSON, and what the kit knows about them in advance.

Every fixture task runs the scripted agent (docs/agents.md): it performs exactly the calls of its
input, in order, and returns the input's ``output``, with ``trials["<i>"]`` overriding members for
trial ``i``. So the kit can say, before any host runs anything, which calls each trial makes,
which of them miss their fixtures (RFC 0244 §D selection), and whether each trial should pass.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from importlib import resources
from typing import Any

from wopeval.conformance.catalog import SCRIPTED_AGENT_ID, Fixture
from wopeval.conformance.reference import (
    ARGS_MATCHES,
    MODES,
    ArgsMatch,
    Expectation,
    ObservedCall,
    args_match,
    grade,
    json_equal,
)

Suite = dict[str, Any]
Task = dict[str, Any]
MIN_CONTENT_LENGTH = 4


def load_fixture(fixture: Fixture) -> Suite:
    """Read a fixture suite shipped in ``wopeval/data/suites/``."""
    path = resources.files("wopeval").joinpath("data", "suites", fixture.file_name)
    doc = json.loads(path.read_text("utf-8"))
    if not isinstance(doc, dict):
        raise ValueError(f"{fixture.file_name}: a suite must be a JSON object")
    return doc


def tasks_of(suite: Suite) -> list[Task]:
    return [task for task in suite.get("tasks") or [] if isinstance(task, dict)]


def trial_plan(suite: Suite) -> tuple[int, int, str]:
    """``(count, k, passRule)`` with the §B defaults (count 1, k = count, rule ``all``)."""
    trials = suite.get("trials") or {}
    count = int(trials.get("count", 1))
    return count, int(trials.get("k", count)), str(trials.get("passRule", "all"))


def scripted_plan(task_input: Any, trial_index: int) -> dict[str, Any]:
    """The scripted agent's plan for one trial: the input with ``trials[str(i)]`` applied."""
    if not isinstance(task_input, dict):
        return {}
    plan = {key: value for key, value in task_input.items() if key != "trials"}
    override = (task_input.get("trials") or {}).get(str(trial_index))
    if isinstance(override, dict):
        plan.update(override)
    return plan


def scripted_calls(
    task_input: Any, trial_index: int, agent_id: str = SCRIPTED_AGENT_ID
) -> list[ObservedCall]:
    """Every tool call the scripted agent makes in a trial, delegates flattened, in order."""
    calls: list[ObservedCall] = []
    for entry in scripted_plan(task_input, trial_index).get("calls") or ():
        if not isinstance(entry, dict):
            continue
        if isinstance(entry.get("delegate"), dict):
            delegate = entry["delegate"]
            calls += scripted_calls(delegate.get("input", {}), 0, str(delegate.get("agentId")))
        else:
            calls.append(ObservedCall(str(entry.get("tool")), entry.get("args"), agent_id))
    return calls


def _args_mode(entry: Mapping[str, Any]) -> ArgsMatch:
    mode = entry.get("argsMatch")
    return mode if mode in ("exact", "subset") else "ignore"


def fixture_misses(task: Task, calls: list[ObservedCall]) -> int:
    """How many calls match no unconsumed ``toolResponses`` entry (RFC 0244 §D selection)."""
    fixtures = task.get("fixtures") or {}
    entries = [entry for entry in fixtures.get("toolResponses") or [] if isinstance(entry, dict)]
    consumed = [False] * len(entries)
    misses = 0
    for call in calls:
        for index, entry in enumerate(entries):
            if consumed[index] or entry.get("tool") != call.tool:
                continue
            if args_match(_args_mode(entry), entry.get("args"), call.inputs):
                consumed[index] = True
                break
        else:
            misses += 1
    return misses


def output_matches(match: Mapping[str, Any], output: Any) -> bool | None:
    """RFC 0081 ``golden`` on a string output; None when the kit cannot decide it unaided."""
    strategy, value = match.get("strategy"), match.get("value")
    if strategy == "json-match":
        return json_equal(output, value)
    if not isinstance(output, str) or not isinstance(value, str):
        return None
    if strategy == "exact":
        return output == value
    if strategy == "contains":
        return value in output
    return None


def expectation_of(task: Task) -> Expectation | None:
    trajectory = (task.get("expected") or {}).get("trajectory")
    return Expectation.from_json(trajectory) if isinstance(trajectory, dict) else None


def expected_pass(task: Task, trial_index: int, target: str = SCRIPTED_AGENT_ID) -> bool | None:
    """Whether a trial of a fixture task must pass; None when the kit cannot know unaided."""
    plan = scripted_plan(task.get("input"), trial_index)
    if "recall" in plan:
        return None
    calls = scripted_calls(task.get("input"), trial_index, target)
    fixtures = task.get("fixtures") or {}
    if fixtures.get("onMiss") == "fail" and fixture_misses(task, calls) > 0:
        return False
    expectation = expectation_of(task)
    matched = expectation is None or grade(expectation, calls, target).matched
    expected = task.get("expected") or {}
    if expected.get("kind") == "trajectory":
        return matched
    if not matched:
        return False
    if expected.get("kind") == "golden":
        return output_matches(expected.get("match") or {}, plan.get("output"))
    return None


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def content_strings(suite: Suite) -> set[str]:
    """Suite content that must never reach an ``eval.*`` payload or the summary (§H).

    Tool names, arguments, scripted outputs, fixture responses, expected values and rubric
    prose; strings shorter than four characters and the suite's own ids are left out, so an id
    on the wire is never mistaken for a leak.
    """
    found: set[str] = set()
    for task in tasks_of(suite):
        expected = task.get("expected") or {}
        found.update(_strings(task.get("input")))
        found.update(_strings((expected.get("match") or {}).get("value")))
        found.update(_strings([r.get("criterion") for r in expected.get("rubric") or []]))
        found.update(_strings(expected.get("trajectory")))
        fixtures = task.get("fixtures") or {}
        found.update(_strings(fixtures.get("toolResponses")))
        found.update(_strings(fixtures.get("memorySeed")))
    ids = {suite.get("suiteId"), suite.get("version"), suite.get("targetAgentId")}
    ids |= {task.get("taskId") for task in tasks_of(suite)}
    ids |= set(MODES) | set(ARGS_MATCHES)
    return {s for s in found if len(s) >= MIN_CONTENT_LENGTH and s not in ids}
