"""Merge the shards of a run group into one graded run (``wopeval merge``; docs/distributed.md).

Shards are ordinary eval runs whose request carries ``shard: {group, index, count}``
(:mod:`wopeval.service.slices` says which pairs each one runs). They may be recorded in one
store (a shared PostgreSQL) or each in its own (a SQLite file per machine). Merging them:

1. **checks**, before anything is written: every shard of ``0 … N-1`` is there once and
   completed (else refused, unless ``allow_partial``), every shard ran the same suite (digest)
   and the same settings (:data:`~wopeval.service.slices.SETTINGS_FIELDS`), and, reading each
   log once in pages, every ``eval.scored`` is of a pair of its own shard's slice, scored once;
2. **records** a new eval run in the target store (``service.store``) with the suite document
   and the shared request (``merged: {group, count, runs}`` in place of ``shard``) whose log is
   ``run.started``, ``eval.started``, then every shard's trial events in shard order (each
   shard's in its own sequence order, keeping ``eventId``, ``timestamp``, ``causationId``,
   ``nodeId``; the store re-sequences them), then ``eval.completed`` and ``run.completed``;
3. **grades** that log with the one summary path (:func:`wopeval.service.runs.summarize`), so
   ``wopeval grade`` of the merged run reproduces its summary (invariant 1), and the summary
   equals that of an unsharded run of the same trials: grading reads trials by
   ``(taskId, trialIndex)`` and sums exactly, whatever the order of trials in the log.

With ``allow_partial`` a missing shard, or an unfinished one, is merged for what it holds: a
trial with no ``eval.scored`` is left out (an unfinished attempt's events too) and counts as
failed, score 0, as grading counts every planned trial missing from a log. Logs are read in
pages and appended in bounded windows: memory does not grow with the number of trials (one bit
per planned pair, and the attempts unfinished when a shard stopped).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, replace

import anyio

from wopeval.engine.adaptive import check_adaptive
from wopeval.engine.distributed import record_remote_trial
from wopeval.engine.run import eval_completed, start_payloads
from wopeval.errors import UserError
from wopeval.events.ids import new_run_id, utc_now
from wopeval.events.store import EventStore, RunRecord
from wopeval.service.runs import RunPlan, RunService, settings_of, summarize
from wopeval.service.slices import (
    SETTINGS_FIELDS,
    derived_group,
    position,
    settings_of_request,
)
from wopeval.suite import parse_suite
from wopeval.suite.digest import canonical_digest
from wopeval.suite.models import AgentEvalSuite
from wopeval.wire.events import (
    ErrorObject,
    EvalScored,
    RunCompleted,
    RunEvent,
    RunFailed,
)
from wopeval.wire.request import MergedShards, RunRequest, ShardRequest
from wopeval.wire.summary import EvalSummary
from wopeval.wire.vocab import (
    EVAL_COMPLETED,
    EVAL_SCORED,
    EVAL_STARTED,
    INTERNAL_ERROR_CODE,
    INVOCATION_STARTED,
    RUN_STARTED,
    TERMINAL_TYPES,
    X_TASK_ID,
    X_TRIAL_INDEX,
)

__all__ = [
    "Merged",
    "ShardMismatch",
    "ShardRun",
    "ShardsIncomplete",
    "find_shards",
    "merge_shards",
    "plan_shard",
]

PAGE = 1000
_RUN_LEVEL = frozenset({RUN_STARTED, EVAL_STARTED, EVAL_COMPLETED, *TERMINAL_TYPES})


class ShardMismatch(UserError):
    """A shard of the group ran another suite or other settings, or scored a pair not its own."""

    field = "shard"


class ShardsIncomplete(UserError):
    """A shard is missing, recorded twice or unfinished (and ``allow_partial`` was not given)."""

    field = "shard"


@dataclass(frozen=True)
class ShardRun:
    """One shard's run, found in one of the source stores."""

    store: EventStore
    run_id: str
    shard: ShardRequest
    request: RunRequest
    status: str = ""

    @property
    def name(self) -> str:
        return f"shard {self.shard.index} (run {self.run_id})"


@dataclass(frozen=True)
class Merged:
    """The merged run, its summary, and what went into it."""

    record: RunRecord
    summary: EvalSummary
    shards: list[ShardRun | None]
    missing_trials: int
    partial: bool

    @property
    def missing_shards(self) -> list[int]:
        return [i for i, s in enumerate(self.shards) if s is None]


async def find_shards(
    stores: Sequence[EventStore], group: str, *, exclude: Sequence[str] = ()
) -> list[ShardRun]:
    """Every shard run of ``group`` in ``stores`` (the same store listed twice counts once)."""
    found: list[ShardRun] = []
    seen: set[int] = set()
    left_out: set[str] = set()
    for store in stores:
        if id(store) in seen:
            continue
        seen.add(id(store))
        for run_id, stored in await store.group_members(group):
            request = RunRequest.model_validate(stored)
            if request.shard is None:
                continue  # a merged run of the group
            if run_id in exclude:
                left_out.add(run_id)  # left out by the caller
                continue
            record = await store.get_run(run_id)
            status = record.status if record is not None else "missing"
            found.append(ShardRun(store, run_id, request.shard, request, status))
    unknown = [run_id for run_id in exclude if run_id not in left_out]
    if unknown:
        raise UserError(
            f"exclude: {', '.join(unknown)} is no shard run of group {group!r} in the given "
            "stores (nothing was left out)"
        )
    return sorted(found, key=lambda s: (s.shard.index, s.run_id))


def _by_index(found: list[ShardRun], group: str, allow_partial: bool) -> list[ShardRun | None]:
    """The shards by index, refusing a wrong count, duplicates and (unless told) gaps."""
    if not found:
        raise ShardsIncomplete(f"group: no shard of run group {group!r} is in the given stores")
    first = found[0]
    for shard in found:
        if shard.shard.count != first.shard.count:
            raise ShardMismatch(
                f"{shard.name}: shard.count is {shard.shard.count}, "
                f"{first.name} has {first.shard.count}"
            )
        if shard.run_id.split("/")[0] != first.run_id.split("/")[0]:
            raise ShardMismatch(f"{shard.name}: tenant differs from {first.name}'s")
    slots: list[ShardRun | None] = [None] * first.shard.count
    for shard in found:
        other = slots[shard.shard.index]
        if other is not None:
            raise ShardsIncomplete(
                f"shard {shard.shard.index} of group {group!r} is recorded twice: runs "
                f"{other.run_id} ({other.status}) and {shard.run_id} ({shard.status}); leave "
                "one out (--exclude RUN), or give each sharded run its own --group"
            )
        slots[shard.shard.index] = shard
    if not allow_partial:
        missing = [i for i, s in enumerate(slots) if s is None]
        if missing:
            raise ShardsIncomplete(
                f"shard {', '.join(map(str, missing))} of group {group!r} "
                f"(of {first.shard.count}) is in none of the given stores "
                "(pass every shard's --store, or --allow-partial to count its trials as failed)"
            )
        for shard in found:
            if shard.status != "completed":
                raise ShardsIncomplete(
                    f"{shard.name} is {shard.status}: finish it (wopeval run --resume "
                    f"{shard.run_id}), or pass --allow-partial to count its unscored trials "
                    "as failed"
                )
    return slots


async def _check_same(shards: list[ShardRun]) -> tuple[RunRecord, AgentEvalSuite]:
    """Every shard ran the reference's suite and settings; the reference record and suite."""
    reference = shards[0]
    ref_record = await reference.store.get_run(reference.run_id)
    assert ref_record is not None
    ref_digest = canonical_digest(ref_record.suite_document)
    ref_settings = settings_of_request(reference.request)
    for shard in shards[1:]:
        record = await shard.store.get_run(shard.run_id)
        assert record is not None
        digest = canonical_digest(record.suite_document)
        if digest != ref_digest:
            raise ShardMismatch(
                f"{shard.name}: its suite differs from {reference.name}'s "
                f"({record.suite_id}@{record.suite_version} vs "
                f"{ref_record.suite_id}@{ref_record.suite_version}; "
                f"suite digest {digest[:12]}… ≠ {ref_digest[:12]}…)"
            )
        settings = settings_of_request(shard.request)
        for name in SETTINGS_FIELDS:
            if settings[name] != ref_settings[name]:
                raise ShardMismatch(
                    f"{shard.name}: {name} is {settings[name]!r}, "
                    f"{reference.name} has {ref_settings[name]!r}"
                )
        if shard.request.gate != reference.request.gate:  # not in the derived group's digest
            raise ShardMismatch(
                f"{shard.name}: gate is {shard.request.gate!r}, "
                f"{reference.name} has {reference.request.gate!r}"
            )
    suite = parse_suite(ref_record.suite_document, source=f"run {reference.run_id}")
    return ref_record, suite


async def _each_page(store: EventStore, run_id: str) -> AsyncIterator[list[RunEvent]]:
    after = -1
    while page := await store.events(run_id, after, PAGE):
        yield page
        after = page[-1].sequence


def _root_key(event: RunEvent) -> tuple[str, int] | None:
    payload = event.payload
    if event.type != INVOCATION_STARTED or not isinstance(payload, dict):
        return None
    if X_TASK_ID not in payload:
        return None
    return str(payload[X_TASK_ID]), int(payload.get(X_TRIAL_INDEX) or 0)


class _Plan:
    """One bit per planned pair: which the shards scored (flat: 10⁶ trials are 125 KB)."""

    def __init__(self, suite: AgentEvalSuite) -> None:
        self.suite = suite
        self.trials = suite.trial_plan.effective_count
        self.total = len(suite.tasks) * self.trials
        self.task_index = {task.taskId: i for i, task in enumerate(suite.tasks)}
        self.bits = bytearray((self.total + 7) // 8)
        self.scored = 0

    def mark(self, shard: ShardRun, scored: EvalScored) -> None:
        task_index = self.task_index.get(scored.taskId)
        trial = scored.trialIndex or 0
        if task_index is None or not 0 <= trial < self.trials:
            raise ShardMismatch(
                f"{shard.name} scored task {scored.taskId!r} trial {trial}, "
                "which the suite does not plan"
            )
        at = position(self.suite, task_index, trial)
        if at % shard.shard.count != shard.shard.index:
            raise ShardMismatch(
                f"{shard.name} scored task {scored.taskId!r} trial {trial}, which is shard "
                f"{at % shard.shard.count}'s (was it run with another --shard?)"
            )
        byte, bit = divmod(at, 8)
        if self.bits[byte] >> bit & 1:
            raise ShardMismatch(f"{shard.name} scored task {scored.taskId!r} trial {trial} twice")
        self.bits[byte] |= 1 << bit
        self.scored += 1

    def first_missing(self) -> tuple[str, int] | None:
        for at in range(self.total):
            if not self.bits[at // 8] >> (at % 8) & 1:
                task_index, trial = divmod(at, self.trials)
                return self.suite.tasks[task_index].taskId, trial
        return None


async def _scan(shard: ShardRun, plan: _Plan) -> set[str]:
    """Check one shard's scored pairs (paged); the roots of its attempts left unscored."""
    open_roots: dict[tuple[str, int], list[str]] = {}  # only attempts in flight: bounded
    async for page in _each_page(shard.store, shard.run_id):
        for event in page:
            if (key := _root_key(event)) is not None:
                open_roots.setdefault(key, []).append(event.eventId)
            elif event.type == EVAL_SCORED:
                scored = event.typed
                assert isinstance(scored, EvalScored)
                plan.mark(shard, scored)
                open_roots.pop((scored.taskId, scored.trialIndex or 0), None)
    return {root for roots in open_roots.values() for root in roots}


async def _copy(target: EventStore, run_id: str, shard: ShardRun, dropped: set[str]) -> None:
    async for page in _each_page(shard.store, shard.run_id):
        batch = [
            e
            for e in page
            if e.type not in _RUN_LEVEL
            and e.eventId not in dropped
            and (e.causationId is None or e.causationId not in dropped)
        ]
        await record_remote_trial(target, run_id, [e.to_wire() for e in batch])


async def merge_shards(
    service: RunService,
    sources: Sequence[EventStore],
    group: str,
    *,
    allow_partial: bool = False,
    exclude: Sequence[str] = (),
) -> Merged:
    """Merge run group ``group``'s shards (found in ``sources``) into one run recorded in
    ``service.store``, graded from its log. Refuses (:class:`ShardsIncomplete`,
    :class:`ShardMismatch`, before writing anything) what the module docstring lists."""
    found = await find_shards(sources, group, exclude=exclude)
    slots = _by_index(found, group, allow_partial)
    present = [s for s in slots if s is not None]
    ref_record, suite = await _check_same(present)
    plan = _Plan(suite)
    dropped = {shard.run_id: await _scan(shard, plan) for shard in present}
    missing = plan.total - plan.scored
    if missing and not allow_partial:
        task_id, trial = plan.first_missing() or ("", 0)
        raise ShardsIncomplete(
            f"group {group!r}: {missing} planned trial(s) have no eval.scored in any shard, e.g. "
            f"task {task_id!r} trial {trial} (pass --allow-partial to count them as failed)"
        )
    request = present[0].request
    baseline = request.baseline_run_id
    if baseline is not None and await service.store.get_run(baseline) is None:
        raise ShardMismatch(
            f"baselineRunId: the shards compare against {baseline}, which is not in the store "
            "the merge writes to"
        )
    partial = missing > 0 or any(s is None for s in slots)
    merged = MergedShards(
        group=group,
        count=len(slots),
        runs=[s.run_id if s is not None else None for s in slots],
        partial=partial,
    )
    request = request.model_copy(update={"shard": None, "merged": merged})
    record = await _create(service.store, ref_record, request)
    run_id, store = record.run_id, service.store
    await store.set_status(run_id, "running")
    try:
        for payload in start_payloads(suite, settings_of(request)):
            await store.emit(run_id, payload)
        for shard in present:
            await _copy(store, run_id, shard, dropped[shard.run_id])
        summary = await summarize(store, suite, run_id, request)
        await store.emit(run_id, eval_completed(summary))
        wire = summary.to_wire()
        await store.emit_end(run_id, RunCompleted(outputs=wire), summary=wire)
    except BaseException as exc:
        with anyio.CancelScope(shield=True):
            error = ErrorObject(code=INTERNAL_ERROR_CODE, message=f"merge failed: {exc}"[:500])
            await store.emit_end(run_id, RunFailed(error=error), error=error.model_dump())
        raise
    final = await store.get_run(run_id)
    assert final is not None
    return Merged(final, summary, slots, missing, partial)


async def unfinished_shard(store: EventStore, plan: RunPlan) -> str | None:
    """The run of ``plan``'s shard that its group left unfinished in ``store`` (a pod killed
    or sent SIGTERM, then retried with the same command), to continue rather than start a
    second copy that ``merge`` would refuse; None when there is none. An unfinished copy that
    ran another suite, agent or settings is refused (:class:`ShardMismatch`), naming it."""
    shard = plan.shard
    assert shard is not None
    request = plan.request()
    digest = canonical_digest(plan.document)
    settings = settings_of_request(request)
    for run_id, stored in await store.group_members(shard.group):
        found = RunRequest.model_validate(stored)
        if found.shard is None or found.shard.index != shard.index:
            continue
        record = await store.get_run(run_id)
        if record is None or record.terminal:
            continue
        other = settings_of_request(found)
        if (
            found.shard.count != shard.count
            or record.agent_id != plan.agent_id
            or canonical_digest(record.suite_document) != digest
            or any(other[name] != settings[name] for name in SETTINGS_FIELDS)
        ):
            raise ShardMismatch(
                f"shard {shard.index} of group {shard.group!r} was left unfinished by run "
                f"{run_id}, with another suite, agent or settings: finish it (wopeval run "
                "--resume RUN) or give this run another --group"
            )
        return run_id
    return None


def plan_shard(plan: RunPlan, index: int, count: int, group: str | None = None) -> RunPlan:
    """The plan of shard ``index`` of ``count`` (0-based) of ``plan``: it runs only its slice.
    Without ``group``, the group is derived from the suite digest, the shared settings and N
    (:func:`~wopeval.service.slices.derived_group`), so every machine derives the same one."""
    check_adaptive(plan.suite, live_tools=False, ignore_fixtures=False, sharded=True)
    if group is None:
        group = derived_group(plan.document, plan.request(), count)
    return replace(plan, shard=ShardRequest(group=group, index=index, count=count))


async def _create(store: EventStore, reference: RunRecord, request: RunRequest) -> RunRecord:
    now = utc_now()
    record = RunRecord(
        run_id=new_run_id(reference.tenant),
        tenant=reference.tenant,
        kind="eval",
        status="pending",
        suite_id=reference.suite_id,
        suite_version=reference.suite_version,
        agent_id=reference.agent_id,
        suite_document=reference.suite_document,
        request=request.to_stored(),
        summary=None,
        error=None,
        created_at=now,
        updated_at=now,
    )
    await store.create_run(record)
    return record
