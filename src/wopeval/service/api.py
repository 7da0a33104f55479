"""The library entry point: evaluate an agent on a suite in one call (through the run service)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from wopeval.engine.agent import AgentFn
from wopeval.engine.judge import Judge
from wopeval.engine.registry import Registry
from wopeval.engine.run import RunSettings
from wopeval.errors import RunError
from wopeval.events.store import EventStore
from wopeval.grading.gate import DEFAULT_GATE, Bounds, GateVerdict, decide, suite_bounds
from wopeval.service.runs import RunService
from wopeval.suite import load_suite
from wopeval.suite.models import AgentEvalSuite
from wopeval.wire.summary import EvalSummary


@dataclass(frozen=True)
class EvalResult:
    run_id: str
    summary: EvalSummary
    gate: str = DEFAULT_GATE  # the run's gate (RunSettings.gate)
    bounds: Bounds | None = None  # what a lower-bound gate compares: the suite's passScore

    @property
    def verdict(self) -> GateVerdict:
        """The run's gate's verdict: what ``wopeval run`` exits by and every output shows."""
        return decide(self.summary, self.gate, self.bounds)

    @property
    def passed(self) -> bool:
        return self.verdict.passed


async def evaluate(
    suite: AgentEvalSuite | str | Path,
    agent: str | AgentFn,
    *,
    agent_id: str | None = None,
    store: str | EventStore | None = None,
    settings: RunSettings | None = None,
    registry: Registry | None = None,
    judge: Judge | None = None,
) -> EvalResult:
    """Run every task × trial of ``suite`` against ``agent`` and return the stored summary.

    ``agent`` is a registered id / import path, or an async callable (registered under
    ``agent_id``, default ``"local.agent"``). ``store`` is a URL/path (default: the SQLite file
    ``./.wopeval/wopeval.db`` or ``$WOPEVAL_STORE``) or an open :class:`EventStore`. Everything
    a run needs (the agent, a judge for rubric tasks, a usable baseline) is checked before
    anything is recorded: a :class:`~wopeval.errors.UserError` says what is wrong.
    """
    loaded = suite if isinstance(suite, AgentEvalSuite) else load_suite(suite)
    registry = registry or Registry()
    if isinstance(agent, str):
        chosen = agent
    else:
        chosen = agent_id or "local.agent"
        registry.register_agent(chosen, agent)
    opened = store if isinstance(store, EventStore) else await EventStore.open(store)
    try:
        service = RunService(opened, registry, judge)
        settings = settings or RunSettings()
        plan = await service.plan(loaded, chosen, settings)
        record, summary = await service.run(plan)
        if summary is None:
            raise RunError(f"run {record.run_id} did not complete")
        bounds = suite_bounds(loaded, settings.ci_level)
        return EvalResult(record.run_id, summary, gate=settings.gate, bounds=bounds)
    finally:
        if not isinstance(store, EventStore):
            await opened.close()
