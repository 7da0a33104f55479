"""Keep the command's own stdout clean while user code runs.

``wopeval run --json`` prints one JSON document on stdout; an agent, tool or judge that prints
(a ``print()`` left in, a chatty SDK) must not corrupt it. While the run executes, Python's
``sys.stdout`` is stderr, so what user code prints is still seen, on the other stream. (Output
written straight to file descriptor 1 by a C extension or a child process is not redirected.)
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stdout
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from wopeval.grading.detail import RunDetail


@contextmanager
def user_output_to_stderr() -> Iterator[None]:
    """Within the block, ``print()`` and ``sys.stdout`` writes (any thread) go to stderr."""
    sys.stdout.flush()
    with redirect_stdout(sys.stderr):
        yield
    sys.stderr.flush()


def exit_past_blocked_agents(code: int) -> None:
    """Exit now (``os._exit``) when a timed-out plain agent is still blocked in its thread.

    The interpreter would otherwise wait at exit for that thread, so ``--trial-timeout`` would
    not bound the command. Nothing is lost: the run, its summary and the output are written.
    """
    syncagent = sys.modules.get("wopeval.engine.syncagent")  # only loaded when agents ran
    blocked = syncagent.abandoned_threads() if syncagent is not None else []
    if not blocked:
        return
    count = len(blocked)
    print(
        f"wopeval: {count} timed-out agent thread{'s' * (count != 1)} still blocked; "
        "exiting without waiting for them",
        file=sys.stderr,
    )
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


__all__ = ["exit_past_blocked_agents", "failures_json", "user_output_to_stderr"]


def failures_json(detail: RunDetail) -> list[dict[str, object]]:
    """Each failing trial's reasons, for ``--json`` (the tenant's own output): ``kind`` the
    failure's kind, ``reasons`` every reason most decisive first, ``message`` them on one line."""
    from wopeval.grading.reasons import reason_line, reason_texts

    return [
        {"taskId": task.task_id, "trialIndex": cell.trial_index, "status": cell.status,
         "kind": cell.reason.kind if cell.reason else None,
         "message": reason_line(cell.reason, cell.status) if cell.reason else None,
         "reasons": reason_texts(cell.reason, cell.status) if cell.reason else []}
        for task in detail.tasks
        for cell in task.failures
    ]  # fmt: skip
