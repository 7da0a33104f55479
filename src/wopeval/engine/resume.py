"""Resume an interrupted run so that every ``(taskId, trialIndex)`` is scored exactly once.

:func:`scan` reads the run's log in pages (never all of it at once) and sorts every planned
trial into one of four states:

* **scored**: it has its ``eval.scored``; it is never run again.
* **in flight, fixtures only**: it started (its root ``agent.invocation-started`` is in the log)
  but was not scored, and it provably touched no live tool: its task is fail-closed (fixtured,
  ``onMiss`` not ``live``, not ``live-shadow``), or every call it made was answered from a
  fixture. It is run again from the start; the new attempt supersedes the partial one
  (:func:`wopeval.grading.views.collect_trials` keeps the later bracket of an unscored trial).
* **in flight, maybe live**: it may have reached a live tool (a live answer, or a call with no
  answer yet in a trial that may go live). It is never silently repeated: it is recorded as
  interrupted (``eval.scored`` with ``scoreLabel: "interrupted"``, score 0, then
  ``wopeval.trial-failed`` of kind ``interrupted`` saying why).
* **not started**: it runs as in a fresh run.

A re-run trial whose LLM user (``x-wopeval-user``, ``kind: "llm"``) had answered the agent
gets the answers the log holds (``reply`` and ``stop`` turns, in order): the new attempt's user
gives them again, without calling its model, while the agent's messages equal the logged ones
(:mod:`wopeval.engine.user_llm`), so the agent never gets a different answer to a turn it saw.

Spend already recorded (``agent.provider-usage`` costs, partial attempts included) is charged
to the run's cost meter before anything runs, so the ceilings stay exact across a resume.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from wopeval.events.store import EventStore
from wopeval.suite.models import AgentEvalSuite, Task
from wopeval.wire.events import (
    EvalScored,
    InvocationCompleted,
    ProviderUsage,
    RunEvent,
    ToolCalled,
    ToolReturned,
    TrialFailed,
    UserTurn,
)
from wopeval.wire.vocab import (
    ADAPTIVE_STOPPED,
    EVAL_COMPLETED,
    EVAL_SCORED,
    EVAL_STARTED,
    INVOCATION_STARTED,
    X_TASK_ID,
    X_TRIAL_INDEX,
)

__all__ = ["LABEL_INTERRUPTED", "ResumeState", "fail_closed", "interrupted_events", "scan"]

LABEL_INTERRUPTED = "interrupted"
PAGE = 1000
_FIXTURE_ONLY = frozenset({"served", "miss-failed"})
_TERMINAL = frozenset({"run.completed", "run.failed", "run.cancelled"})

Key = tuple[str, int]


@dataclass
class _InFlight:
    live: bool = False
    open_calls: set[str] = field(default_factory=set)
    answered: list[UserTurn] = field(default_factory=list)


@dataclass
class ResumeState:
    """What the log says about each planned trial of an interrupted run."""

    run_started: bool = False
    eval_started: bool = False
    eval_completed: bool = False
    terminal: bool = False
    scored: set[Key] = field(default_factory=set)
    rerun: set[Key] = field(default_factory=set)
    interrupted: dict[Key, str] = field(default_factory=dict)
    spent_usd: float = 0.0
    # Each trial's retries its log records (``x-wopeval-retry``): the policy goes on from them.
    retried: dict[Key, int] = field(default_factory=dict)
    # Each scored trial's pass, and the adaptive tasks whose stop the log records: an adaptive
    # task's sequential test goes on from them (engine/adaptive.py).
    passed: dict[Key, bool] = field(default_factory=dict)
    adaptive_stopped: set[str] = field(default_factory=set)
    # Each re-run trial's user turns answered before the interruption (``reply``, ``stop``).
    user_turns: dict[Key, list[UserTurn]] = field(default_factory=dict)

    def pending(self, suite: AgentEvalSuite) -> Iterator[tuple[int, int]]:
        """The ``(task index, trial index)`` pairs still to run, trial-major, lazily."""
        for trial_index in range(suite.trial_plan.effective_count):
            for task_index, task in enumerate(suite.tasks):
                key = (task.taskId, trial_index)
                if key not in self.scored and key not in self.interrupted:
                    yield task_index, trial_index


def fail_closed(task: Task, ignore_fixtures: bool) -> bool:
    """True when no call of this task's trials can reach a live tool (RFC 0244 §D): its
    fixtures or its world serve every call, and a miss fails closed."""
    fixtures = task.fixtures
    if ignore_fixtures or (fixtures is None and task.world is None):
        return False
    fixtured = task.world is not None or (fixtures is not None and fixtures.fixtured)
    return fixtured and (fixtures is None or fixtures.onMiss != "live")


class _Scanner:
    def __init__(self) -> None:
        self.state = ResumeState()
        self.roots: dict[str, Key] = {}
        self.in_flight: dict[Key, _InFlight] = {}

    def feed(self, event: RunEvent) -> None:
        state, kind = self.state, event.type
        if kind == "run.started":
            state.run_started = True
        elif kind == EVAL_STARTED:
            state.eval_started = True
        elif kind == EVAL_COMPLETED:
            state.eval_completed = True
        elif kind in _TERMINAL:
            state.terminal = True
        elif kind == INVOCATION_STARTED and isinstance(event.payload, dict):
            if X_TASK_ID in event.payload:
                payload = event.payload
                key = (str(payload[X_TASK_ID]), int(payload.get(X_TRIAL_INDEX) or 0))
                self.roots[event.eventId] = key
                self.in_flight[key] = _InFlight()
        elif kind == EVAL_SCORED:
            scored = event.typed
            assert isinstance(scored, EvalScored)
            key = (scored.taskId, scored.trialIndex or 0)
            state.scored.add(key)
            state.passed[key] = scored.passed
            self.in_flight.pop(key, None)
        elif kind == ADAPTIVE_STOPPED and isinstance(event.payload, dict):
            state.adaptive_stopped.add(str(event.payload.get("taskId")))
        else:
            self._trial_event(event)

    def _trial_event(self, event: RunEvent) -> None:
        payload = event.typed
        if isinstance(payload, ProviderUsage):
            self.state.spent_usd += payload.costEstimateUsd or 0.0
        key = self.roots.get(event.causationId or "")
        if isinstance(payload, InvocationCompleted) and payload.retry is not None and key:
            self.state.retried[key] = max(self.state.retried.get(key, 0), payload.retry.attempt)
        flight = self.in_flight.get(key) if key is not None else None
        if flight is None:
            return
        if isinstance(payload, ToolCalled):
            flight.open_calls.add(payload.callId)
        elif isinstance(payload, ToolReturned):
            flight.open_calls.discard(payload.callId)
            flight.live = flight.live or payload.fixture not in _FIXTURE_ONLY
        elif isinstance(payload, UserTurn) and payload.kind in ("reply", "stop"):
            flight.answered.append(payload)


async def scan(
    store: EventStore, run_id: str, suite: AgentEvalSuite, *, ignore_fixtures: bool
) -> ResumeState:
    """Read the run's log page by page and decide what a resume must do."""
    scanner = _Scanner()
    after = -1
    while page := await store.events(run_id, after, PAGE):
        for event in page:
            scanner.feed(event)
        after = page[-1].sequence
    tasks = {task.taskId: task for task in suite.tasks}
    state = scanner.state
    for key, flight in scanner.in_flight.items():
        task = tasks.get(key[0])
        if task is None:
            continue
        if fail_closed(task, ignore_fixtures) or not (flight.live or flight.open_calls):
            state.rerun.add(key)
            if flight.answered:
                state.user_turns[key] = flight.answered
        elif flight.live:
            state.interrupted[key] = "it had already called a live tool"
        else:
            state.interrupted[key] = "a tool call of it was unanswered and may have gone live"
    return state


def interrupted_events(
    key: Key, why: str, include_trial_index: bool
) -> tuple[EvalScored, TrialFailed]:
    """The ``eval.scored`` and ``wopeval.trial-failed`` recording an interrupted trial."""
    task_id, trial_index = key
    scored = EvalScored(
        taskId=task_id,
        score=0.0,
        passed=False,
        trialIndex=trial_index if include_trial_index else None,
        scoreLabel=LABEL_INTERRUPTED,
        evaluatorType="deterministic",
    )
    reason = TrialFailed(
        taskId=task_id,
        trialIndex=trial_index,
        kind="interrupted",
        message=f"interrupted and not re-run: {why} (re-running could repeat its effects)",
    )
    return scored, reason
