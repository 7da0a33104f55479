"""Retry a trial that failed for ``infrastructure``, and only such a trial.

Re-rolling a trial because it scored low inflates pass rates; re-rolling it because a component
under it failed (its model server, its MCP server, the machine that ran its process) does not,
as long as the component's failure does not depend on how the agent was doing. So the decision,
:func:`should_retry`, reads the label the attempt's ``agent.invocation-completed`` records
(``x-wopeval-error``), never its score, output or pass/fail: it runs before the attempt is
graded, and a retried attempt is never graded at all. Its events stay in the log, marked with
``x-wopeval-retry`` (the attempt and the component's class, :data:`RetryCause`); the next
attempt's bracket supersedes it as a resumed run's does (wopeval.grading.views), so the grader
scores each ``(taskId, trialIndex)`` once, by its last attempt.

An attempt that reached a live tool is not retried: running it again could repeat the tool's
effects (the rule a resume keeps: wopeval.engine.resume). Nor is a trial whose judge failed:
the agent's attempt itself did not.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from wopeval.errors import UserError
from wopeval.wire.events import Failure
from wopeval.wire.payloads import RetryMark
from wopeval.wire.request import RetryPolicy
from wopeval.wire.vocab import INFRASTRUCTURE_LABEL, RetryCause

__all__ = ["RetriesNeedLocal", "RetryBudget", "check_retries", "retry_cause", "should_retry"]

# The component behind an infrastructure failure, by the recorded exception type.
_CAUSES: dict[str, RetryCause] = {
    "ModelUnavailable": "model-server",
    "McpServerDied": "mcp-server",
    "CommandDied": "agent-process",
    "TimeoutError": "component-timeout",  # the trial's timeout struck while it waited on one
}


class RetriesNeedLocal(UserError):
    """Retries were asked of a run whose trials run elsewhere (a Ray worker's budget would be
    its own, not the run's): refused before anything is recorded."""


def check_retries(policy: RetryPolicy | None, executor: str) -> None:
    if policy is not None and executor != "local":
        raise RetriesNeedLocal(
            f"retryInfrastructure: retries run with the local executor only, not {executor!r}"
        )


def should_retry(
    label: str | None, retries: int, max_retries: int, budget_left: int | None, went_live: bool
) -> bool:
    """Retry an attempt recorded with error ``label`` after ``retries`` retries of its trial?
    Only an ``infrastructure`` label, within both bounds, and never one that went live."""
    if label != INFRASTRUCTURE_LABEL or went_live:
        return False
    return retries < max_retries and (budget_left is None or budget_left > 0)


def retry_cause(failure: Failure | None) -> RetryCause:
    """The class of component an infrastructure failure names (content-free)."""
    kind = failure.exceptionType if failure is not None else None
    return _CAUSES.get(kind or "", "other")


@dataclass
class RetryBudget:
    """A run's retry policy and what it has spent: the run-wide budget, and each trial's
    retries so far (a resumed run starts from those its log records)."""

    policy: RetryPolicy
    used: int = 0
    done: dict[tuple[str, int], int] = field(default_factory=dict)

    def take(
        self, key: tuple[str, int], label: str | None, failure: Failure | None, went_live: bool
    ) -> RetryMark | None:
        """The mark of an attempt to retry (its retry counted), or None: it stands."""
        retries = self.done.get(key, 0)
        budget = self.policy.budget
        left = None if budget is None else budget - self.used
        if not should_retry(label, retries, self.policy.maxRetries, left, went_live):
            return None
        self.used += 1
        self.done[key] = retries + 1
        return RetryMark(attempt=retries + 1, cause=retry_cause(failure))

    def delay_s(self, run_id: str, key: tuple[str, int]) -> float:
        """How long to wait before the trial's next attempt: exponential in its retries so
        far, at most ``maxBackoffS``, the upper half jittered by a generator seeded by the run,
        trial and retry (so reruns of a test wait alike and trials do not retry in step)."""
        retries = self.done.get(key, 1)
        policy = self.policy
        ceiling = min(policy.maxBackoffS, policy.backoffS * 2.0 ** min(retries - 1, 32))
        jitter = random.Random(f"{run_id}/{key[0]}/{key[1]}/{retries}").random()
        return ceiling / 2 * (1 + jitter)
