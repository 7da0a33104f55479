"""Suite rules that are not schema conditionals (RFC 0244 acceptance criteria, RFC 0081 §A).

RFC 0244 keeps its cross-field rules out of the JSON Schema (COMPATIBILITY.md §2.4), so they are
checked here, over a suite that already has the schema's shape:

- §A: ``kind: "trajectory"`` carries no ``match``/``rubric`` and needs a ``trajectory`` (or
  wopeval's ``x-wopeval-finalState``: a task graded on what the agent did to its world);
  ``golden`` needs ``match`` and ``rubric`` needs ``rubric`` (RFC 0081 §A "present when").
- §B: ``1 ≤ k ≤ count`` (``count`` absent ⇒ 1).
- §A/§D: ``argsMatch: exact``/``subset`` compares against ``args``, so ``args`` must be there,
  and a ``subset`` compares key paths, so its ``args`` must be an object.
- RFC 0081 §A: ``modes`` and ``allowedModels`` are sets (``uniqueItems``); ``taskId`` is
  suite-unique;
- each ``x-wopeval-`` extension's own rules (:mod:`wopeval.suite.extensions`).
"""

from __future__ import annotations

from collections.abc import Sequence

from wopeval.suite.errors import FieldError, json_type
from wopeval.suite.extensions import extension_rules
from wopeval.suite.models import (
    AgentEvalSuite,
    ArgsMatch,
    Expected,
    ExpectedCall,
    Task,
    ToolResponse,
    Trials,
)


def check_rules(suite: AgentEvalSuite) -> list[FieldError]:
    """Every rule violation of a schema-valid suite, in document order."""
    errors = _unique("modes", suite.modes)
    errors += _unique("allowedModels", suite.allowedModels or [])
    first_use: dict[str, int] = {}
    for index, task in enumerate(suite.tasks):
        errors += _task_rules(f"tasks[{index}]", index, task, first_use)
    if suite.trials is not None:
        errors += _trials_rules(suite.trials)
    return errors + extension_rules(suite)


def check_raw_rules(data: object) -> list[FieldError]:
    """The whole-document rules that need no valid model (duplicate taskIds, ``k`` > ``count``).

    Run alongside schema errors, so ``validate`` reports them in the same pass; once the schema
    passes, :func:`check_rules` covers them (and everything else).
    """
    if not isinstance(data, dict):
        return []
    errors: list[FieldError] = []
    tasks = data.get("tasks")
    if isinstance(tasks, list):
        first_use: dict[str, int] = {}
        for index, task in enumerate(tasks):
            task_id = task.get("taskId") if isinstance(task, dict) else None
            if not isinstance(task_id, str):
                continue
            if task_id in first_use:
                message = (
                    f"duplicate taskId {task_id!r} (already used by tasks[{first_use[task_id]}])"
                )
                errors.append(FieldError(f"tasks[{index}].taskId", message))
            else:
                first_use[task_id] = index
    trials = data.get("trials")
    if isinstance(trials, dict):
        count, k = trials.get("count", 1), trials.get("k")
        valid = all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in (count, k))
        if valid and k > count:
            errors += _trials_rules(Trials(count=trials.get("count"), k=k))
    return errors


def _unique(name: str, values: Sequence[str]) -> list[FieldError]:
    """RFC 0081 §A ``uniqueItems``: a repeated entry is named with its first position."""
    errors: list[FieldError] = []
    first: dict[str, int] = {}
    for index, value in enumerate(values):
        if value in first:
            message = f"duplicate {value!r} (already at {name}[{first[value]}])"
            errors.append(FieldError(f"{name}[{index}]", message))
        else:
            first[value] = index
    return errors


def _task_rules(path: str, index: int, task: Task, first_use: dict[str, int]) -> list[FieldError]:
    errors: list[FieldError] = []
    if task.taskId in first_use:
        message = (
            f"duplicate taskId {task.taskId!r} (already used by tasks[{first_use[task.taskId]}])"
        )
        errors.append(FieldError(f"{path}.taskId", message))
    else:
        first_use[task.taskId] = index
    errors += _expected_rules(f"{path}.expected", task.expected)
    if task.expected.trajectory is not None:
        for j, call in enumerate(task.expected.trajectory.calls):
            errors += _args_rules(f"{path}.expected.trajectory.calls[{j}]", call)
    if task.fixtures is not None and task.fixtures.toolResponses is not None:
        for j, entry in enumerate(task.fixtures.toolResponses):
            errors += _args_rules(f"{path}.fixtures.toolResponses[{j}]", entry)
    return errors


def _expected_rules(path: str, expected: Expected) -> list[FieldError]:
    """RFC 0244 §A grading rule: which members each ``kind`` carries."""
    errors: list[FieldError] = []
    kind = expected.kind
    if kind == "trajectory":
        why = "not allowed when kind is 'trajectory' (the task is graded on its tool path alone)"
        if expected.match is not None:
            errors.append(FieldError(f"{path}.match", why))
        if expected.rubric is not None:
            errors.append(FieldError(f"{path}.rubric", why))
        if expected.trajectory is None and expected.final_state is None:
            errors.append(FieldError(f"{path}.trajectory", "required when kind is 'trajectory'"))
    elif kind == "golden" and expected.match is None:
        errors.append(FieldError(f"{path}.match", "required when kind is 'golden'"))
    elif kind == "rubric" and expected.rubric is None:
        errors.append(FieldError(f"{path}.rubric", "required when kind is 'rubric'"))
    return errors


def _args_rules(path: str, entry: ExpectedCall | ToolResponse) -> list[FieldError]:
    """RFC 0244 §A/§D: ``exact``/``subset`` compare against ``args``, so it must be present."""
    mode: ArgsMatch = entry.args_match
    if mode == "ignore":
        return []
    if entry.args is None:
        written = "args" in entry.model_fields_set
        message = f"must not be null when argsMatch is {mode!r}" if written else None
        return [FieldError(f"{path}.args", message or f"required when argsMatch is {mode!r}")]
    if mode == "subset" and not isinstance(entry.args, dict):
        got = json_type(entry.args)
        message = f"must be an object when argsMatch is 'subset' (got {got})"
        return [FieldError(f"{path}.args", message)]
    return []


def _trials_rules(trials: Trials) -> list[FieldError]:
    """RFC 0244 §B: ``k`` is an integer with 1 ≤ k ≤ ``count`` (``count`` absent ⇒ 1)."""
    if trials.k is None or trials.k <= trials.effective_count:
        return []
    if trials.count is None:
        message = f"{trials.k} exceeds the trial count 1 (trials.count is absent, so 1)"
    else:
        message = f"{trials.k} exceeds trials.count {trials.count}"
    return [FieldError("trials.k", message)]
