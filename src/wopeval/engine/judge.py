"""The pluggable judge for ``rubric`` tasks (RFC 0081 UQ 5).

A judge scores a trial's output against the task's weighted rubric and returns a score in
[0, 1]. Its score is recorded once on ``eval.scored`` and is a fact thereafter: re-grades and
replays re-read it, never re-judge. A judge reporting its own model usage records it *outside*
every trial bracket (no ``causationId``), so it counts towards ``totalCostUsd`` but is excluded
from the efficiency scalars (RFC 0244 §C).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from sqlalchemy import select

from wopeval.engine.agent import Usage, usage_payload
from wopeval.engine.sink import EventSink
from wopeval.errors import UserError
from wopeval.events.store import EventStore
from wopeval.events.tables import events, row_event
from wopeval.suite.models import Task
from wopeval.wire.events import ProviderUsage
from wopeval.wire.vocab import PROVIDER_USAGE


class Judge(Protocol):
    """Anything with an ``evaluator_type`` and an async ``score`` method."""

    @property
    def evaluator_type(self) -> Literal["llm_judge", "human", "deterministic"]: ...

    async def score(self, task: Task, output: Any, sink: EventSink, run_id: str) -> float: ...


class JudgeRequired(UserError):
    """A suite with rubric tasks was given no judge; never scored silently."""


# The ``nodeId`` of a simulated (LLM) user's ``provider.usage``: recorded outside every trial
# bracket like the judge's, by the same rule (engine/user_llm.py), and told apart from them here.
SIMULATED_USER_NODE = "x-wopeval-user"


async def record_judge_usage(sink: EventSink, run_id: str, usage: Usage) -> None:
    """Record a judge's model usage outside the trial brackets."""
    await sink.emit(run_id, usage_payload(usage))


@dataclass(frozen=True)
class JudgeSpend:
    """What a run's judge used: its model calls, their tokens and, when priced, their cost.

    It is the run's ``provider.usage`` outside every trial bracket but a simulated user's
    (:data:`SIMULATED_USER_NODE`): in ``totalCostUsd``, never in the agent's efficiency (RFC
    0244 §C). ``cost_usd`` is ``None`` when no call carried a cost (an unpriced judge).
    """

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None


def judge_spend(usages: Iterable[ProviderUsage]) -> JudgeSpend:
    """Sum the judge's usage events (costs by ``math.fsum``; unpriced calls add no cost)."""
    calls = tokens_in = tokens_out = 0
    costs: list[float] = []
    for usage in usages:
        if usage.nodeId == SIMULATED_USER_NODE:  # the simulated user's spend, not the judge's
            continue
        calls += 1
        tokens_in += usage.inputTokens
        tokens_out += usage.outputTokens
        if usage.costEstimateUsd is not None:
            costs.append(usage.costEstimateUsd)
    return JudgeSpend(calls, tokens_in, tokens_out, math.fsum(costs) if costs else None)


async def stored_judge_spend(store: EventStore, run_id: str) -> JudgeSpend:
    """:func:`judge_spend` of a stored run: its ``provider.usage`` events without a trial."""
    stmt = (
        select(events)
        .where(
            events.c.run_id == run_id,
            events.c.type == PROVIDER_USAGE,
            events.c.causation_id.is_(None),
        )
        .order_by(events.c.sequence)
    )
    typed = (row_event(row).typed for row in await store.read(stmt))
    return judge_spend(usage for usage in typed if isinstance(usage, ProviderUsage))
