"""Promote one stored trial into a suite task that replays it (pure).

:func:`promote_trial` makes a plain RFC 0244 suite of one task from a stored or OTLP-imported
trial (docs/promote.md):

- ``input``: the run's task's input; ``fixtures``: each answered tool call's result, in call
  order, with its ``args`` (``argsMatch: exact``) under ``onMiss: fail``, as ``wopeval record``
  writes them (a call no tool answered is left out, so the replay misses it too); the task's
  ``memorySeed`` is kept;
- ``expected.trajectory``: the trial's calls in order, ``match: exact`` (the mode only this
  path satisfies), ``includeDelegates`` when a delegate made one; with ``forbid_call`` that
  call's tool is ``forbidden`` instead of expected;
- the output: the observed output (``exact``) with ``expect_output``, else the original task's
  ``match`` when it has one (its rubric is not kept: a rubric needs a live judge);
- with ``as_failure``, the original task's ``expected`` block unchanged: the task fails under
  replay as the trial did, and passes once the agent is fixed.

Every refusal is a :class:`PromoteError` naming what is missing: the task or trial not in the
run, a trial that did not finish (no ``eval.scored``) or never ran, arguments or results the log
does not hold (an imported trace without content, a call with no result), a trace cut short.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from wopeval.errors import UserError
from wopeval.exports.record import FIXTURE_ERROR_KEY, answer_of
from wopeval.grading.trial_calls import TrialCall, TrialCalls, read_trial_calls
from wopeval.wire.events import EvalScored, RunEvent

__all__ = ["PromoteError", "PromoteOptions", "Promoted", "promote_trial"]


class PromoteError(UserError):
    """The trial cannot be promoted as asked; the message names the option or what is missing."""


@dataclass(frozen=True)
class PromoteOptions:
    """What to promote and how (the command line's options)."""

    run_id: str
    task_id: str
    trial_index: int
    target_agent_id: str
    imported: bool = False  # an OTLP-imported run: a missing argument or result is not captured
    forbid_call: int | None = None
    as_failure: bool = False
    expect_output: bool = False
    new_task_id: str | None = None
    suite_id: str | None = None


@dataclass(frozen=True)
class Promoted:
    """The promoted suite document and what it was made of."""

    document: dict[str, Any]
    task_id: str
    passed: bool
    failure_kind: str | None
    calls: int
    fixtures: int
    tool_errors: int
    forbidden: str | None
    options: PromoteOptions

    @property
    def provenance(self) -> tuple[str, ...]:
        """Where the task came from, in lines (the YAML file's opening comment)."""
        options = self.options
        outcome = "passed" if self.passed else f"failed: {self.failure_kind or 'unknown'}"
        lines = [
            f"Promoted by wopeval from run {options.run_id}, task {options.task_id}, "
            f"trial {options.trial_index} ({outcome}).",
            f"Fixtures: {self.fixtures} recorded tool result(s), {self.tool_errors} of them "
            "error(s), onMiss: fail.",
        ]
        if options.as_failure:
            lines.append("Expected: the original task's expectation (--as-failure).")
        else:
            lines.append(
                f"Expected path: the trial's {self.calls} call(s) in order (match: exact)."
            )
        if self.forbidden is not None:
            shown = json.dumps(self.forbidden, ensure_ascii=True)  # a comment line: no controls
            lines.append(f"Forbidden: {shown} (call {options.forbid_call}).")
        return tuple(lines)


def promote_trial(
    document: dict[str, Any], events: Iterable[RunEvent], options: PromoteOptions
) -> Promoted:
    """The suite of one task promoted from the trial ``options`` names, read from ``events``
    (the run's stored suite ``document`` and log). Raises :class:`PromoteError`."""
    original = _task_of(document, options.task_id)
    _check_options(options)
    trial = read_trial_calls(events, options.task_id, options.trial_index)
    scored = _finished(trial, options)
    view = trial.view
    assert view is not None
    _captured(trial, options.imported)
    forbidden = _forbidden(trial.calls, options.forbid_call)
    passed = scored.passed
    kind = view.reason.kind if view.reason is not None else None
    if options.as_failure and passed:
        raise PromoteError(
            f"--as-failure: trial {options.trial_index} of task {options.task_id!r} passed; "
            "there is no failure to keep (promote it without --as-failure)"
        )
    if options.expect_output and not view.has_output:
        raise PromoteError(
            f"--expect-output: trial {options.trial_index} of task {options.task_id!r} "
            "recorded no output"
        )
    answered = [call for call in (_entry(c) for c in trial.calls) if call is not None]
    new_id = options.new_task_id or f"{options.task_id}-trial-{options.trial_index}"
    task: dict[str, Any] = {"taskId": new_id, "input": original.get("input")}
    if options.as_failure:
        task["expected"] = original.get("expected")
    else:
        observed = (view.output,) if options.expect_output else None
        task["expected"] = _expected(
            original, trial.calls, options.target_agent_id, forbidden, observed
        )
    task["fixtures"] = _fixtures(original, answered)
    suite = _suite(document, options, task)
    errors = sum(1 for entry in answered if _is_error(entry))
    return Promoted(
        document=suite,
        task_id=new_id,
        passed=passed,
        failure_kind=kind,
        calls=len(trial.calls),
        fixtures=len(answered),
        tool_errors=errors,
        forbidden=trial.calls[forbidden].tool if forbidden is not None else None,
        options=options,
    )


def _task_of(document: dict[str, Any], task_id: str) -> dict[str, Any]:
    tasks = [task for task in document.get("tasks") or () if isinstance(task, dict)]
    for task in tasks:
        if task.get("taskId") == task_id:
            return task
    known = ", ".join(repr(task.get("taskId")) for task in tasks[:10])
    raise PromoteError(f"--task: the run's suite has no task {task_id!r} (its tasks: {known})")


def _check_options(options: PromoteOptions) -> None:
    if options.as_failure and options.forbid_call is not None:
        raise PromoteError("--as-failure and --forbid-call: give one (both set the expectation)")
    if options.as_failure and options.expect_output:
        raise PromoteError("--as-failure and --expect-output: give one (both set the expectation)")


def _finished(trial: TrialCalls, options: PromoteOptions) -> EvalScored:
    """The trial's ``eval.scored``, refusing a trial that is not in the log, did not finish or
    never ran."""
    where = f"trial {options.trial_index} of task {options.task_id!r}"
    view = trial.view
    if view is None:
        ran = ", ".join(str(i) for i in trial.indexes) or "none"
        raise PromoteError(
            f"--trial: {where} is not in run {options.run_id} (its trials in the log: {ran})"
        )
    if view.scored is None:
        raise PromoteError(
            f"--trial: {where} did not finish: the log has no eval.scored for it "
            "(the run was stopped or is still running)"
        )
    if not view.ran:
        kind = view.reason.kind if view.reason is not None else "not-run"
        raise PromoteError(f"--trial: {where} never ran ({kind}): there is nothing to promote")
    if view.completed_at is None:
        raise PromoteError(
            f"--trial: {where} did not finish: its agent.invocation-completed is missing"
        )
    return view.scored


def _captured(trial: TrialCalls, imported: bool) -> None:
    """Refuse a trial whose log lacks an argument or result the replay needs, or whose trace
    was cut short."""
    if trial.incomplete:
        raise PromoteError(
            f"the trace was cut short: {trial.incomplete} span(s) of this trial name a parent "
            "span the trace does not hold (an unfinished span is never exported)"
        )
    for call in trial.calls:
        name = f"call {call.index} ({json.dumps(call.tool, ensure_ascii=False)})"
        if imported and not isinstance(call.args, dict):
            got = "none" if call.args is None else "a bare value"
            raise PromoteError(
                f"{name}: its arguments were not captured ({got} in the trace; turn content "
                "capture on in the instrumentation)"
            )
        returned = call.returned
        if returned is None and imported:
            raise PromoteError(
                f"{name}: its result was not captured (a model span issued it and no tool "
                "span in the trace answered it)"
            )
        if returned is None:
            raise PromoteError(f"{name}: its result was not recorded (no agent.tool-returned)")
        if imported and returned.status == "ok" and returned.outcome is None:
            raise PromoteError(
                f"{name}: its result was not captured (none in the trace; turn content "
                "capture on in the instrumentation)"
            )


def _forbidden(calls: tuple[TrialCall, ...], index: int | None) -> int | None:
    if index is None:
        return None
    if not 0 <= index < len(calls):
        span = f"0-{len(calls) - 1}" if calls else "none"
        raise PromoteError(
            f"--forbid-call {index}: the trial made {len(calls)} call(s) (indexes: {span})"
        )
    tool = calls[index].tool
    others = [str(c.index) for c in calls if c.tool == tool and c.index != index]
    if others:
        raise PromoteError(
            f"--forbid-call {index}: its tool {json.dumps(tool, ensure_ascii=False)} is also "
            f"called at {', '.join(others)}; forbidding it would forbid those calls too"
        )
    return index


def _entry(call: TrialCall) -> dict[str, Any] | None:
    assert call.returned is not None
    recorded = answer_of(call.called, call.returned)
    return recorded.entry() if recorded is not None else None


def _is_error(entry: dict[str, Any]) -> bool:
    response = entry.get("response")
    return isinstance(response, dict) and FIXTURE_ERROR_KEY in response


def _expected_call(call: TrialCall) -> dict[str, Any]:
    if call.args is None:  # a suite may not compare ``null`` exactly: any args match
        return {"tool": call.tool}
    return {"tool": call.tool, "args": call.args, "argsMatch": "exact"}


def _expected(
    original: dict[str, Any],
    calls: tuple[TrialCall, ...],
    target: str,
    forbidden: int | None,
    observed: tuple[Any] | None,
) -> dict[str, Any]:
    """The trial's path (``exact``), with the observed output (``observed``, when asked for) or
    else the original task's ``match``, when it has one."""
    kept = [c for c in calls if c.index != forbidden]
    trajectory: dict[str, Any] = {"match": "exact", "calls": [_expected_call(c) for c in kept]}
    if forbidden is not None:
        trajectory["forbidden"] = [calls[forbidden].tool]
    if any(c.called.agentId != target for c in calls):
        trajectory["includeDelegates"] = True
    match = (original.get("expected") or {}).get("match")
    if observed is not None:
        match = {"strategy": "exact", "value": observed[0]}
    if match is None:
        return {"kind": "trajectory", "trajectory": trajectory}
    return {"kind": "golden", "match": match, "trajectory": trajectory}


def _fixtures(original: dict[str, Any], answered: list[dict[str, Any]]) -> dict[str, Any]:
    previous = original.get("fixtures") or {}
    kept = {k: v for k, v in previous.items() if k == "memorySeed"}
    return {**kept, "onMiss": "fail", "toolResponses": answered}


def _suite(
    document: dict[str, Any], options: PromoteOptions, task: dict[str, Any]
) -> dict[str, Any]:
    suite_id = options.suite_id or f"{document.get('suiteId')}-promoted"
    suite: dict[str, Any] = {
        "suiteId": suite_id,
        "version": document.get("version"),
        "targetAgentId": options.target_agent_id,
        "modes": document.get("modes"),
    }
    if "allowedModels" in document:
        suite["allowedModels"] = document["allowedModels"]
    thresholds = document.get("thresholds") or {}
    if "passScore" in thresholds:
        suite["thresholds"] = {"passScore": thresholds["passScore"]}
    suite["tasks"] = [task]
    return suite
