"""``wopeval merge`` and ``wopeval run --shard i/N``: run a suite as shards, grade them as one.

See docs/distributed.md. A shard's own exit code says whether it recorded its slice (0), was
cancelled (1), got bad input (2) or failed (3): whether the *suite* passes is the merge's
answer, since no shard sees every trial (and an orchestrator would retry a shard that exits 1).
"""

from __future__ import annotations

import json
from contextlib import AsyncExitStack
from typing import Annotated, Any

import anyio
import typer
from rich.console import Console

from wopeval.cli.common import EXIT_FAILED, EXIT_OK, fail_input, opened_store
from wopeval.cli.gate_opts import chosen_gate
from wopeval.cli.outage import run_exit_code, trials_json
from wopeval.cli.render import print_summary
from wopeval.engine.registry import Registry
from wopeval.errors import UserError
from wopeval.grading.detail import run_detail
from wopeval.grading.gate import decide, suite_bounds
from wopeval.service.runs import RunPlan, RunService, fold_log, grading_options
from wopeval.service.shards import Merged, merge_shards, plan_shard
from wopeval.service.slices import check_group, parse_shard, shard_size
from wopeval.suite import parse_suite
from wopeval.suite.models import AgentEvalSuite
from wopeval.wire.request import ShardRequest
from wopeval.wire.summary import EvalSummary

ShardOption = tuple[int, int, str | None]


def shard_option(shard: str | None, group: str | None) -> ShardOption | None:
    """``--shard i/N`` and ``--group NAME`` checked (exit 2, naming the option)."""
    if shard is None:
        if group is not None:
            fail_input("--group needs --shard i/N")
        return None
    try:
        index, count = parse_shard(shard)
        return index, count, check_group(group) if group is not None else None
    except UserError as exc:
        fail_input(str(exc))


def shard_total(suite: AgentEvalSuite, option: ShardOption) -> int:
    return shard_size(suite, option[0], option[1])


def shard_plan(plan: RunPlan, option: ShardOption) -> RunPlan:
    """The plan of shard ``i`` of ``N``; the group defaults to the suite digest + settings."""
    return plan_shard(plan, *option)


async def _shard_of(store_url: str | None, run_id: str) -> ShardRequest | None:
    async with opened_store(store_url, must_exist=True) as store:
        record = await store.get_run(run_id)
        return record.run_request.shard if record is not None else None


def shard_of(store_url: str | None, run_id: str) -> ShardRequest | None:
    """The shard a stored run is (``wopeval run --resume`` of a shard reports as a shard)."""
    return anyio.run(_shard_of, store_url, run_id)


def report_shard(
    run_id: str,
    shard: ShardRequest,
    summary: EvalSummary | None,
    suite: AgentEvalSuite,
    as_json: bool,
    store: str | None = None,
) -> None:
    """A shard's report: what it recorded and how to merge; exit 0 once its slice is recorded."""
    if summary is None:
        typer.echo(f"shard run {run_id} was cancelled; what it recorded is kept", err=True)
        raise typer.Exit(EXIT_FAILED)
    trials = shard_size(suite, shard.index, shard.count)
    if as_json:
        doc = {
            "runId": run_id,
            "group": shard.group,
            "shard": {"index": shard.index, "count": shard.count},
            "status": "completed",
            "trials": trials,
        }
        typer.echo(json.dumps(doc))
    else:
        from wopeval.events.urls import shown_url

        here = shown_url(store) or "STORE"
        typer.echo(
            f"shard {shard.index}/{shard.count} of group {shard.group}: run {run_id} recorded "
            f"its {trials} trial(s).\nWhen every shard is done, grade the group as one run:\n"
            f"  wopeval merge --group {shard.group} --store {here} [--store OTHER …]"
        )
    raise typer.Exit(EXIT_OK)


async def _merge(
    stores: list[str | None], into: str | None, group: str, allow_partial: bool, exclude: list[str]
) -> tuple[Merged, AgentEvalSuite, Any]:
    async with AsyncExitStack() as stack:
        opened: dict[str | None, Any] = {}
        for url in dict.fromkeys([*stores, into] if into is not None else stores):
            opened[url] = await stack.enter_async_context(opened_store(url, must_exist=url != into))
        target = opened[into if into is not None else stores[0]]
        service = RunService(target, Registry())  # merging runs no agent
        try:
            merged = await merge_shards(
                service,
                [opened[url] for url in stores],
                group,
                allow_partial=allow_partial,
                exclude=exclude,
            )
        except UserError as exc:
            fail_input(str(exc))
        record = merged.record
        suite = parse_suite(record.suite_document, source=f"run {record.run_id}")
        options = grading_options(record.run_request)
        detail = await fold_log(target, record.run_id, lambda log: run_detail(suite, log, options))
        return merged, suite, detail


def merge(
    group: Annotated[
        str, typer.Option("--group", help="The run group whose shards to merge (each shard says).")
    ],
    store: Annotated[
        list[str] | None,
        typer.Option(
            "--store",
            envvar="WOPEVAL_STORE",
            help="A store holding shards: SQLite path or URL, or postgresql://… (repeatable; "
            "default ./.wopeval/wopeval.db).",
        ),
    ] = None,
    into: Annotated[
        str | None,
        typer.Option(help="The store to record the merged run in (default: the first --store)."),
    ] = None,
    allow_partial: Annotated[
        bool,
        typer.Option(
            help="Merge even with shards missing or unfinished: their unscored trials fail."
        ),
    ] = False,
    exclude: Annotated[
        list[str] | None,
        typer.Option(metavar="RUN", help="Leave this shard run out (repeatable)."),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print machine-readable JSON only.")
    ] = False,
) -> None:
    """Grade a run group's shards as one run with one summary. Exit 0 passed, 1 failed, 3 outage.

    It passes by the shards' gate (their --gate)."""
    try:
        check_group(group)
    except UserError as exc:
        fail_input(str(exc))
    stores: list[str | None] = list(store) if store else [None]
    merged, suite, detail = anyio.run(
        _merge, stores, into, group, allow_partial, list(exclude or ())
    )
    summary, run_id = merged.summary, merged.record.run_id
    request = merged.record.run_request
    verdict = decide(
        summary, chosen_gate(None, request.gate), suite_bounds(suite, request.ci_level)
    )
    if as_json:
        doc: dict[str, Any] = {
            "runId": run_id,
            "group": group,
            "shards": [
                {"index": i, "runId": s.run_id, "status": s.status} if s is not None else None
                for i, s in enumerate(merged.shards)
            ],
            "missingShards": merged.missing_shards,
            "missingTrials": merged.missing_trials,
            "partial": merged.partial,
            "summary": summary.to_wire(),
            "gate": verdict.to_json(),
            **trials_json(detail),
        }
        typer.echo(json.dumps(doc))
    else:
        shards = len(merged.shards) - len(merged.missing_shards)
        note = f"merged {shards} of {len(merged.shards)} shard(s) of group {group} into {run_id}"
        if merged.partial:
            note += f" (partial: {merged.missing_trials} trial(s) missing, counted as failed)"
        typer.echo(note)
        print_summary(Console(), summary, run_id, suite, detail=detail, verdict=verdict)
    raise typer.Exit(run_exit_code(run_id, verdict.passed, detail))


def register(app: typer.Typer) -> None:
    app.command()(merge)
