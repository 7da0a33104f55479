"""What adaptive trials did in a run: per adaptive task, the rule, its decision and the trials it
ran and saved (``x-wopeval-adaptive``).

A pure function of the suite and the summary, as the intervals are: each task's decision is
:func:`~wopeval.grading.adaptive.decision_at` its summary's ``n`` trials and ``passedCount``,
which grading planned up to the test's stop, so the report is recomputed from the log, never
stored beside it. The RFC summary itself is unchanged (its schema is closed): the report goes in
wopeval's own outputs (``run``/``show`` and their ``--json``, the Markdown export).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from wopeval.grading.adaptive import decision_at
from wopeval.suite.adaptive_rules import adaptive_plan
from wopeval.suite.load import validate_suite
from wopeval.suite.models import AgentEvalSuite
from wopeval.wire.summary import EvalSummary

Outcome = Literal["above", "below", "undecided", "incomplete"]


@dataclass(frozen=True)
class AdaptiveTask:
    """One adaptive task: ``trials`` run of at most ``max_trials``, ``passed`` passing.
    ``decision``: ``above``/``below`` the threshold, ``undecided`` at the maximum, or
    ``incomplete`` (stopped short undecided: a run cut off)."""

    task_id: str
    rule: str
    decision: Outcome
    trials: int
    passed: int
    max_trials: int

    @property
    def saved(self) -> int:
        return self.max_trials - self.trials

    def to_json(self) -> dict[str, object]:
        return {
            "taskId": self.task_id,
            "rule": self.rule,
            "decision": self.decision,
            "trials": self.trials,
            "passedCount": self.passed,
            "maxTrials": self.max_trials,
            "trialsSaved": self.saved,
        }


@dataclass(frozen=True)
class AdaptiveReport:
    """Every adaptive task of a run, in suite order, and the totals."""

    tasks: tuple[AdaptiveTask, ...]

    @property
    def trials_run(self) -> int:
        return sum(t.trials for t in self.tasks)

    @property
    def trials_fixed(self) -> int:
        """What the adaptive tasks would have run at their fixed count."""
        return sum(t.max_trials for t in self.tasks)

    @property
    def saved(self) -> int:
        return self.trials_fixed - self.trials_run

    def count(self, decision: Outcome) -> int:
        return sum(t.decision == decision for t in self.tasks)

    def rules(self) -> list[str]:
        return sorted({t.rule for t in self.tasks})

    def line(self) -> str:
        """One line for a terminal or Markdown: ``adaptive (sprt): 15 of 48 trials run, 33
        saved; above 2, below 1, undecided 1``."""
        counts = ", ".join(
            f"{d} {self.count(d)}"
            for d in ("above", "below", "undecided", "incomplete")
            if d != "incomplete" or self.count(d)
        )
        return (
            f"adaptive ({', '.join(self.rules())}): {self.trials_run} of {self.trials_fixed} "
            f"trials run, {self.saved} saved; {counts}"
        )

    def to_json(self) -> dict[str, object]:
        return {
            "rules": self.rules(),
            "trialsRun": self.trials_run,
            "trialsFixed": self.trials_fixed,
            "trialsSaved": self.saved,
            "tasks": [t.to_json() for t in self.tasks],
        }


def adaptive_report(suite: AgentEvalSuite, summary: EvalSummary) -> AdaptiveReport | None:
    """The run's adaptive report, ``None`` when no task of the suite is adaptive."""
    rows: list[AdaptiveTask] = []
    by_id = {task.taskId: task for task in summary.tasks}
    for task in suite.tasks:
        plan = adaptive_plan(suite, task)
        graded = by_id.get(task.taskId)
        if plan is None or graded is None or graded.trials is None:
            continue
        n, c = graded.trials.n, graded.trials.passedCount
        decision = decision_at(plan, n, c)
        outcome: Outcome
        if decision is not None:
            outcome = decision
        else:
            outcome = "undecided" if n >= plan.max_trials else "incomplete"
        rows.append(AdaptiveTask(task.taskId, plan.rule, outcome, n, c, plan.max_trials))
    return AdaptiveReport(tuple(rows)) if rows else None


def stored_adaptive(document: object, summary: EvalSummary) -> AdaptiveReport | None:
    """:func:`adaptive_report` of a stored run's suite document (``None`` when it does not
    validate: a run stored by a wopeval that read it differently reports no adaptive trials)."""
    suite, errors = validate_suite(document)
    if suite is None or errors:
        return None
    return adaptive_report(suite, summary)
