"""A promoted trial's model turns: its file of a model cassette, copied into a new cassette as
the promoted task's trial 0 (docs/promote.md, docs/cassettes.md).

A recording's key covers the task id and the trial index, so each interaction is keyed again
for the new task and trial 0; everything else (requests, responses, occurrences, their order)
is copied as recorded. The source is read and checked whole first, as a replay would read it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from wopeval.agents.cassette import TRIALS, Cassette, Tape, request_key
from wopeval.errors import UserError

__all__ = ["copy_trial_cassette"]


def _rekeyed(item: dict[str, Any], task_id: str) -> dict[str, Any]:
    request = item["request"]
    key = request_key(
        task_id, 0, request["method"], request["path"], request["body"], item["occurrence"]
    )
    return {**item, "key": key}


def copy_trial_cassette(
    source: Path, out: Path, task_id: str, trial_index: int, new_task_id: str
) -> int:
    """Copy trial ``trial_index`` of ``task_id`` from the cassette ``source`` into a new
    cassette ``out`` as ``new_task_id`` trial 0; the number of model turns copied."""
    try:
        Cassette.for_replay(source)
    except UserError as exc:
        raise UserError(str(exc).replace("--replay-model", "--cassette", 1)) from None
    path = source / TRIALS / f"{task_id}.{trial_index}.json"
    if not path.is_file():
        raise UserError(
            f"--cassette {source}: it holds no recording of task {task_id!r} trial "
            f"{trial_index} (no {TRIALS}/{path.name}); was the run recorded with it?"
        )
    doc = json.loads(path.read_text(encoding="utf-8"))
    try:
        target = Cassette.for_recording(out)
    except UserError as exc:
        raise UserError(str(exc).replace("--record-model", "--cassette-out", 1)) from None
    tape = Tape(new_task_id, 0)
    tape.interactions = [_rekeyed(item, new_task_id) for item in doc["interactions"]]
    target.save(tape)
    return len(tape.interactions)
