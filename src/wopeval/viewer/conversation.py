"""The trial page's conversation and state-diff views (pure; the tenant's content).

A conversation is read from the trial's own events in log order: each ``wopeval.user-turn``
closes a turn, whose tool calls are those the agent made since the previous message, so the
page shows what the agent did, what it said and how the user answered (a reply, the user's
stop, a miss, ``max-turns``, or no answer after the end) in the order it happened. The calls
after the last message and the final output end it.

The state diff sets a task's ``x-wopeval-finalState`` against the trial's recorded final state
at each JSON Pointer where they differ (:func:`~wopeval.grading.world_state.state_differences`,
the grader's own walk), the first of them the one the trial's reason names.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from wopeval.grading.argdiff import ABSENT
from wopeval.grading.views import TrialView
from wopeval.grading.world_state import state_differences, state_matches
from wopeval.suite.models import Task
from wopeval.wire.events import Decided, RunEvent, ToolCalled, ToolReturned, UserTurn

__all__ = ["Conversation", "StateDiff", "StateRow", "Step", "Turn", "conversation_of",
           "state_diff_of"]  # fmt: skip


@dataclass
class Step:
    """One tool call of the trial and its answer (``status`` None: it never returned)."""

    sequence: int
    tool: str
    agent_id: str
    inputs: Any
    status: str | None = None
    answer: Any = None
    fixture: str | None = None


@dataclass(frozen=True)
class Turn:
    """One message the agent sent the user, the calls it made before it, and the answer."""

    index: int
    sequence: int
    steps: tuple[Step, ...]
    message: Any
    kind: str  # reply, stop, miss, max-turns, ended
    reply: Any = None
    reply_index: int | None = None

    @property
    def answered(self) -> bool:
        return self.kind in ("reply", "stop")


@dataclass
class Conversation:
    turns: list[Turn] = field(default_factory=list)
    tail: list[Step] = field(default_factory=list)  # the calls after the last message
    output: Any = None
    has_output: bool = False

    @property
    def ended_by(self) -> str | None:
        """How the conversation ended on the user's side (stop, miss, max-turns), if it did."""
        return next((t.kind for t in self.turns if t.kind in ("stop", "miss", "max-turns")), None)


def conversation_of(events: Iterable[RunEvent], view: TrialView | None) -> Conversation | None:
    """The trial's conversation, or None when it sent the user no message."""
    found = Conversation()
    steps: list[Step] = []
    by_call: dict[str, Step] = {}
    for event in events:
        payload = event.typed
        if isinstance(payload, ToolCalled):
            step = Step(event.sequence, payload.toolName, payload.agentId, payload.inputs)
            by_call[payload.callId] = step
            steps.append(step)
        elif isinstance(payload, ToolReturned) and payload.callId in by_call:
            step = by_call.pop(payload.callId)
            step.status = payload.status
            error = payload.error
            step.answer = error.model_dump(exclude_none=True) if error else payload.outcome
            step.fixture = payload.fixture
        elif isinstance(payload, UserTurn):
            found.turns.append(Turn(payload.turn, event.sequence, tuple(steps), payload.message,
                                    payload.kind, payload.reply, payload.replyIndex))  # fmt: skip
            steps = []
        elif isinstance(payload, Decided) and view and payload.agentId == view.root_agent_id:
            found.output, found.has_output = payload.decision, True
    if not found.turns:
        return None
    found.tail = steps
    return found


@dataclass(frozen=True)
class StateRow:
    pointer: str
    expected: Any
    observed: Any
    expected_absent: bool
    observed_absent: bool


@dataclass(frozen=True)
class StateDiff:
    """The asserted final state against the recorded one (``recorded`` False: none was)."""

    match: str
    expected: Any
    recorded: bool
    final: Any
    matched: bool
    rows: tuple[StateRow, ...]


def state_diff_of(task: Task, view: TrialView | None) -> StateDiff | None:
    """None for a task that asserts no final state, or a trial that has not run."""
    final = task.expected.final_state
    if final is None or view is None or not view.ran:
        return None
    if not view.has_world_state:
        return StateDiff(final.match, final.state, False, None, False, ())
    rows = tuple(
        StateRow(d.pointer, None if d.expected is ABSENT else d.expected,
                 None if d.observed is ABSENT else d.observed,
                 d.expected is ABSENT, d.observed is ABSENT)
        for d in state_differences(final, view.world_state)
    )  # fmt: skip
    matched = state_matches(final, view.world_state)
    return StateDiff(final.match, final.state, True, view.world_state, matched, rows)
