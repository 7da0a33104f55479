"""The pluggable judge for ``rubric`` tasks (RFC 0081 UQ 5).

A judge scores a trial's output against the task's weighted rubric and returns a score in
[0, 1]. Its score is recorded once on ``eval.scored`` and is a fact thereafter: re-grades and
replays re-read it, never re-judge. A judge reporting its own model usage records it *outside*
every trial bracket (no ``causationId``), so it counts towards ``totalCostUsd`` but is excluded
from the efficiency scalars (RFC 0244 §C).
"""

from __future__ import annotations

from typing import Any, Literal, Protocol

from wopeval.engine.agent import Usage, usage_payload
from wopeval.engine.sink import EventSink
from wopeval.errors import UserError
from wopeval.suite.models import Task


class Judge(Protocol):
    """Anything with an ``evaluator_type`` and an async ``score`` method."""

    @property
    def evaluator_type(self) -> Literal["llm_judge", "human", "deterministic"]: ...

    async def score(self, task: Task, output: Any, sink: EventSink, run_id: str) -> float: ...


class JudgeRequired(UserError):
    """A suite with rubric tasks was given no judge; never scored silently."""


async def record_judge_usage(sink: EventSink, run_id: str, usage: Usage) -> None:
    """Record a judge's model usage outside the trial brackets."""
    await sink.emit(run_id, usage_payload(usage))
