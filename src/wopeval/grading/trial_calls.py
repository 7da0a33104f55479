"""One stored trial's tool calls, each with its answer, read back from a run's log (pure).

``read_trial_calls(events, task_id, trial_index)`` is what ``wopeval fork``
(:mod:`wopeval.service.trial_record`) and ``wopeval promote`` (:mod:`wopeval.exports.promote`)
start from: the trial's view as grading reads it (:class:`~wopeval.grading.views.TrialView`),
the trial indexes of the task the log holds, and the calls of the trial's last attempt (a trial
a resume or an infrastructure retry re-ran keeps its last attempt's, as grading does), in the
order they were recorded.

A call is paired with its answer as grading pairs them (:mod:`wopeval.grading.views`): each
``agent.tool-called`` is a call, and an ``agent.tool-returned`` answers the latest unanswered call
of its ``callId``. :attr:`TrialCall.gateway` is False for a call the agent's adapter refused
before it reached the tool gateway (no fixture marker on its result);
:attr:`TrialCall.result_captured` is False when the log holds no result for it (no
``agent.tool-returned``, a success whose ``outcome`` was left out: a content-free import, or a
tool error without its error).

``events`` may be a paged reader of a stored log (:func:`wopeval.service.runs.fold_log`). A log
wopeval writes or imports is read once, holding only the chosen trial's calls. A log that touches
a closed trial again is read a second time with every view kept (as
:func:`~wopeval.grading.views.collect_trials` reads it); when the chosen trial's root carries no
wopeval markers (a log attributed by position), its calls are read in one more pass.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from wopeval.grading.views import TrialCollector, TrialView, collect_trials
from wopeval.wire.events import InvocationStarted, RunEvent, ToolCalled, ToolReturned
from wopeval.wire.vocab import FixtureOutcome

__all__ = ["TrialCall", "TrialCalls", "read_trial_calls"]


@dataclass(frozen=True)
class TrialCall:
    """One ``agent.tool-called`` of the trial (``index``: its 0-based position among the
    trial's calls) and the ``agent.tool-returned`` that answered it, if any."""

    index: int
    called: ToolCalled
    returned: ToolReturned | None = None
    result_captured: bool = False

    @property
    def tool(self) -> str:
        return self.called.toolName

    @property
    def args(self) -> Any:
        return self.called.inputs

    @property
    def agent_id(self) -> str:
        return self.called.agentId

    @property
    def answered(self) -> bool:
        """An ``agent.tool-returned`` was recorded for it."""
        return self.returned is not None

    @property
    def ok(self) -> bool:
        return self.returned is not None and self.returned.status == "ok"

    @property
    def outcome(self) -> Any:
        """The recorded result of a success (None otherwise)."""
        return self.returned.outcome if self.returned is not None and self.ok else None

    @property
    def error_code(self) -> str | None:
        error = self.returned.error if self.returned is not None and not self.ok else None
        return error.code if error is not None else None

    @property
    def error_message(self) -> str | None:
        error = self.returned.error if self.returned is not None and not self.ok else None
        return error.message if error is not None else None

    @property
    def fixture(self) -> FixtureOutcome | None:
        """How the gateway served it (None: it never did)."""
        return self.returned.fixture if self.returned is not None else None

    @property
    def fixture_index(self) -> int | None:
        return self.returned.fixture_index if self.returned is not None else None

    @property
    def gateway(self) -> bool:
        """It reached the tool gateway (a fixture, a live tool or a fail-closed miss)."""
        return self.fixture is not None


@dataclass(frozen=True)
class TrialCalls:
    """What the log holds of one trial: its view (``None``: it is not in the log), the calls of
    its last attempt in call order, the indexes of the task's trials in the log (``indexes``)
    and of those that ran (``ran``: a root invocation), and how many spans of an imported trace
    were cut short (``x-wopeval-traceIncomplete`` on the trial's root)."""

    view: TrialView | None
    calls: tuple[TrialCall, ...]
    indexes: tuple[int, ...]
    ran: tuple[int, ...]
    incomplete: int = 0


class _Attempts:
    """The calls of each attempt (root event id) of one trial, in call order."""

    def __init__(self) -> None:
        self.calls: dict[str, list[TrialCall]] = {}
        self.open: dict[str, dict[str, int]] = {}
        self.incomplete: dict[str, int] = {}

    def start(self, root: str, incomplete: int | None) -> None:
        self.calls[root] = []
        self.open[root] = {}
        self.incomplete[root] = incomplete or 0

    def add(self, root: str, event: RunEvent) -> None:
        payload = event.typed
        calls = self.calls[root]
        if isinstance(payload, ToolCalled):
            self.open[root][payload.callId] = len(calls)
            calls.append(TrialCall(len(calls), payload))
        elif isinstance(payload, ToolReturned):
            position = self.open[root].pop(payload.callId, None)
            if position is not None:
                ok = payload.status == "ok"  # the payload validated as a ToolReturned: a dict
                captured = "outcome" in event.payload if ok else payload.error is not None
                calls[position] = replace(
                    calls[position], returned=payload, result_captured=captured
                )


class _Marked(_Attempts):
    """Every attempt of the trial ``key`` whose root carries wopeval's trial markers."""

    def __init__(self, key: tuple[str, int]) -> None:
        super().__init__()
        self.key = key

    def feed(self, event: RunEvent) -> None:
        payload = event.typed
        if isinstance(payload, InvocationStarted):
            if (payload.task_id, payload.trial_index or 0) == self.key:
                self.start(event.eventId, payload.trace_incomplete)
        else:
            root = event.causationId
            if root is not None and root in self.calls:
                self.add(root, event)


def _attempt(events: Iterable[RunEvent], root: str) -> _Attempts:
    """The calls caused by ``root``, read again (a root attributed by position)."""
    attempt = _Attempts()
    attempt.start(root, None)
    for event in events:
        if event.eventId == root and isinstance(event.typed, InvocationStarted):
            attempt.incomplete[root] = event.typed.trace_incomplete or 0
        elif event.causationId == root:
            attempt.add(root, event)
    return attempt


def read_trial_calls(events: Iterable[RunEvent], task_id: str, trial_index: int) -> TrialCalls:
    """The stored trial ``(task_id, trial_index)`` of the log ``events``."""
    attempts = _Marked((task_id, trial_index))
    found: list[TrialView] = []
    indexes: dict[int, bool] = {}

    def keep(view: TrialView) -> None:
        if view.task_id != task_id:
            return
        indexes[view.trial_index] = view.ran
        if view.trial_index == trial_index:
            found[:] = [view]

    collector = TrialCollector(keep)
    for event in events:
        collector.feed(event)
        attempts.feed(event)
    collector.finish()
    if collector.anomaly is not None:
        found.clear()
        indexes.clear()
        for view in collect_trials(events).values():
            keep(view)
    chosen = found[0] if found else None
    root = chosen.root_event_id if chosen is not None else None
    held: _Attempts = attempts
    if root is not None and root not in attempts.calls:
        held = _attempt(events, root)
    calls = tuple(held.calls[root]) if root is not None else ()
    return TrialCalls(
        view=chosen,
        calls=calls,
        indexes=tuple(sorted(indexes)),
        ran=tuple(sorted(i for i, ran in indexes.items() if ran)),
        incomplete=held.incomplete[root] if root is not None else 0,
    )
