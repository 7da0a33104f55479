"""The tenant's detailed view of a graded run (pure): every trial's result and reason, each task's
gating score, and why the suite passed or failed.

Built from the suite and the log only, like the summary, by the same grading pass
(:func:`~wopeval.grading.summary.grade_run`). It carries content (failure reasons name tools,
outputs and exceptions), so it is shown only in the tenant's own views — the CLI, the tenant's
pages, JUnit/Markdown/HTML reports — never on the content-free wire.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Literal

from wopeval.grading.exact import at_least
from wopeval.grading.fold import TrialHook
from wopeval.grading.reasons import Verdict, explain
from wopeval.grading.summary import Graded, GradingOptions, grade_run, pass_score_of
from wopeval.grading.trial import trajectory_of
from wopeval.grading.views import TrialView
from wopeval.suite.adaptive_rules import adaptive_plan
from wopeval.suite.models import AgentEvalSuite, Task
from wopeval.wire.events import RunEvent, TrialFailed

TrialStatus = Literal["pass", "fail", "fail-closed", "error", "skipped", "missing"]
ERROR_KINDS = frozenset({"agent-error", "timeout", "cancelled", "output-not-json", "grader-error",
                         "judge-error", "infrastructure", "max-turns",
                         "user-error"})  # fmt: skip
# Reasons of a trial that failed closed besides a fixture miss (read from the log): a recorded
# model call or a scripted user had no answer for what the agent did.
FAIL_CLOSED_KINDS = frozenset({"model-miss", "user-miss"})
STATUS_MARK: dict[TrialStatus, str] = {
    "pass": "✓", "fail": "✗", "fail-closed": "!", "error": "E", "skipped": "-", "missing": "?",
}  # fmt: skip


@dataclass(frozen=True)
class TrialUsage:
    """What a trial spent, read from its bracket (``provider.usage`` events and timestamps):
    the inputs of :mod:`wopeval.grading.efficiency`, never of its grade."""

    ran: bool
    cost_usd: float
    input_tokens: int
    output_tokens: int
    latency_ms: int | None


@dataclass(frozen=True)
class TrialCell:
    trial_index: int
    status: TrialStatus
    score: float | None
    reason: TrialFailed | None
    # Why each earlier attempt was retried (infrastructure causes), oldest first.
    retries: tuple[str, ...] = ()
    usage: TrialUsage | None = None


def usage_of(view: TrialView) -> TrialUsage:
    """The trial's spend as its view read it."""
    return TrialUsage(
        view.ran, view.cost_usd, view.input_tokens, view.output_tokens, view.latency_ms
    )


@dataclass(frozen=True)
class TaskDetail:
    task_id: str
    cells: list[TrialCell]
    gating_score: float
    passed: bool

    @property
    def flaky(self) -> bool:
        """Its trials disagree: some passed and some did not."""
        statuses = {cell.status == "pass" for cell in self.cells}
        return len(statuses) > 1

    @property
    def failures(self) -> list[TrialCell]:
        return [cell for cell in self.cells if cell.status != "pass"]


@dataclass(frozen=True)
class RunDetail:
    tasks: list[TaskDetail]
    gating_aggregate: float
    pass_score: float
    aggregate_passes: bool
    within_ceilings: bool
    skipped: bool

    def infrastructure_failures(self) -> int:
        """Trials that failed because a component failed (``infrastructure``), not the agent."""
        return sum(c.reason is not None and c.reason.kind == "infrastructure"
                   for t in self.tasks for c in t.cells)  # fmt: skip

    def retried(self) -> dict[str, int]:
        """The trials retried after an infrastructure failure (``trials``) and the attempts
        retries superseded, in all and by cause (``attempts``, ``<cause>``): content-free."""
        counts: Counter[str] = Counter()
        for task in self.tasks:
            for cell in task.cells:
                if cell.retries:
                    counts["trials"] += 1
                    counts["attempts"] += len(cell.retries)
                    counts.update(cell.retries)
        return dict(counts)

    def below_pass_score(self) -> list[TaskDetail]:
        """The tasks that pull the gating aggregate down, lowest first."""
        low = [t for t in self.tasks if t.gating_score < self.pass_score]
        return sorted(low, key=lambda t: (t.gating_score, t.task_id))


def run_detail(
    suite: AgentEvalSuite,
    events: Iterable[RunEvent],
    options: GradingOptions,
    *,
    on_trial: TrialHook | None = None,
) -> RunDetail:
    """Grade the run and give every planned trial its cell, in the same single folding pass
    (:func:`~wopeval.grading.summary.grade_run`): each trial's view becomes its small cell as
    it closes and is dropped, so memory holds the cells (one per trial: a status, a score and,
    for a trial that did not pass, its reason), never the run's views. ``on_trial`` also sees
    each planned trial's final view (to keep more of it, e.g. the EEE export's usage)."""
    cells = CellKeeper(suite, options, on_trial)
    return detail_of(suite, grade_run(suite, events, options, on_trial=cells), cells)


class CellKeeper:
    """The fold's ``on_trial`` hook that keeps each planned trial's cell (then calls
    ``on_trial``, if given); :func:`detail_of` reports them with the graded run."""

    def __init__(
        self, suite: AgentEvalSuite, options: GradingOptions, on_trial: TrialHook | None = None
    ) -> None:
        self._options = options
        self._pass_score = pass_score_of(suite, options)
        self._on_trial = on_trial
        self.found: dict[tuple[str, int], TrialCell] = {}

    def __call__(self, task: Task, view: TrialView) -> None:
        cell = replace(_cell(task, view, self._options, self._pass_score), usage=usage_of(view))
        self.found[(task.taskId, view.trial_index)] = cell
        if self._on_trial is not None:
            self._on_trial(task, view)


def detail_of(suite: AgentEvalSuite, graded: Graded, cells: CellKeeper) -> RunDetail:
    """The detail of a run graded with ``cells`` as its fold's ``on_trial`` hook."""
    tasks: list[TaskDetail] = []
    count = suite.trial_plan.effective_count
    found = cells.found
    for task, grade in zip(suite.tasks, graded.tasks, strict=True):
        # An adaptive task planned only the trials its test ran (the summary's n).
        trials = grade.summary.trials
        planned = trials.n if trials is not None and adaptive_plan(suite, task) else count
        cells_of = [found.get((task.taskId, i)) or TrialCell(i, "missing", None, None)
                    for i in range(planned)]  # fmt: skip
        tasks.append(
            TaskDetail(task.taskId, cells_of, float(grade.result.gating_score), grade.result.passed)
        )
    return RunDetail(
        tasks=tasks,
        gating_aggregate=float(graded.gating_aggregate),
        pass_score=graded.pass_score,
        aggregate_passes=at_least(graded.gating_aggregate, graded.pass_score),
        within_ceilings=graded.within_ceilings,
        skipped=graded.skipped,
    )


def _cell(task: Task, view: TrialView, options: GradingOptions, pass_score: float) -> TrialCell:
    index, retries = view.trial_index, view.retries
    if not view.ran and view.scored is None:
        return TrialCell(index, "missing", None, None, retries)
    scored = view.scored
    passed = scored is not None and scored.passed
    if passed and not view.failed_closed:
        return TrialCell(index, "pass", scored.score if scored else None, None, retries)
    reason = view.reason
    if reason is None:  # an imported or older log: explain it now, from the same pure function
        trajectory = trajectory_of(task, view, options.target_agent_id)
        verdict = Verdict(
            passed=False,
            score=scored.score if scored is not None else 0.0,
            label=scored.scoreLabel if scored is not None else None,
            trajectory_matched=trajectory.matched if trajectory is not None else None,
            pass_score=pass_score,
        )
        reason = explain(task, view, verdict, target_agent_id=options.target_agent_id)
    score = scored.score if scored else None
    return TrialCell(index, _status(view, reason), score, reason, retries)


def _status(view: TrialView, reason: TrialFailed | None) -> TrialStatus:
    if reason is not None and reason.kind == "skipped-budget":
        return "skipped"
    if view.failed_closed or (reason is not None and reason.kind in FAIL_CLOSED_KINDS):
        return "fail-closed"
    if reason is not None and reason.kind in ERROR_KINDS:
        return "error"
    return "fail"
