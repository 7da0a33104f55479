"""The gate: one pure decision of whether a run passed, which every output reads.

``wopeval run``'s exit code and verdict line, ``show``, ``grade``, the JUnit export's suite case,
the Markdown summary and the pytest plugin all call :func:`decide` on the run's content-free
summary, so one run never reads as passed in one output and failed in another.

* ``suite`` (the default): RFC 0244's suite gate, the summary's ``passed``: the gating aggregate
  against ``passScore``, the cost and latency ceilings, no skipped trial. Tasks may fail while
  the suite passes.
* ``every-task``: the suite gate, and every task passed by its ``passRule`` (RFC 0244 §B).

A new gate (a confidence bound on the pass rate, say) is one more :class:`Gate` in ``GATES``:
a rule from the summary to the reasons it fails, none when it passes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from wopeval.errors import UserError
from wopeval.wire.request import DEFAULT_GATE
from wopeval.wire.summary import EvalSummary, TaskSummary

__all__ = [
    "DEFAULT_GATE",
    "GATES",
    "Gate",
    "GateFailure",
    "GateVerdict",
    "UnknownGate",
    "check_gate",
    "decide",
    "stored_verdict",
]


class UnknownGate(UserError):
    """A gate name no registered gate has."""


@dataclass(frozen=True)
class GateFailure:
    """One reason a gate failed: a task (``task_id``) or the suite as a whole (``None``).
    ``why`` is made of the summary's ids and numbers only."""

    task_id: str | None
    why: str


@dataclass(frozen=True)
class GateVerdict:
    """What :func:`decide` says of a run: its gate, whether it passed, and why not."""

    gate: str
    passed: bool
    failures: tuple[GateFailure, ...] = ()

    @property
    def failing_task_ids(self) -> tuple[str, ...]:
        return tuple(f.task_id for f in self.failures if f.task_id is not None)

    def to_json(self) -> dict[str, object]:
        """The verdict for ``--json`` outputs: ids, names and numbers only."""
        return {
            "name": self.gate,
            "passed": self.passed,
            "failingTaskIds": list(self.failing_task_ids),
            "reasons": [
                {"why": f.why} if f.task_id is None else {"taskId": f.task_id, "why": f.why}
                for f in self.failures
            ],
        }

    def headline(self) -> str:
        """The verdict in one line, e.g. ``gate every-task failed: 2 task(s) did not pass: a, b``
        (the first five task ids, then how many more)."""
        if self.passed:
            return f"gate {self.gate} passed"
        parts = [f.why for f in self.failures if f.task_id is None]
        if self.failing_task_ids:
            ids = self.failing_task_ids
            shown = ", ".join(ids[:5]) + (f" and {len(ids) - 5} more" if len(ids) > 5 else "")
            parts.append(f"{len(ids)} task(s) did not pass: {shown}")
        return f"gate {self.gate} failed: " + "; ".join(parts)


GateRule = Callable[[EvalSummary], tuple[GateFailure, ...]]


@dataclass(frozen=True)
class Gate:
    """A named rule: the summary's reasons to fail, none when it passes."""

    name: str
    description: str
    rule: GateRule


def _task_failure(task: TaskSummary) -> GateFailure:
    why = f"score {task.score:.3f}"
    if task.trials is not None:
        why += f", {task.trials.passedCount}/{task.trials.n} trials passed"
    return GateFailure(task.taskId, f"did not pass ({why})")


def _failing_tasks(summary: EvalSummary) -> tuple[GateFailure, ...]:
    return tuple(_task_failure(t) for t in summary.tasks if not t.passed)


def _suite_failure(summary: EvalSummary) -> GateFailure:
    return GateFailure(
        None,
        f"the suite did not pass (aggregate {summary.aggregateScore:.3f}, "
        f"{summary.passedCount}/{summary.taskCount} tasks passed)",
    )


def _suite_gate(summary: EvalSummary) -> tuple[GateFailure, ...]:
    if summary.passed:
        return ()
    return (_suite_failure(summary), *_failing_tasks(summary))


def _every_task_gate(summary: EvalSummary) -> tuple[GateFailure, ...]:
    failing = _failing_tasks(summary)
    if summary.passed and not failing:
        return ()
    return (*(() if summary.passed else (_suite_failure(summary),)), *failing)


GATES: Mapping[str, Gate] = {
    gate.name: gate
    for gate in (
        Gate(
            "suite",
            "the default: RFC 0244's suite gate (the summary's passed: the gating aggregate "
            "meets passScore within the cost and latency ceilings); tasks may fail",
            _suite_gate,
        ),
        Gate("every-task", "the suite gate, and every task passed", _every_task_gate),
    )
}


def check_gate(name: str, *, field: str = "gate") -> Gate:
    """The gate called ``name``; an :class:`UnknownGate` naming ``field`` if there is none."""
    gate = GATES.get(name)
    if gate is None:
        raise UnknownGate(f"{field}: {name!r} is not one of {', '.join(GATES)}")
    return gate


def stored_verdict(summary: Mapping[str, Any] | None, request: Any) -> GateVerdict | None:
    """The verdict of a stored run from its stored summary and request (its ``gate``) as JSON,
    for lists of runs: None when it has no summary or a gate this version does not know."""
    gate = request.get("gate", DEFAULT_GATE) if isinstance(request, dict) else DEFAULT_GATE
    if summary is None or not isinstance(gate, str) or gate not in GATES:
        return None
    return decide(EvalSummary.model_validate(summary), gate)


def decide(summary: EvalSummary, gate: str = DEFAULT_GATE) -> GateVerdict:
    """Whether the run ``summary`` reports passes ``gate`` (pure: the summary alone decides)."""
    failures = check_gate(gate).rule(summary)
    return GateVerdict(gate=gate, passed=not failures, failures=failures)
