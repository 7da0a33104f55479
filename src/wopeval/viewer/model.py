"""What each page shows, computed from the store (the tenant's own view: it carries content).

The run page's grid reads only trial outcomes (:func:`~wopeval.viewer.queries.outcomes`); a
trial's status follows :mod:`wopeval.grading.detail` exactly: a ``wopeval.trial-failed`` reason
names why a trial did not pass, and its kind decides the colour. A log without reasons (an
imported one) is graded in full by :func:`~wopeval.grading.detail.run_detail` instead.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from wopeval.events.store import EventStore, RunRecord
from wopeval.grading.detail import ERROR_KINDS, STATUS_MARK, run_detail
from wopeval.grading.intervals import Interval
from wopeval.grading.reasons import (
    TrajectoryDiff,
    Verdict,
    explain,
    reason_line,
    reason_texts,
    trajectory_diff,
)
from wopeval.grading.stats import pass_at_k, pass_hat_k
from wopeval.grading.summary_intervals import SuiteIntervals, summary_intervals
from wopeval.grading.trial import trajectory_of
from wopeval.grading.views import TrialView, collect_trials
from wopeval.service.runs import fold_log, grading_options
from wopeval.suite import parse_suite
from wopeval.suite.models import Task, Thresholds, Trials
from wopeval.viewer.bands import Band, suite_bands, task_bands
from wopeval.viewer.conversation import Conversation, StateDiff, conversation_of, state_diff_of
from wopeval.viewer.pins import PinView, graded_turns, pin_views
from wopeval.viewer.queries import Outcome, Reason, Scored, all_events, outcomes, trial_events
from wopeval.wire.events import RunEvent, TrialFailed
from wopeval.wire.summary import EvalSummary, TaskSummary

# Reasons whose trial counts 0 for the pass decisions (RFC 0246), whatever its output score.
GATING_KINDS = frozenset({"trajectory", "fixture-miss", "skipped-budget", "not-run", "interrupted",
                          "grader-error", "judge-error", "final-state", "user-miss"})  # fmt: skip
MARKS: dict[str, str] = {**{str(k): v for k, v in STATUS_MARK.items()}, "pending": "·"}


@dataclass(frozen=True)
class Cell:
    trial_index: int
    status: str  # pass, fail, fail-closed, error, skipped, missing, pending
    score: float | None
    message: str | None
    gated: bool = False  # counts 0 for the pass decisions (RFC 0246): path missed, failed closed
    kind: str | None = None  # the recorded reason's kind (user-miss, final-state, …)

    @property
    def gating_score(self) -> float:
        if self.gated or self.status in ("fail-closed", "skipped", "missing"):
            return 0.0
        return self.score or 0.0

    @property
    def mark(self) -> str:
        return MARKS.get(self.status, "?")


@dataclass
class TaskRow:
    task_id: str
    cells: list[Cell]
    summary: TaskSummary | None = None
    curve: list[tuple[int, float, float]] = field(default_factory=list)  # k, pass@k, pass^k
    bands: list[Band] = field(default_factory=list)  # k, their intervals
    rate: Interval | None = None  # the pass rate's interval

    @property
    def flaky(self) -> bool:
        done = [c for c in self.cells if c.status not in ("pending", "missing")]
        return len({c.status == "pass" for c in done}) > 1

    @property
    def passed_count(self) -> int:
        if self.summary is not None and self.summary.trials is not None:
            return self.summary.trials.passedCount
        return sum(1 for c in self.cells if c.status == "pass")


TASKS_PER_PAGE = 100


@dataclass(frozen=True)
class Outline:
    """What the run page needs of the stored suite document, read without a full parse."""

    task_ids: list[str]
    trial_count: int
    pass_score: float

    @classmethod
    def of(cls, document: dict[str, Any]) -> Outline:
        plan = Trials.model_validate(document.get("trials") or {})
        thresholds = Thresholds.model_validate(document.get("thresholds") or {})
        score = thresholds.passScore if thresholds.passScore is not None else 1.0
        return cls([str(t["taskId"]) for t in document["tasks"]], plan.effective_count, score)


@dataclass
class RunPage:
    record: RunRecord
    outline: Outline
    summary: EvalSummary | None
    tasks: list[TaskRow]  # this page's tasks
    task_page: int
    task_pages: int
    task_offset: int
    finished: int
    last_sequence: int
    suite_curve: list[tuple[int, float, float, float, float]]  # k, pass@k, se, pass^k, se

    @property
    def trial_count(self) -> int:
        return self.outline.trial_count

    @property
    def task_count(self) -> int:
        return len(self.outline.task_ids)

    gating_aggregate: float | None = None  # RFC 0246: what the suite's pass decision reads
    intervals: SuiteIntervals | None = None  # of the summary, at the default level
    suite_bands: list[Band] = field(default_factory=list)  # k, the curves' intervals
    kinds: dict[str, int] = field(default_factory=dict)  # failure reason kind → trials

    @property
    def failure_labels(self) -> list[tuple[str, int]]:
        """Each reason kind of the run's trials that did not pass, with its count; on a suite
        with a simulated user ``user-miss`` and ``user-error`` are listed even at 0 (the user
        side counted apart), on one with a final state ``final-state`` too."""
        shown = dict(self.kinds)
        summary = self.summary
        if summary is not None and summary.user_side is not None:
            shown.setdefault("user-miss", summary.user_side.userMiss)
            shown.setdefault("user-error", summary.user_side.userError)
        if summary is not None and any(t.final_state is not None for t in summary.tasks):
            shown.setdefault("final-state", 0)
        return sorted(shown.items(), key=lambda item: (-item[1], item[0]))


def status_of(outcome: Outcome | None, terminal: bool) -> str | None:
    """The cell's status (as :mod:`wopeval.grading.detail` decides it), or None when a failing
    trial has no recorded reason."""
    if outcome is None or outcome.scored is None:
        return "missing" if terminal else "pending"
    reason = outcome.reason
    if reason is None:
        return "pass" if outcome.scored.passed else None
    if reason.kind == "skipped-budget":
        return "skipped"
    if reason.kind in ("fixture-miss", "user-miss"):  # only a failed-closed trial has these
        return "fail-closed"
    return "error" if reason.kind in ERROR_KINDS else "fail"


def cell_of(index: int, outcome: Outcome | None, terminal: bool) -> Cell | None:
    status = status_of(outcome, terminal)
    if status is None:
        return None
    score = outcome.scored.score if outcome is not None and outcome.scored else None
    message = outcome.reason.message if outcome is not None and outcome.reason else None
    kind = outcome.reason.kind if outcome is not None and outcome.reason else None
    return Cell(index, status, score, message, gated=kind in GATING_KINDS, kind=kind)


@lru_cache(maxsize=4096)
def _curve(n: int, c: int) -> tuple[tuple[int, float, float], ...]:
    """Exact pass@k and pass^k for k = 1..n (as floats for the plot)."""
    return tuple((k, float(pass_at_k(n, c, k)), float(pass_hat_k(n, c, k)))
                 for k in range(1, n + 1))  # fmt: skip


def _se(values: list[float]) -> float:
    return statistics.stdev(values) / math.sqrt(len(values)) if len(values) > 1 else 0.0


def suite_curve(
    passed: list[int], n: int | Sequence[int]
) -> list[tuple[int, float, float, float, float]]:
    """Per k the task mean of pass@k and pass^k, each with its task-clustered standard error.
    ``n`` is every task's trial count, or each task's (adaptive tasks differ): k goes up to
    the fewest."""
    sizes = [n] * len(passed) if isinstance(n, int) else list(n)
    curves = [_curve(size, c) for size, c in zip(sizes, passed, strict=True)]
    rows = []
    for k in range(1, min(sizes, default=0) + 1):
        at = [curve[k - 1][1] for curve in curves]
        hat = [curve[k - 1][2] for curve in curves]
        if at:
            rows.append((k, statistics.fmean(at), _se(at), statistics.fmean(hat), _se(hat)))
    return rows


async def run_page(store: EventStore, record: RunRecord, task_page: int = 1) -> RunPage:
    """The run's page ``task_page`` (100 tasks each); counts and curves cover every task."""
    outline = Outline.of(record.suite_document)
    summary = EvalSummary.model_validate(record.summary) if record.summary else None
    found, last = await outcomes(store, record.run_id)
    n = outline.trial_count
    tasks: list[TaskRow] = []
    for task_id in outline.task_ids:
        cells = [cell_of(i, found.get((task_id, i)), record.terminal) for i in range(n)]
        if any(c is None for c in cells):
            tasks = await _graded_rows(store, record)
            break
        tasks.append(TaskRow(task_id, [c for c in cells if c is not None]))
    by_task = {t.taskId: t for t in summary.tasks} if summary else {}
    level = record.run_request.ci_level  # the run's own, as its bound gate reads
    intervals = summary_intervals(summary, level) if summary else None
    rates = {t.task_id: t.pass_rate for t in intervals.tasks} if intervals else {}
    for row in tasks:
        row.summary = by_task.get(row.task_id)
        row.rate = rates.get(row.task_id)
    pages = max(1, -(-len(tasks) // TASKS_PER_PAGE))
    page = min(max(task_page, 1), pages)
    offset = (page - 1) * TASKS_PER_PAGE
    shown = tasks[offset : offset + TASKS_PER_PAGE]
    finished = sum(1 for o in found.values() if o.scored is not None)
    curve: list[tuple[int, float, float, float, float]] = []
    bands: list[Band] = []
    if record.terminal:  # while running, an unfinished trial is not a failed one: no curves yet
        sizes = [_trials_run(row, n) for row in tasks]
        for row, size in zip(tasks, sizes, strict=True):
            del row.cells[size:]  # an adaptive task's trials past its stop were never planned
        for row in shown:
            size = _trials_run(row, n)
            row.curve = list(_curve(size, row.passed_count))
            row.bands = list(task_bands(size, row.passed_count, level))
        curve = suite_curve([row.passed_count for row in tasks], sizes)
        bands = suite_bands([row.passed_count for row in tasks], sizes, level)
    gating = None
    if record.terminal and tasks and all(row.cells for row in tasks):
        means = [math.fsum(c.gating_score for c in row.cells) / len(row.cells) for row in tasks]
        gating = math.fsum(means) / len(means)
    kinds = Counter(c.kind for row in tasks for c in row.cells if c.kind is not None)
    return RunPage(
        record, outline, summary, shown, page, pages, offset, finished, last, curve, gating,
        intervals, bands, dict(kinds),
    )  # fmt: skip


def _trials_run(row: TaskRow, planned: int) -> int:
    """The trials the task's summary counts (fewer than planned for an adaptive task that
    stopped early), else the planned count."""
    trials = row.summary.trials if row.summary is not None else None
    return trials.n if trials is not None else planned


async def _graded_rows(store: EventStore, record: RunRecord) -> list[TaskRow]:
    """A log whose failing trials carry no reason: grade it (the pure detail, one paged pass)."""
    suite = parse_suite(record.suite_document, source=f"run {record.run_id}")
    options = grading_options(record.run_request)
    detail = await fold_log(store, record.run_id, lambda log: run_detail(suite, log, options))
    return [
        TaskRow(t.task_id, [Cell(c.trial_index, c.status, c.score,
                                 reason_line(c.reason, c.status) if c.reason else None,
                                 gated=c.reason is not None and c.reason.kind in GATING_KINDS,
                                 kind=c.reason.kind if c.reason else None)
                            for c in t.cells])
        for t in detail.tasks
    ]  # fmt: skip


@dataclass
class TrialPage:
    record: RunRecord
    task_id: str
    trial_index: int
    events: list[RunEvent]
    view: TrialView | None
    reason: TrialFailed | None
    status: str
    diff: TrajectoryDiff | None
    task_input: Any
    conversation: Conversation | None = None
    state: StateDiff | None = None
    # The pinned expected calls (``x-wopeval-pin``) by their index in the trajectory diff.
    pins: dict[int, PinView] = field(default_factory=dict)
    # With pins: the turn each observed call of the diff was made in.
    call_turns: list[int] = field(default_factory=list)

    @property
    def reason_texts(self) -> list[str]:
        """Why it did not pass, most decisive first (the wording of every output)."""
        return reason_texts(self.reason, self.status)


async def trial_page(
    store: EventStore, record: RunRecord, task_id: str, trial_index: int
) -> TrialPage | None:
    suite = parse_suite(record.suite_document, source=f"run {record.run_id}")
    task = next((t for t in suite.tasks if t.taskId == task_id), None)
    if task is None or not 0 <= trial_index < suite.trial_plan.effective_count:
        return None
    own = await trial_events(store, record.run_id, task_id, trial_index)
    log = own if own is not None else await all_events(store, record.run_id)
    view = collect_trials(log).get((task_id, trial_index))
    if own is None and view is not None:  # an imported log: this trial's part of it
        log = [e for e in log if _belongs(e, view)]
    target = grading_options(record.run_request).target_agent_id
    reason = _reason(task, view, target, suite.thresholds)
    status = "pending" if view is None or view.scored is None else "pass"
    if reason is not None:
        outcome = Outcome(Scored(0.0, False), Reason(reason.kind, reason.message))
        status = status_of(outcome, record.terminal) or "fail"
    elif view is not None and view.scored is not None and not view.scored.passed:
        status = "fail"
    diff = None
    pins: dict[int, PinView] = {}
    turns: list[int] = []
    if task.expected.trajectory is not None and view is not None and view.ran:
        diff = trajectory_diff(task.expected.trajectory, view.calls, target)
        pins = pin_views(task.expected.trajectory, view.calls, target)
        if pins:
            turns = graded_turns(task.expected.trajectory, view.calls, target)
    talk = conversation_of(log, view)
    state = state_diff_of(task, view)
    return TrialPage(
        record, task_id, trial_index, log, view, reason, status, diff, task.input, talk, state,
        pins, turns,
    )  # fmt: skip


def _reason(
    task: Task, view: TrialView | None, target: str, thresholds: Thresholds | None
) -> TrialFailed | None:
    """The recorded reason, or (a log without one) the same pure explanation grading gives."""
    if view is None or view.scored is None:
        return None
    if view.reason is not None or view.scored.passed:
        return view.reason
    trajectory = trajectory_of(task, view, target)
    pass_score = thresholds.passScore if thresholds and thresholds.passScore is not None else 1.0
    verdict = Verdict(
        passed=False,
        score=view.scored.score,
        label=view.scored.scoreLabel,
        trajectory_matched=trajectory.matched if trajectory is not None else None,
        pass_score=pass_score,
    )
    return explain(task, view, verdict, target_agent_id=target)


def _belongs(event: RunEvent, view: TrialView) -> bool:
    return event.causationId == view.root_event_id or event.eventId == view.root_event_id
