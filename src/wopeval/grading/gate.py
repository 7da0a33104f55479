"""The gate: one pure decision of whether a run passed, which every output reads.

``wopeval run``'s exit code and verdict line, ``show``, ``grade``, the JUnit export's suite case,
the Markdown summary and the pytest plugin all call :func:`decide` on the run's content-free
summary, so one run never reads as passed in one output and failed in another.

* ``suite`` (the default): RFC 0244's suite gate, the summary's ``passed``: the gating aggregate
  against ``passScore``, the cost and latency ceilings, no skipped trial. Tasks may fail while
  the suite passes.
* ``every-task``: the suite gate, and every task passed by its ``passRule`` (RFC 0244 §B).
* ``lower-bound``: the suite gate, and the lower bound of the aggregate score's interval, the
  task as the unit (:mod:`wopeval.grading.summary_intervals`), meets ``passScore``.
* ``every-task-lower-bound``: ``lower-bound``, every task passed, and the lower bound of each
  task's pass rate (Clopper–Pearson) meets ``passScore``.

The bound gates are the point gates and more: they never pass a run its point gate fails, and
the wire's ``passed`` stays the point gate's. They read the suite's ``passScore`` and the
confidence level from a :class:`Bounds` (no bounds: they fail, naming what is missing), and
compare the outward-rounded lower bound with ``passScore`` exactly: an exact tie (a bound of 0
at 0 successes) passes, and a computed bound that equals ``passScore`` only as a float does not,
whatever the rounding. The aggregate's interval is over the task scores as reported; the
suite gate, which reads the RFC 0246 gating aggregate, must pass as well.

A new gate is one more :class:`Gate` in ``GATES``: a rule from the summary to the reasons it
fails, none when it passes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from wopeval.errors import UserError
from wopeval.grading.exact import recorded
from wopeval.grading.intervals import DEFAULT_LEVEL, check_level
from wopeval.grading.summary import DEFAULT_PASS_SCORE
from wopeval.grading.summary_intervals import summary_intervals, task_intervals
from wopeval.suite.models import AgentEvalSuite
from wopeval.wire.request import DEFAULT_GATE
from wopeval.wire.summary import EvalSummary, TaskSummary

__all__ = [
    "DEFAULT_GATE",
    "GATES",
    "Bounds",
    "Gate",
    "GateFailure",
    "GateVerdict",
    "UnknownGate",
    "check_gate",
    "decide",
    "stored_verdict",
    "suite_bounds",
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
class Bounds:
    """What a bound gate compares: the suite's ``passScore`` and the interval's ``level``."""

    pass_score: float
    level: float = DEFAULT_LEVEL


def suite_bounds(suite: AgentEvalSuite | Mapping[str, Any], level: float = DEFAULT_LEVEL) -> Bounds:
    """The :class:`Bounds` of a suite (parsed, or its stored JSON): its ``passScore`` (1 when it
    sets none, as grading reads it) at ``level``."""
    if isinstance(suite, AgentEvalSuite):
        given = suite.thresholds.passScore if suite.thresholds is not None else None
    else:
        thresholds = suite.get("thresholds")
        given = thresholds.get("passScore") if isinstance(thresholds, dict) else None
    pass_score = DEFAULT_PASS_SCORE if given is None else float(given)
    return Bounds(pass_score, check_level(level))


BoundRule = Callable[[EvalSummary, Bounds], tuple[GateFailure, ...]]


@dataclass(frozen=True)
class Gate:
    """A named rule: the summary's reasons to fail, none when it passes. A bound gate's
    ``bound`` adds the reasons its lower bounds give (read with :class:`Bounds`)."""

    name: str
    description: str
    rule: GateRule
    bound: BoundRule | None = None


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


def _percent(level: float) -> str:
    return f"{level * 100:g}%"


def _suite_bound(summary: EvalSummary, bounds: Bounds) -> tuple[GateFailure, ...]:
    aggregate = summary_intervals(summary, bounds.level).aggregate
    if aggregate is None:
        why = "the aggregate has no interval without a task"
    elif aggregate.low_exact >= recorded(bounds.pass_score):
        return ()
    else:
        why = (
            f"the aggregate's {_percent(bounds.level)} lower bound {aggregate.low:.3f} "
            f"({aggregate.method}) is below passScore {bounds.pass_score:g}"
        )
    return (GateFailure(None, why), *_failing_tasks(summary))  # as a failing suite gate names


def _every_task_bound(summary: EvalSummary, bounds: Bounds) -> tuple[GateFailure, ...]:
    failures = list(_suite_bound(summary, bounds))
    threshold = recorded(bounds.pass_score)
    for task in summary.tasks:
        rate = task_intervals(task, None, bounds.level).pass_rate
        if task.passed and rate.low_exact < threshold:
            trials = task.trials
            c, n = (trials.passedCount, trials.n) if trials is not None else (1, 1)
            why = (
                f"pass rate {c}/{n}: its {_percent(bounds.level)} lower bound {rate.low:.3f} "
                f"({rate.method}) is below passScore {bounds.pass_score:g}"
            )
            failures.append(GateFailure(task.taskId, why))
    return tuple(failures)


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
        Gate(
            "lower-bound",
            "the suite gate, and the lower bound of the aggregate's interval over tasks "
            "(--ci-level) meets passScore",
            _suite_gate,
            _suite_bound,
        ),
        Gate(
            "every-task-lower-bound",
            "lower-bound, and every task passed with its pass rate's lower bound (Clopper-"
            "Pearson) at passScore or above",
            _every_task_gate,
            _every_task_bound,
        ),
    )
}


def check_gate(name: str, *, field: str = "gate") -> Gate:
    """The gate called ``name``; an :class:`UnknownGate` naming ``field`` if there is none."""
    gate = GATES.get(name)
    if gate is None:
        raise UnknownGate(f"{field}: {name!r} is not one of {', '.join(GATES)}")
    return gate


def stored_verdict(
    summary: Mapping[str, Any] | None,
    request: Any,
    suite_document: Mapping[str, Any] | None = None,
) -> GateVerdict | None:
    """The verdict of a stored run from its stored summary, request (its ``gate``) and suite
    (a bound gate's ``passScore``, at the default level) as JSON, for lists of runs: None when
    it has no summary, a gate this version does not know, or a bound gate and no suite."""
    gate = request.get("gate", DEFAULT_GATE) if isinstance(request, dict) else DEFAULT_GATE
    if summary is None or not isinstance(gate, str) or gate not in GATES:
        return None
    if GATES[gate].bound is not None and suite_document is None:
        return None
    level = request.get("ciLevel", DEFAULT_LEVEL) if isinstance(request, dict) else DEFAULT_LEVEL
    bounds = None if suite_document is None else suite_bounds(suite_document, level)
    return decide(EvalSummary.model_validate(summary), gate, bounds)


def decide(
    summary: EvalSummary, gate: str = DEFAULT_GATE, bounds: Bounds | None = None
) -> GateVerdict:
    """Whether the run ``summary`` reports passes ``gate`` (pure: the summary and ``bounds``
    alone decide). A bound gate without ``bounds`` fails, closed, saying so."""
    chosen = check_gate(gate)
    failures = chosen.rule(summary)
    if chosen.bound is not None:
        if bounds is None:
            missing = GateFailure(None, "no passScore and level were given to compare bounds with")
            failures = (*failures, missing)
        else:
            known = {f.task_id for f in failures if f.task_id is not None}
            extra = chosen.bound(summary, bounds)
            failures = (*failures, *(f for f in extra if f.task_id not in known))
    return GateVerdict(gate=gate, passed=not failures, failures=failures)
