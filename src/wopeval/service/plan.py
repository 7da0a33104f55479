"""Plan a suite's trials and tasks: the gates (:mod:`wopeval.grading.planning`) and the paired
regression methods (:mod:`wopeval.compare.power`) from per-task pass rates, read from a stored
run's log (re-graded, never its stored summary) or assumed. Shared by ``wopeval plan`` and the
viewer's plan page."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from wopeval.compare.power import (
    DEFAULT_SEED,
    DEFAULT_SIMULATIONS,
    EXACT_METHODS,
    SIMULATED_METHODS,
    Design,
    MethodPlan,
    plan_methods,
)
from wopeval.errors import UserError
from wopeval.events.store import EventStore
from wopeval.grading.exact import recorded
from wopeval.grading.gate import suite_bounds
from wopeval.grading.intervals import DEFAULT_LEVEL, check_level
from wopeval.grading.planning import GatePlan, plan_suite_gate, plan_task_gate
from wopeval.service.runs import regrade
from wopeval.suite.models import AgentEvalSuite, PassRule

METHODS = (*EXACT_METHODS, *SIMULATED_METHODS)
PLAN_RESAMPLES = 1000
"""The bootstrap's B in a planning simulation (the verdict's default is 10,000: its floor
1/(B + 1) is far below any alpha planned for, so the power barely moves)."""


class PlanInputError(UserError):
    """A planning input the caller got wrong; the message names the option."""


@dataclass(frozen=True)
class TaskRate:
    """A task's planned per-trial pass rate and where it comes from (``3/5``, ``assumed``)."""

    task_id: str
    rate: float
    source: str


@dataclass(frozen=True)
class PlanSettings:
    """What to plan for. ``trials`` is the trials per task of the regression plan (the suite's
    count when ``None``); ``methods`` the paired methods planned."""

    mde: float = 0.10
    alpha: float = 0.05
    power: float = 0.80
    level: float = DEFAULT_LEVEL
    trials: int | None = None
    methods: tuple[str, ...] = METHODS
    simulations: int = DEFAULT_SIMULATIONS
    seed: int = DEFAULT_SEED

    def check(self) -> None:
        """Refuse bad settings with the option's name (``--mde``, ``--power`` …)."""
        finite = all(math.isfinite(v) for v in (self.mde, self.alpha, self.power, self.level))
        if not finite:
            raise PlanInputError("--mde, --alpha, --power and --ci-level must be finite numbers")
        if not 0.0 < self.mde < 1.0:
            raise PlanInputError(f"--mde: must lie strictly between 0 and 1, got {self.mde:g}")
        if not 0.0 < self.alpha < 1.0:
            raise PlanInputError(f"--alpha: must lie strictly between 0 and 1, got {self.alpha:g}")
        if not self.alpha < self.power < 1.0:
            raise PlanInputError(
                f"--power: must lie strictly between --alpha ({self.alpha:g}) and 1, "
                f"got {self.power:g}"
            )
        try:
            check_level(self.level)
        except ValueError as exc:
            raise PlanInputError(f"--ci-level: {exc}") from None
        if self.trials is not None and self.trials < 1:
            raise PlanInputError(f"--trials: must be at least 1, got {self.trials}")
        unknown = [m for m in self.methods if m not in METHODS]
        if unknown or not self.methods:
            raise PlanInputError(
                f"--method: unknown {', '.join(unknown) or '(none given)'}; "
                f"choose from {', '.join(METHODS)}"
            )
        if self.simulations < 10:
            raise PlanInputError(f"--simulations: at least 10, got {self.simulations}")


@dataclass(frozen=True)
class TaskGates:
    """A task's plan: its ``passRule`` gate and that gate with its pass-rate lower bound."""

    task: TaskRate
    rule: GatePlan
    bound: GatePlan


@dataclass(frozen=True)
class SuitePlan:
    """Everything ``wopeval plan`` shows (see docs/statistics.md, "Planning")."""

    suite_id: str
    version: str
    pass_rule: PassRule
    pass_score: float
    trials_now: int
    settings: PlanSettings
    rates: tuple[TaskRate, ...]
    tasks: tuple[TaskGates, ...]
    suite: tuple[GatePlan, ...]
    methods: tuple[MethodPlan, ...] = field(default=())

    @property
    def regression_trials(self) -> int:
        return self.settings.trials or self.trials_now

    def to_json(self) -> dict[str, object]:
        s = self.settings
        return {
            "suite": {"suiteId": self.suite_id, "version": self.version},
            "passRule": self.pass_rule,
            "passScore": self.pass_score,
            "trialsPerTask": self.trials_now,
            "mde": s.mde,
            "alpha": s.alpha,
            "power": s.power,
            "ciLevel": s.level,
            "tasks": [
                {
                    "taskId": t.task.task_id,
                    "rate": t.task.rate,
                    "source": t.task.source,
                    "passRule": t.rule.to_json(),
                    "lowerBound": t.bound.to_json(),
                }
                for t in self.tasks
            ],
            "suiteGates": [gate.to_json() for gate in self.suite],
            "regression": {
                "trialsPerTask": self.regression_trials,
                "model": "every task's per-trial pass rate lowered by mde (floored at 0)",
                "methods": [plan.to_json() for plan in self.methods],
            },
        }


def assumed_rates(suite: AgentEvalSuite, rate: float) -> tuple[TaskRate, ...]:
    """Every task at ``rate`` (``--assume-rate``)."""
    if not (math.isfinite(rate) and 0.0 <= rate <= 1.0):
        raise PlanInputError(f"--assume-rate: a rate lies in [0, 1], got {rate:g}")
    return tuple(TaskRate(task.taskId, rate, "assumed") for task in suite.tasks)


def rates_from_mapping(
    suite: AgentEvalSuite, given: object, option: str = "--rates"
) -> tuple[TaskRate, ...]:
    """Each task's rate from a ``{taskId: rate}`` object (``--rates FILE``): every task of the
    suite, no other, each a number in [0, 1]."""
    if not isinstance(given, Mapping):
        raise PlanInputError(f"{option}: expected a JSON object {{taskId: rate}}")
    ids = [task.taskId for task in suite.tasks]
    unknown = sorted(str(key) for key in given if key not in ids)
    missing = [task_id for task_id in ids if task_id not in given]
    if unknown:
        raise PlanInputError(f"{option}: tasks not in the suite: {', '.join(unknown)}")
    if missing:
        raise PlanInputError(f"{option}: no rate for task(s) {', '.join(missing)}")
    rates = []
    for task_id in ids:
        value = given[task_id]
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        if not ok or not (math.isfinite(value) and 0.0 <= value <= 1.0):
            raise PlanInputError(
                f"{option}: {task_id}: a rate is a number in [0, 1], got {value!r}"
            )
        rates.append(TaskRate(task_id, float(value), "given"))
    return tuple(rates)


async def baseline_rates(
    store: EventStore, suite: AgentEvalSuite, run_id: str
) -> tuple[TaskRate, ...]:
    """Each task's pass rate in a completed run of this suite, re-graded from its log (the
    summary is recomputed, so a stored summary that disagrees with the log is not read)."""
    record = await store.get_run(run_id)
    if record is None:
        raise PlanInputError(f"--baseline: run {run_id!r} is not in the store")
    if record.kind != "eval" or record.suite_id != suite.suiteId:
        raise PlanInputError(
            f"--baseline: run {run_id!r} is a run of {record.suite_id!r}, not of {suite.suiteId!r}"
        )
    if record.status != "completed":
        raise PlanInputError(
            f"--baseline: run {run_id!r} is {record.status}, not completed: its rates are partial"
        )
    summary = (await regrade(store, run_id)).summary
    found = {task.taskId: task for task in summary.tasks}
    missing = [task.taskId for task in suite.tasks if task.taskId not in found]
    if missing:
        raise PlanInputError(
            f"--baseline: run {run_id!r} has no result for task(s) {', '.join(missing)}"
        )
    rates = []
    for task in suite.tasks:
        entry = found[task.taskId]
        c, n = (
            (entry.trials.passedCount, entry.trials.n) if entry.trials else (int(entry.passed), 1)
        )
        rates.append(TaskRate(task.taskId, c / n, f"{c}/{n}"))
    return tuple(rates)


def plan_suite(
    suite: AgentEvalSuite, rates: Sequence[TaskRate], settings: PlanSettings
) -> SuitePlan:
    """The plan of ``suite`` at ``rates`` (pure): each task's gates, the suite gates, and each
    paired method's task count."""
    settings.check()
    plan = suite.trial_plan
    rule = plan.effective_pass_rule
    pass_score = suite_bounds(suite).pass_score
    exact = recorded(pass_score)
    odds = {"alpha": settings.alpha, "power": settings.power}
    tasks = tuple(
        TaskGates(
            rate,
            plan_task_gate(rate.rate, settings.mde, rule, exact, **odds),
            plan_task_gate(rate.rate, settings.mde, rule, exact, level=settings.level, **odds),
        )
        for rate in rates
    )
    values = [rate.rate for rate in rates]
    gates = (
        plan_suite_gate(values, settings.mde, exact, **odds),
        plan_suite_gate(values, settings.mde, exact, level=settings.level, **odds),
    )
    design = Design(
        rates=tuple(values),
        trials=settings.trials or plan.effective_count,
        pass_rule=rule,
        pass_score=exact,
        mde=settings.mde,
        resamples=PLAN_RESAMPLES,
        **odds,
    )
    methods = plan_methods(
        design, settings.methods, simulations=settings.simulations, seed=settings.seed
    )
    return SuitePlan(
        suite.suiteId, suite.version, rule, pass_score, plan.effective_count, settings,
        tuple(rates), tasks, gates, tuple(methods),
    )  # fmt: skip


__all__ = [
    "METHODS",
    "PLAN_RESAMPLES",
    "PlanInputError",
    "PlanSettings",
    "SuitePlan",
    "TaskGates",
    "TaskRate",
    "assumed_rates",
    "baseline_rates",
    "plan_suite",
    "rates_from_mapping",
]
