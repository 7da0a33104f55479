"""Which task and trial each planned OTLP trial is (pure): its attributes, else the
``--map``; traces that claim one trial, and more traces than trials, are decided here."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

from wopeval.service.otlp_plan import TRIAL_ATTR, TrialPlan
from wopeval.service.otlp_read import OtlpError

__all__ = ["UnusableTraces", "assign", "check_count"]


def assign(
    trials: list[TrialPlan], mapping: Mapping[str, str]
) -> list[tuple[TrialPlan, TrialPlan]]:
    """Task id and trial index of each trial. Traces with no agent span that claim one trial
    are that trial's parts (a loop with no span around its episode puts each model call in its
    own trace): the pairs (trial, part) to merge come back. Two agent spans claiming one
    trial are refused.

    Explicit indices are taken first, so a trial without one is numbered after every index
    the task's other traces name, never onto one of them.
    """
    explicit: dict[str, int] = defaultdict(int)
    pending: list[TrialPlan] = []
    seen: dict[tuple[str, int], TrialPlan] = {}
    parts: list[tuple[TrialPlan, TrialPlan]] = []
    for trial in trials:
        task, trace = trial.task_attr, trial.trace_id
        trial.task_id = str(task) if task else mapping.get(trace) or mapping.get("*")
        index = trial.index_attr
        if trial.task_id is None:
            continue
        if index is None:
            pending.append(trial)
            continue
        trial.trial_index = _index(index, trace)
        key = (trial.task_id, trial.trial_index)
        first = seen.get(key)
        if first is not None and first.root < 0 and trial.root < 0:
            parts.append((first, trial))
            continue
        if first is not None:
            raise UnusableTraces(
                f"traces {first.trace_id} and {trace} both claim trial {key[1]} of task "
                f"{key[0]!r} ({TRIAL_ATTR}); an agent span's trial must come from one trace"
            )
        seen[key] = trial
        explicit[trial.task_id] = max(explicit[trial.task_id], trial.trial_index + 1)
    for trial in pending:
        assert trial.task_id is not None
        trial.trial_index = explicit[trial.task_id]
        explicit[trial.task_id] += 1
    return parts


def _index(value: Any, trace: str) -> int:
    try:
        index = int(value)
    except (TypeError, ValueError):
        index = -1
    fractional = isinstance(value, float) and not value.is_integer()
    if index < 0 or isinstance(value, bool) or fractional:
        raise UnusableTraces(
            f"trace {trace}: {TRIAL_ATTR} must be a non-negative integer, got {value!r}"
        )
    return index


def check_count(trials: Sequence[TrialPlan], count: int) -> None:
    """Refuse more trials of a task than the suite runs when they were numbered by trace (no
    trial index attribute): a loop with no span around an episode puts each model call in its
    own trace, and grading each trace as a trial would grade parts of episodes."""
    numbered: dict[str, int] = defaultdict(int)
    for trial in trials:
        if trial.index_attr is None:
            numbered[str(trial.task_id)] += 1
    beyond = {task: n for task, n in numbered.items() if n > count}
    if beyond:
        said = ", ".join(f"{n} for {task!r}" for task, n in sorted(beyond.items()))
        raise UnusableTraces(
            f"more traces than trials ({said}; the suite runs {count} trial(s) a task): each "
            f"trace without {TRIAL_ATTR} was taken as one trial (one root agent span, or a "
            "whole trace). A loop with no span around each episode puts every model call in "
            f"its own trace: wrap an episode in one span, or set {TRIAL_ATTR}"
        )


class UnusableTraces(OtlpError):
    """Traces that read well but cannot be trials: two claim one trial, or a bad index."""
