"""Fold a run's log into per-task tallies, one closed trial at a time (pure; flat memory).

:class:`~wopeval.grading.views.TrialCollector` hands each trial's view over once it is closed
(scored, bracket complete, reason recorded); :class:`RunFold` reduces it at once to what the
summary reads — its outcome, cost, latency, fixture misses, call and token counts, whether it
was skipped, and the trajectory block of the task's last trial that ran — and drops it. So
grading holds the trials still open (at most the run's concurrency, for wopeval's own logs),
never the run: one byte per planned trial (which keys are closed) and 8 bytes a trial for each
float that the summary sums with ``math.fsum`` (scores, costs), so that every reported number is
the very sum the list of views gave.

Every number is order-independent (exact sums, ``math.fsum``, integer totals) except the
trajectory block, which is the highest-indexed trial that ran, as before.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from wopeval.grading.adaptive import first_stop
from wopeval.grading.exact import ExactTotal
from wopeval.grading.log_event import LogEvent
from wopeval.grading.stats import OutcomeTally, TrialOutcome
from wopeval.grading.trial import (
    LABEL_SKIPPED,
    grade_trial,
    recorded_outcome,
    trajectory_of,
)
from wopeval.grading.views import TrialCollector, TrialView
from wopeval.grading.world_state import final_state_matched
from wopeval.suite.adaptive import AdaptivePlan
from wopeval.suite.adaptive_rules import adaptive_plan
from wopeval.suite.models import AgentEvalSuite, Task
from wopeval.wire.events import PROVIDER_USAGE, ProviderUsage
from wopeval.wire.summary import Efficiency, FinalStateBlock, TrajectoryBlock

MISSING = TrialOutcome(score=0.0, passed=False, gated=True)
TrialHook = Callable[[Task, TrialView], None]


@dataclass
class TaskFold:
    """One task's closed trials, reduced to what its ``TaskSummary`` reads."""

    task: Task
    count: int
    target_agent_id: str
    pass_score: float
    seen: bytearray = field(init=False)
    tally: OutcomeTally = field(default_factory=OutcomeTally)
    skipped: bool = False
    ran: int = 0
    costs: array[float] = field(default_factory=lambda: array("d"))
    latency_total: int = 0
    latency_count: int = 0
    misses: int = 0
    calls: int = 0
    model_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    last_ran: int = -1
    trajectory: TrajectoryBlock | None = None
    # An adaptive task (``x-wopeval-adaptive``) plans only the trials up to its test's stop.
    adaptive: AdaptivePlan | None = None
    passes: bytearray = field(init=False)
    state_mismatches: int = 0
    # Trials failed on the user side: a scripted user's script did not cover a message.
    user_misses: int = 0
    # ... or a simulated (LLM) user itself failed (user-error).
    user_errors: int = 0

    def __post_init__(self) -> None:
        self.seen = bytearray(self.count)
        self.passes = bytearray(self.count if self.adaptive is not None else 0)

    def add(self, view: TrialView) -> None:
        """Reduce one planned trial's view (each index at most once)."""
        index = view.trial_index
        self.seen[index] = 1
        if view.scored is not None and view.scored.scoreLabel == LABEL_SKIPPED:
            self.skipped = True
        trajectory = trajectory_of(self.task, view, self.target_agent_id)
        outcome = self._outcome(view, trajectory)
        self.tally.add(outcome)
        if self.adaptive is not None:
            self.passes[index] = outcome.passed
        if not view.ran:
            return
        self.user_misses += 1 if view.user_end == "miss" else 0
        self.user_errors += 1 if view.user_end == "error" else 0
        self.ran += 1
        self.costs.append(view.cost_usd)
        latency = view.latency_ms
        if latency is not None:
            self.latency_total += latency
            self.latency_count += 1
        self.misses += view.fixture_misses
        self.calls += len(view.calls)
        self.model_calls += view.model_call_count
        self.input_tokens += view.input_tokens
        self.output_tokens += view.output_tokens
        if final_state_matched(self.task, view) is False:
            self.state_mismatches += 1
        if index > self.last_ran:
            self.last_ran, self.trajectory = index, trajectory

    def _outcome(self, view: TrialView, trajectory: TrajectoryBlock | None) -> TrialOutcome:
        recorded = recorded_outcome(self.task, view, self.target_agent_id, trajectory)
        if recorded is not None:
            return recorded
        if not view.ran:
            return MISSING
        return grade_trial(
            self.task,
            view,
            target_agent_id=self.target_agent_id,
            pass_score=self.pass_score,
            trajectory=trajectory,
        ).outcome

    def planned(self) -> int:
        """How many trials the task planned: ``count``, or an adaptive task's trials up to the
        first stop of its test over the outcomes in trial order (a trial never seen failed)."""
        if self.adaptive is None:
            return self.count
        return first_stop(self.adaptive, [bool(p) for p in self.passes]).trials

    def finish(self) -> None:
        """Every planned trial never seen counts as missing (failed, score 0) and skipped."""
        for index in range(self.planned()):
            if not self.seen[index]:
                self.tally.add(MISSING)
                self.skipped = True

    @property
    def cost_usd(self) -> float:
        return math.fsum(self.costs)

    @property
    def latency_ms(self) -> int | None:
        if not self.latency_count:
            return None
        return round(float(self.latency_total) / self.latency_count)

    def final_state(self) -> FinalStateBlock | None:
        """The ``x-wopeval-finalState`` block: whether every trial that ran ended in the
        asserted state, and how many did not (None when the task asserts no state)."""
        if self.task.expected.final_state is None:
            return None
        matched = self.ran > 0 and self.state_mismatches == 0
        return FinalStateBlock(matched=matched, mismatchCount=self.state_mismatches)

    def efficiency(self) -> Efficiency | None:
        if not self.ran:
            return None
        n = self.ran
        return Efficiency(
            toolCallCount=float(self.calls) / n,
            modelCallCount=float(self.model_calls) / n,
            inputTokens=float(self.input_tokens) / n,
            outputTokens=float(self.output_tokens) / n,
        )


class RunFold:
    """The whole run: a :class:`TaskFold` per task and every provider cost of the log.

    ``on_trial`` sees each planned trial's view before it is dropped (for detailed views).
    ``closing=False`` keeps every view until the end (the fallback for an anomalous log).
    """

    def __init__(
        self,
        suite: AgentEvalSuite,
        target_agent_id: str,
        pass_score: float,
        *,
        on_trial: TrialHook | None = None,
        closing: bool = True,
    ) -> None:
        count = suite.trial_plan.effective_count
        self.tasks = [
            TaskFold(t, count, target_agent_id, pass_score, adaptive=adaptive_plan(suite, t))
            for t in suite.tasks
        ]
        self._by_id: dict[str, list[TaskFold]] = {}
        for fold in self.tasks:
            self._by_id.setdefault(fold.task.taskId, []).append(fold)
        self._on_trial = on_trial
        self.costs: array[float] = array("d")
        self.cost_total = ExactTotal()
        planned = {task_id: count for task_id in self._by_id}
        self.collector = TrialCollector(self._close, planned, closing=closing)

    def feed(self, events: Iterable[LogEvent]) -> None:
        """Fold the whole log, then :meth:`close` (:meth:`feed_one` inlined: one call less an
        event)."""
        feed = self.collector.feed
        for event in events:
            if event.type == PROVIDER_USAGE:
                self._usage(event)
            feed(event)
        self.close()

    def feed_one(self, event: LogEvent) -> None:
        """Fold the log's next event (a live run feeds each as it is committed)."""
        if event.type == PROVIDER_USAGE:
            self._usage(event)
        self.collector.feed(event)

    def _usage(self, event: LogEvent) -> None:
        if isinstance(usage := event.typed, ProviderUsage):
            cost = usage.costEstimateUsd or 0.0
            self.costs.append(cost)
            self.cost_total.add(cost)

    def close(self) -> None:
        """The log has ended: hand over the trials still open; count the missing ones."""
        self.collector.finish()
        for fold in self.tasks:
            fold.finish()

    @property
    def anomaly(self) -> str | None:
        return self.collector.anomaly

    def _close(self, view: TrialView) -> None:
        folds = self._by_id.get(view.task_id)
        if folds is None or not 0 <= view.trial_index < folds[0].count:
            return  # not a planned trial: the summary does not read it
        for fold in folds:
            fold.add(view)
            if self._on_trial is not None:
                self._on_trial(fold.task, view)
