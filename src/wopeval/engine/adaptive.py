"""The order trials run in when some tasks are adaptive (``x-wopeval-adaptive``).

A task with a fixed count contributes all its pairs, as before. An adaptive task's trials run in
waves: each wave is the fewest trials after which some outcome could decide
(:func:`wopeval.grading.adaptive.next_wave`), so a wave never runs a trial past the stop, and
its trials run concurrently with each other and with every other task's. When a wave's last
trial is scored, the test is read over the task's outcomes in trial order
(:func:`~wopeval.grading.adaptive.first_stop`, the very rule grading applies to the log): it
stopped, or the next wave is queued. Workers idle only while every remaining trial waits on a
wave in flight.

A resumed run goes on from its log: scored trials keep their outcomes (an interrupted one
failed), the trials of the wave in flight that were not scored run first, and the test goes on
from there; a task whose stop the log already records is not run again.

Adaptive trials are refused, before anything is recorded, for a task that could reach a live
tool (:func:`check_adaptive`): such a task's trials must not be repeated or cut for
statistical convenience.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field

import anyio

from wopeval.engine.resume import ResumeState, fail_closed
from wopeval.errors import UserError
from wopeval.grading.adaptive import Stop, first_stop, next_wave
from wopeval.suite.adaptive import ADAPTIVE_KEY, AdaptivePlan
from wopeval.suite.adaptive_rules import adaptive_plan
from wopeval.suite.models import AgentEvalSuite
from wopeval.wire.payloads import AdaptiveStopped

Pair = tuple[int, int]


class AdaptiveRefused(UserError):
    """Adaptive trials asked for where they cannot run honestly (live tools, a shard); ``field``
    is the ``x-wopeval-adaptive`` member that asked, the message starts with it."""

    def __init__(self, field: str, why: str) -> None:
        super().__init__(f"{field}: {why}")
        self.field = field
        self.why = why


def adaptive_plans(suite: AgentEvalSuite) -> dict[int, AdaptivePlan]:
    """Each adaptive task's resolved plan, by task index."""
    plans = {i: adaptive_plan(suite, task) for i, task in enumerate(suite.tasks)}
    return {i: plan for i, plan in plans.items() if plan is not None}


def _path(suite: AgentEvalSuite, index: int) -> str:
    own = suite.tasks[index].x_wopeval_adaptive is not None
    return f"tasks[{index}].{ADAPTIVE_KEY}" if own else ADAPTIVE_KEY


def check_adaptive(
    suite: AgentEvalSuite, *, live_tools: bool, ignore_fixtures: bool, sharded: bool = False
) -> None:
    """Refuse adaptive trials on a task that could reach a live tool (the run has live tools
    and the task is not fail-closed: unfixtured, ``onMiss: "live"``, or ``live-shadow``), and
    in a sharded run (a shard holds a slice of a task's trials, not its sequence)."""
    for index in adaptive_plans(suite):
        task = suite.tasks[index]
        if sharded:
            raise AdaptiveRefused(
                _path(suite, index),
                "adaptive trials cannot be sharded (a shard runs a slice of each task's "
                "trials); run without --shard",
            )
        if live_tools and not fail_closed(task, ignore_fixtures):
            why = "live-shadow ignores its fixtures" if ignore_fixtures else "it is not fixtured"
            raise AdaptiveRefused(
                _path(suite, index),
                f"task {task.taskId!r} could reach a live tool ({why}); its trials must not be "
                "cut short, so adaptive trials are refused for it",
            )


@dataclass
class _Sequence:
    """One adaptive task: its outcomes by trial index, and the trials queued so far."""

    plan: AdaptivePlan
    outcomes: dict[int, bool] = field(default_factory=dict)
    queued: int = 0  # trials 0 … queued − 1 are scored, running or waiting to run
    running: int = 0
    stopped: bool = False

    def prefix(self) -> list[bool]:
        return [self.outcomes[i] for i in range(self.queued)]

    def wave_done(self) -> bool:
        return self.running == 0 and all(i in self.outcomes for i in range(self.queued))


class TrialQueue:
    """The run's pairs in the order workers take them (see the module docstring).

    ``pairs`` are the fixed tasks' pairs still to run (lazily); adaptive tasks' pairs in it are
    skipped, since their waves come from their tests. ``resume`` gives a resumed run's outcomes.
    """

    def __init__(
        self,
        suite: AgentEvalSuite,
        pairs: Iterable[Pair],
        plans: Mapping[int, AdaptivePlan],
        resume: ResumeState | None = None,
    ) -> None:
        self.suite = suite
        self._fixed: Iterator[Pair] = (p for p in pairs if p[0] not in plans)
        self._ready: deque[Pair] = deque()
        self._changed = anyio.Event()
        self.sequences = {i: _Sequence(plan) for i, plan in plans.items()}
        # A stop the log lacks (a resumed run whose last wave was scored but not its record).
        self.stops: list[tuple[int, Stop]] = []
        for index, sequence in self.sequences.items():
            self._start(index, sequence, resume)

    def _start(self, index: int, sequence: _Sequence, resume: ResumeState | None) -> None:
        task_id = self.suite.tasks[index].taskId
        if resume is not None:
            for (tid, trial), passed in resume.passed.items():
                if tid == task_id and trial < sequence.plan.max_trials:
                    sequence.outcomes[trial] = passed
            for tid, trial in resume.interrupted:
                if tid == task_id and trial < sequence.plan.max_trials:
                    sequence.outcomes[trial] = False
            sequence.queued = max(sequence.outcomes, default=-1) + 1
            gaps = [(index, i) for i in range(sequence.queued) if i not in sequence.outcomes]
            if gaps:
                self._ready.extend(gaps)
                return
            if task_id in resume.adaptive_stopped:
                sequence.stopped = True
                return
        stop = self._advance(index, sequence)
        if stop is not None:
            self.stops.append((index, stop))

    def _advance(self, index: int, sequence: _Sequence) -> Stop | None:
        """After a whole wave is scored: the task's stop, or its next wave queued."""
        plan = sequence.plan
        stop = first_stop(plan, sequence.prefix())
        if stop.decision is not None or sequence.queued >= plan.max_trials:
            sequence.stopped = True
            return stop
        wave = next_wave(plan, sequence.queued, stop.passed)
        self._ready.extend((index, i) for i in range(sequence.queued, sequence.queued + wave))
        sequence.queued += wave
        return None

    def _waiting(self) -> bool:
        return any(s.running for s in self.sequences.values())

    async def next(self) -> Pair | None:
        """The next pair to run, ``None`` when no trial is left to run or to wait for."""
        while True:
            if self._ready:
                pair = self._ready.popleft()
                self.sequences[pair[0]].running += 1
                return pair
            fixed = next(self._fixed, None)
            if fixed is not None:
                return fixed
            if not self._waiting():
                return None
            changed = self._changed
            await changed.wait()

    def scored(self, task_index: int, trial_index: int, passed: bool) -> Stop | None:
        """Record a trial's outcome; an adaptive task's stop when this trial ended it."""
        sequence = self.sequences.get(task_index)
        if sequence is None:
            return None
        sequence.outcomes[trial_index] = passed
        sequence.running -= 1
        stop = self._advance(task_index, sequence) if sequence.wave_done() else None
        self._changed.set()
        self._changed = anyio.Event()
        return stop

    def stopped_payload(self, task_index: int, stop: Stop) -> AdaptiveStopped:
        plan = self.sequences[task_index].plan
        return AdaptiveStopped(
            taskId=self.suite.tasks[task_index].taskId,
            rule=plan.rule,
            decision=stop.decision or "undecided",
            trials=stop.trials,
            passedCount=stop.passed,
            maxTrials=plan.max_trials,
        )
