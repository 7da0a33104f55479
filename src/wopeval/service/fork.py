"""Fork a stored trial at a call: re-run it with its first N tool calls served from the log.

``plan_fork(service, run_id, task_id, trial_index, at)`` checks everything before anything is
recorded and returns a :class:`~wopeval.service.runs.RunPlan` for a new run linked to the
original (``x-wopeval-forkedFrom`` in its stored request). :meth:`RunService.create` and
:meth:`RunService.execute` then run it like any run: one path.

The new run is the original's own: its stored suite narrowed to the task (one trial: ``trials``
keeps its rule with ``count`` and ``k`` 1), its agent and its settings, less what cannot apply to
one forked trial (the baseline and its ``regression`` mode, the shard; trials run in this
process). Its one trial is trial 0 of the new run's log, and its agent sees the original's trial
index (:class:`~wopeval.engine.fork_prefix.ForkPrefix`). The calls after the prefix reach the
suite's fixtures and the live tools the caller registered, as in any run; model turns are live.

Refused (:class:`ForkRefused`, naming the option and value): the run is not in the store, not
finished, or has no such task or trial (:func:`~wopeval.service.trial_record.read_trial`); the
trial was never scored; ``--at`` negative or past the calls that reached the trial's tool gateway
(the count is said); a call of the prefix with no recorded result.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from wopeval.engine.fork_prefix import ForkPrefix, PrefixCall
from wopeval.errors import UserError
from wopeval.grading.trial_calls import TrialCall
from wopeval.service.runs import RunPlan, RunService, settings_of
from wopeval.service.trial_record import TrialRecord, read_trial
from wopeval.suite import parse_suite
from wopeval.suite.adaptive import ADAPTIVE_KEY
from wopeval.wire.request import ForkLink

__all__ = ["ForkRefused", "forked_document", "plan_fork", "prefix_of"]


class ForkRefused(UserError):
    """The trial cannot be forked as asked; the message names the option and the value."""


def forked_document(document: dict[str, Any], task_id: str) -> dict[str, Any]:
    """The original's suite document with only ``task_id``, run once (so with no adaptive
    trials, which one trial cannot have)."""
    tasks = [_one_trial(t) for t in document.get("tasks") or () if t.get("taskId") == task_id]
    forked = _one_trial({**document, "tasks": tasks})
    trials = document.get("trials")
    if isinstance(trials, dict):
        forked["trials"] = {**trials, "count": 1, "k": 1}
    return forked


def _one_trial(member: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in member.items() if key != ADAPTIVE_KEY}


def prefix_of(trial: TrialRecord, at: int) -> ForkPrefix:
    """The first ``at`` calls of the trial that reached its gateway, as the prefix; refused
    when ``at`` is out of range or a prefix call has no recorded result. The agent is told the
    trial's index, or, when the trial is a fork's, the index that fork's agent was told."""
    calls = trial.gateway_calls
    where = f"trial {trial.trial_index} of task {trial.task_id!r}"
    if at < 0 or at > len(calls):
        raise ForkRefused(
            f"--at: {at} is not a call of {where}, which recorded {len(calls)} tool "
            f"call(s) through its gateway (0 <= --at <= {len(calls)})"
        )
    for position, call in enumerate(calls[:at]):
        if not call.result_captured:
            raise ForkRefused(
                f"--at: call {position} ({call.tool}) of {where} has no recorded result "
                f"(it was not captured), so it cannot be served from the log: fork at "
                f"{position} or before"
            )
    source = trial.run.run_request.forked_from
    seen = trial.trial_index if source is None else source.agent_trial_index
    return ForkPrefix(tuple(_prefix_call(call) for call in calls[:at]), seen)


def _prefix_call(call: TrialCall) -> PrefixCall:
    return PrefixCall(
        tool=call.tool,
        args=call.args,
        ok=call.ok,
        outcome=call.outcome,
        error_code=call.error_code,
        error_message=call.error_message,
        missed=call.fixture == "miss-failed",
        fixture_index=call.fixture_index if call.fixture == "served" else None,
    )


async def plan_fork(
    service: RunService, run_id: str, task_id: str, trial_index: int, at: int
) -> RunPlan:
    """The checked plan of the forked run (nothing recorded yet)."""
    if trial_index < 0:
        raise ForkRefused(f"--trial: {trial_index} is not a trial index (0 or more)")
    trial = await read_trial(service.store, run_id, task_id, trial_index)
    if trial.view.scored is None:
        raise ForkRefused(
            f"--trial: trial {trial_index} of task {task_id!r} in run {run_id} was never "
            "scored (the run ended while it ran), so what it did is not known to the end"
        )
    prefix = prefix_of(trial, at)
    record = trial.run
    suite = parse_suite(forked_document(record.suite_document, task_id), source=f"run {run_id}")
    request = record.run_request
    settings = settings_of(request)
    modes = settings.modes
    if request.baseline_run_id is not None and modes is not None:
        modes = [mode for mode in modes if mode != "regression"] or None
    settings = settings.model_copy(
        update={
            "baseline_run_id": None,
            "modes": modes,
            "executor": "local",
            "fixture_runs": {k: v for k, v in (settings.fixture_runs or {}).items() if k == task_id}
            or None,
        }
    )
    agent_id = request.agentId or ""
    plan = await service.plan(suite, agent_id, settings, tenant=record.tenant)
    seen = prefix.trial_index if prefix.trial_index != trial_index else None
    link = ForkLink(
        runId=run_id, taskId=task_id, trialIndex=trial_index, at=at, agentTrialIndex=seen
    )
    return dataclasses.replace(plan, fork=prefix, forked_from=link)
