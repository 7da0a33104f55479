"""Which ``(task, trialIndex)`` pairs a shard runs, and the group its shards belong to (pure).

``wopeval run --shard i/N`` runs shard ``i`` of ``N``, **0-based** (``0 ≤ i < N``): Kubernetes
Indexed Jobs hand each pod ``JOB_COMPLETION_INDEX`` = 0 … N-1, so ``--shard
"$JOB_COMPLETION_INDEX/N"`` needs no shell arithmetic; a CI matrix or a Slurm array is told
``0 … N-1`` the same way (``--array=0-3`` with ``--shard "$SLURM_ARRAY_TASK_ID/4"``). A 1-based
``N/N`` is refused, naming ``--shard`` — never silently run as another slice.

The slice: number every planned pair task-major, ``p = taskIndex · trialCount + trialIndex``
(the suite's task order), and shard ``i`` runs the pairs with ``p mod N = i``. The same suite and
``N`` give the same slices on every machine; the shards' sizes differ by at most one; a task's
trials are spread over consecutive shards (one slow task does not make one slow shard); with one
trial per task the tasks are dealt round-robin. The shard runs its pairs in the engine's usual
trial-major order, as a lazy filter: nothing is materialised.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass, fields
from typing import Any

from wopeval.engine.resume import ResumeState
from wopeval.errors import UserError
from wopeval.events.tables import dumps_json
from wopeval.suite.digest import canonical_digest
from wopeval.suite.models import AgentEvalSuite
from wopeval.wire.request import GROUP_PATTERN, RunRequest, ShardRequest

__all__ = [
    "SETTINGS_FIELDS",
    "ShardSpecError",
    "ShardState",
    "derived_group",
    "in_shard",
    "parse_shard",
    "position",
    "shard_size",
    "shard_state",
]

# The request fields every shard of a group must share: they change what a trial does or how
# the group is graded. Where and how fast a shard runs (concurrency, executor) and its labels
# (owner, tags, metadata) may differ between machines.
SETTINGS_FIELDS = (
    "agentId",
    "trialTimeoutS",
    "hostMaxCostUsd",
    "evalModes",
    "baselineRunId",
    "fixtureRuns",
    "regressionMethod",
    "alpha",
    "regressionVerdict",
)
_SPEC = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


class ShardSpecError(UserError):
    """A ``--shard`` or ``--group`` that names no shard."""

    field = "shard"


def parse_shard(spec: str) -> tuple[int, int]:
    """``"i/N"`` → ``(i, N)`` with ``0 ≤ i < N``; anything else is refused naming ``--shard``."""
    match = _SPEC.fullmatch(spec)
    if match is None:
        raise ShardSpecError(f"--shard: {spec!r} is not i/N (e.g. 0/4: shard 0 of 4, 0-based)")
    index, count = int(match.group(1)), int(match.group(2))
    if count < 1:
        raise ShardSpecError(f"--shard: {spec!r}: N must be at least 1")
    if index >= count:
        hint = f" (1-based? shard {index} of {count} is {index - 1}/{count})" if index else ""
        raise ShardSpecError(
            f"--shard: {spec!r}: i is 0-based, 0 ≤ i < {count} "
            f"(Kubernetes JOB_COMPLETION_INDEX){hint}"
        )
    return index, count


def check_group(group: str) -> str:
    if not re.fullmatch(GROUP_PATTERN, group):
        raise ShardSpecError(
            f"--group: {group!r} is not 1-128 characters of letters, digits and . _ ~ : -"
        )
    return group


def settings_of_request(request: RunRequest) -> dict[str, Any]:
    """The shared settings of a request (:data:`SETTINGS_FIELDS`), as JSON values."""
    dumped = request.model_dump(mode="json")
    return {name: dumped[name] for name in SETTINGS_FIELDS}


def derived_group(document: dict[str, Any], request: RunRequest, count: int) -> str:
    """The group of shards run without ``--group``: from the suite digest, the shared
    settings and N, so every machine running the same suite the same way agrees on it."""
    material = dumps_json(
        {"suite": canonical_digest(document), "settings": settings_of_request(request), "n": count}
    )
    return "g-" + hashlib.sha256(material.encode()).hexdigest()[:24]


def position(suite: AgentEvalSuite, task_index: int, trial_index: int) -> int:
    """The pair's number in the task-major order the slices are cut from."""
    return task_index * suite.trial_plan.effective_count + trial_index


def in_shard(suite: AgentEvalSuite, shard: ShardRequest, task_index: int, trial_index: int) -> bool:
    return position(suite, task_index, trial_index) % shard.count == shard.index


def shard_size(suite: AgentEvalSuite, index: int, count: int) -> int:
    """How many pairs shard ``index`` of ``count`` runs."""
    total = len(suite.tasks) * suite.trial_plan.effective_count
    return max(0, (total - index + count - 1) // count)


@dataclass
class ShardState(ResumeState):
    """A :class:`ResumeState` (fresh, or read from a shard's log) whose pending pairs are only
    the shard's own: the engine takes its pairs from :meth:`pending`, so it runs the slice."""

    shard: ShardRequest | None = None

    def pending(self, suite: AgentEvalSuite) -> Iterator[tuple[int, int]]:
        shard = self.shard
        for task_index, trial_index in super().pending(suite):
            if shard is None or in_shard(suite, shard, task_index, trial_index):
                yield task_index, trial_index


def shard_state(shard: ShardRequest, resume: ResumeState | None) -> ShardState:
    """The engine's view of a shard: its slice, on top of what a resume found (if any)."""
    if resume is None:
        return ShardState(shard=shard)
    known = {f.name: getattr(resume, f.name) for f in fields(ResumeState)}
    return ShardState(**known, shard=shard)
