"""What one run's trials share (:class:`TrialEnv`) and what one trial records
(:class:`TrialState`): its events, written through the run's sink in order, queued where the
sink queues (the store), and the first trial limit it went past."""

from __future__ import annotations

import logging
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from wopeval.engine.agent import AgentFn, TrialMemory
from wopeval.engine.budget import CostMeter
from wopeval.engine.copies import JsonCopies
from wopeval.engine.deadlines import TrialDeadlines
from wopeval.engine.fork_prefix import ForkPrefix
from wopeval.engine.gateway import ToolGateway
from wopeval.engine.judge import Judge
from wopeval.engine.registry import Registry
from wopeval.engine.retry import RetryBudget
from wopeval.engine.sink import EventSink
from wopeval.engine.user import UserSide
from wopeval.events.appends import Chain
from wopeval.events.ids import new_event_id
from wopeval.suite.models import Task
from wopeval.wire.events import Failure, Payload, RunEvent, UserTurn
from wopeval.wire.request import TrialLimits

__all__ = ["SETTLING_LIMIT", "TrialEnv", "TrialState", "new_id", "settle"]

log = logging.getLogger("wopeval.engine")
# Trials returned whose last events may still be queued; past this (or past twice the run's
# concurrency, when that is more: a whole wave of trials finishing together), a new trial waits.
SETTLING_LIMIT = 64


@dataclass
class TrialEnv:
    """What every trial of one run shares."""

    sink: EventSink
    run_id: str
    registry: Registry
    agent_id: str
    agent: AgentFn
    meter: CostMeter
    pass_score: float
    timeout_s: float = 300.0
    ignore_fixtures: bool = False
    include_trial_index: bool = False
    judge: Judge | None = None
    limits: TrialLimits = field(default_factory=TrialLimits)
    # A resume's: the user turns each interrupted trial's LLM user answered (engine/user_llm.py)
    resumed_turns: dict[tuple[str, int], list[UserTurn]] = field(default_factory=dict)
    # The run's infrastructure retry policy and what it spent (None: no retries)
    retries: RetryBudget | None = None
    # A forked run's prefix: its trial's first calls served from the original's log
    fork: ForkPrefix | None = None
    # Each trial's copies of the task inputs and fixture responses (their JSON texts kept)
    copies: JsonCopies = field(default_factory=JsonCopies, repr=False, compare=False)
    # Trials returned with their score (and reason) queued, not yet known committed: see settle
    settling: deque[TrialState] = field(default_factory=deque, repr=False, compare=False)
    settling_limit: int = SETTLING_LIMIT
    # Each trial's timeout (a watcher beside the run's workers cancels those past it)
    deadlines: TrialDeadlines = field(init=False, repr=False, compare=False)
    # The sink's ``emit_later`` (the store's), looked up once: None for a sink without one
    emit_later: Any = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.deadlines = TrialDeadlines(self.timeout_s)
        self.emit_later = getattr(self.sink, "emit_later", None)


async def settle(env: TrialEnv, *, wait: bool = True) -> None:
    """Wait until every trial that returned has its last events (score, reason) committed;
    raises what a write raised. A trial's score is queued, not awaited, so its worker goes on
    to the next trial while it commits (with that trial's first events: fewer, fuller commits).
    Each trial settles, without waiting, those committed already, and waits only when more than
    ``env.settling_limit`` are not (memory stays bounded); the run waits for the rest."""
    settling = env.settling
    while settling and (wait or settling[0].committed):  # they commit in the order they came
        await settling.popleft().settled()  # committed: no wait (raises what its write raised)
    while len(settling) > env.settling_limit:  # writes lag behind: wait, so memory stays bounded
        await settling.popleft().settled()


def new_id(prefix: str) -> str:
    """A call or invocation id, unique in the process (a ULID: no system call per id)."""
    return f"{prefix}-{new_event_id()}"


@dataclass
class TrialState:
    env: TrialEnv
    task: Task
    trial_index: int
    gateway: ToolGateway
    memory: TrialMemory
    events: list[RunEvent] = field(default_factory=list)
    root_event_id: str | None = None
    _queued: list[Any] = field(default_factory=list)  # QueuedEvent, not yet in ``events``
    # Its queued events stand or fall in order: its score is never written without them.
    _chain: Chain = field(default_factory=Chain)
    # The first trial limit it went past (a call, a tool result): it fails the trial.
    over_limit: Failure | None = None
    # It reached a live tool (a retry could repeat the tool's effects).
    went_live: bool = False
    # The task's simulated user's side of the conversation (None: the task has no user).
    user: UserSide | None = None

    async def before_live(self) -> None:
        """Awaited by the gateway right before a live tool is called: a resume must see the
        call committed before the tool does, and a retry must know it went live."""
        self.went_live = True
        await self.flush()

    def went_over(self, failure: Failure) -> None:
        if self.over_limit is None:
            self.over_limit = failure

    async def emit(self, payload: Payload) -> RunEvent:
        """Write ``payload`` through the sink's ``emit`` once everything recorded before it is
        committed; returns it committed."""
        await self.flush()
        event = await self.env.sink.emit(self.env.run_id, payload, causation_id=self.root_event_id)
        self.events.append(event)
        return event

    async def record(self, payload: Payload) -> str:
        """Record ``payload``; returns its event id. A sink with ``emit_later`` (the store)
        queues it, committed in order with the trial's others (a chain: none is written once
        one before it was not), waited for at the next :meth:`flush`; others write it now. A
        trial flushes before anything a resume must see durable first: a live tool call, a
        usage report; its score follows its events in the chain."""
        later = self.env.emit_later
        if later is None:
            sink = self.env.sink
            event = await sink.emit(self.env.run_id, payload, causation_id=self.root_event_id)
            self.events.append(event)
            return event.eventId
        queued = later(self.env.run_id, payload, causation_id=self.root_event_id, chain=self._chain)
        self._queued.append(queued)
        return str(queued.event_id)

    def known_events(self) -> list[RunEvent]:
        """What the trial recorded, committed or still queued (in order), to grade it by."""
        return self.events + [queued.known() for queued in self._queued]

    @property
    def committed(self) -> bool:
        """Every event it recorded is committed (or failed to be): :meth:`flush` won't wait.
        Appends settle in the order they were queued, so its last one tells."""
        return not self._queued or self._queued[-1].settled

    async def flush(self) -> None:
        """Wait until every recorded event is committed; they join ``events`` in order. The
        first that failed raises (it and those after it stay queued: a later flush raises
        again)."""
        queued = self._queued
        if not queued:
            return
        await queued[-1].wait()  # those before it are settled no later
        for index, item in enumerate(queued):
            try:
                event = item.result()
            except BaseException:
                del queued[:index]
                raise
            self.events.append(event)
        queued.clear()

    async def settled(self) -> None:
        """:meth:`flush` at the trial's end: its events are not kept (nothing reads them)."""
        queued = self._queued
        if not queued:
            return
        last = queued[-1]
        if not last.settled:
            await last.wait()  # those before it are settled no later
        for item in queued:
            if item.error is not None:
                raise item.error
        queued.clear()

    @property
    def ids(self) -> str:
        return f"run {self.env.run_id} task {self.task.taskId} trial {self.trial_index}"

    @property
    def log(self) -> logging.LoggerAdapter[logging.Logger]:
        """The engine's logger with the run, task and trial ids on every record."""
        extra = {
            "runId": self.env.run_id,
            "taskId": self.task.taskId,
            "trialIndex": self.trial_index,
        }
        return logging.LoggerAdapter(log, extra)
