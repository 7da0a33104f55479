"""``wopeval run --resume RUN``: finish an interrupted run (:meth:`RunService.resume`)."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

import anyio

from wopeval.cli.common import fail_input, opened_store
from wopeval.engine.judge import Judge
from wopeval.engine.registry import Registry
from wopeval.engine.run import RunHandle
from wopeval.errors import RunNotFound, UserError
from wopeval.grading.detail import RunDetail, run_detail
from wopeval.service.leases import holding_runs
from wopeval.service.runs import RunService, fold_log, grading_options
from wopeval.suite import parse_suite
from wopeval.suite.models import AgentEvalSuite
from wopeval.wire.summary import EvalSummary


async def resume_run(
    store_url: str | None,
    run_id: str,
    registry: Registry,
    judge: Judge | None,
    on_signal: Callable[[RunHandle], Coroutine[Any, Any, None]],
) -> tuple[str, AgentEvalSuite, EvalSummary | None, RunDetail | None]:
    """Resume ``run_id`` in the store; what ``wopeval run`` reports afterwards. ``on_signal``
    is ``wopeval run``'s own Ctrl-C / SIGTERM handling."""

    async with opened_store(store_url, must_exist=True) as store, holding_runs(store):
        service = RunService(store, registry, judge)
        handle = RunHandle(run_id)
        try:
            resuming = await service.prepare_resume(run_id)
        except RunNotFound:
            fail_input(f"--resume: run {run_id!r} is not in the store")
        except UserError as exc:
            fail_input(f"--resume: {exc}")
        async with anyio.create_task_group() as group:
            group.start_soon(on_signal, handle)
            record, summary = await service.resume(run_id, handle=handle, prepared=resuming)
            group.cancel_scope.cancel()
        suite = parse_suite(record.suite_document, source=f"run {run_id}")
        if summary is None:
            return run_id, suite, None, None
        options = grading_options(record.run_request)
        detail = await fold_log(store, run_id, lambda log: run_detail(suite, log, options))
        return run_id, suite, summary, detail
