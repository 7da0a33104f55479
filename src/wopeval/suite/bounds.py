"""What a suite file may be: bounds checked before (and while) it is parsed.

A suite comes from a file someone else may control (a host's suite directory, a CI checkout),
so reading one must cost a bounded amount of time and memory, and anything beyond the bounds is
a :class:`~wopeval.suite.errors.SuiteError` naming the file and the field, never a traceback,
a hang or unbounded growth:

- the file is a regular file (not a FIFO, ``/dev/zero`` or a directory) of at most
  :data:`MAX_SUITE_BYTES`; at most that many bytes are ever read, even from a growing file;
- containers nest at most :data:`MAX_DEPTH` levels (named at the first too-deep member; a file
  nested so deep that the parser itself gives up is named ``$``);
- integers have at most :data:`MAX_INTEGER_DIGITS` digits;
- YAML aliases expand to at most :data:`MAX_YAML_NODES` nodes (a 570-byte "billion laughs"
  document is refused in milliseconds instead of costing gigabytes;
  :func:`wopeval.suite.yaml_doc.check_yaml_expansion`);
- a fixture's ``response`` is at most :data:`MAX_FIXTURE_RESPONSE_BYTES` of JSON (untrusted
  content for the agent, RFC 0244 §H: docs/host.md "Untrusted content");
- at most :data:`MAX_TASKS` tasks, and at most :data:`MAX_TRIALS` trials in all
  (``tasks × trials.count``), refused before any model is built, so ``trials.count: 10⁹`` is
  refused up front on the CLI as on the host.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Final

from wopeval.suite.errors import ROOT_PATH, FieldError, Loc, SuiteError, format_path

MAX_SUITE_BYTES: Final = 8 * 1024 * 1024
MAX_DEPTH: Final = 64
MAX_INTEGER_DIGITS: Final = 30
MAX_YAML_NODES: Final = 200_000
MAX_TASKS: Final = 10_000
MAX_TRIALS: Final = 100_000
# A canned tool result is untrusted content handed to an agent (RFC 0244 §H): capped like a
# live tool's, in bytes of its compact JSON.
MAX_FIXTURE_RESPONSE_BYTES: Final = 256 * 1024


class TooManyDigits:
    """Left in parsed JSON where an integer literal has more than MAX_INTEGER_DIGITS digits."""

    __slots__ = ("digits",)

    def __init__(self, text: str) -> None:
        self.digits = len(text.lstrip("-"))


def parse_int(text: str) -> int | TooManyDigits:
    """``json.loads(parse_int=...)``: no huge integer is ever converted."""
    if len(text.lstrip("-")) > MAX_INTEGER_DIGITS:
        return TooManyDigits(text)
    return int(text)


def read_bounded(path: Path, source: str) -> bytes:
    """The file's bytes: a regular file of at most MAX_SUITE_BYTES, opened without blocking."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise _error(source, ROOT_PATH, f"cannot read file: {exc.strerror or exc}") from exc
    with os.fdopen(fd, "rb") as file:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _error(source, ROOT_PATH, "not a regular file (a FIFO, device or directory)")
        if info.st_size > MAX_SUITE_BYTES:
            raise _error(source, ROOT_PATH, _too_big(info.st_size))
        data = file.read(MAX_SUITE_BYTES + 1)
    if len(data) > MAX_SUITE_BYTES:
        raise _error(source, ROOT_PATH, _too_big(len(data)))
    return data


def _too_big(size: int) -> str:
    return f"the file is larger than {MAX_SUITE_BYTES} bytes ({size} or more)"


def _error(source: str, path: str, message: str) -> SuiteError:
    return SuiteError([FieldError(path, message)], source)


def too_deep(source: str) -> SuiteError:
    return _error(source, ROOT_PATH, f"nests deeper than {MAX_DEPTH} levels")


def tree_errors(data: object) -> list[FieldError]:
    """Too-deep containers and too-long integers, in document order (iterative)."""
    errors: list[FieldError] = []
    stack: list[tuple[object, Loc]] = [(data, ())]
    while stack:
        value, loc = stack.pop()
        if isinstance(value, TooManyDigits):
            message = f"an integer of {value.digits} digits; at most {MAX_INTEGER_DIGITS}"
            errors.append(FieldError(format_path(loc), message))
        elif isinstance(value, int) and not isinstance(value, bool):
            if value and len(str(abs(value))) > MAX_INTEGER_DIGITS:  # YAML ints
                errors.append(
                    FieldError(format_path(loc), f"more than {MAX_INTEGER_DIGITS} digits")
                )
        elif isinstance(value, dict | list):
            if len(loc) >= MAX_DEPTH:
                errors.append(FieldError(format_path(loc), f"nests deeper than {MAX_DEPTH} levels"))
                continue
            items = value.items() if isinstance(value, dict) else enumerate(value)
            stack.extend(((item, (*loc, str(key) if isinstance(value, dict) else key))
                          for key, item in reversed(list(items))))  # fmt: skip
    return errors


def count_errors(data: object) -> list[FieldError]:
    """Too many tasks or trials: checked on the raw document, before any model is built."""
    if not isinstance(data, dict):
        return []
    tasks = data.get("tasks")
    n_tasks = len(tasks) if isinstance(tasks, list) else 0
    if n_tasks > MAX_TASKS:
        return [FieldError("tasks", f"{n_tasks} tasks; a suite may have at most {MAX_TASKS}")]
    trials = data.get("trials")
    count = trials.get("count") if isinstance(trials, dict) else None
    if isinstance(count, float) and count.is_integer():
        count = int(count)  # JSON Schema's integer, as the models read it: 1e9 is 10⁹ trials
    if (
        isinstance(count, int)
        and not isinstance(count, bool)
        and count * max(n_tasks, 1) > MAX_TRIALS
    ):
        message = f"{count} trials of {n_tasks} task(s) is more than {MAX_TRIALS} trials in all"
        return [FieldError("trials.count", message)]
    return _fixture_errors(tasks if isinstance(tasks, list) else [])


def _fixture_errors(tasks: list[object]) -> list[FieldError]:
    errors = []
    for i, task in enumerate(tasks):
        fixtures = task.get("fixtures") if isinstance(task, dict) else None
        responses = fixtures.get("toolResponses") if isinstance(fixtures, dict) else None
        for j, canned in enumerate(responses if isinstance(responses, list) else []):
            if not isinstance(canned, dict) or "response" not in canned:
                continue
            try:
                size = len(json.dumps(canned["response"], separators=(",", ":")).encode())
            except (TypeError, ValueError):
                continue  # not JSON: the schema layer names it
            if size > MAX_FIXTURE_RESPONSE_BYTES:
                path = f"tasks[{i}].fixtures.toolResponses[{j}].response"
                message = f"{size} bytes of JSON; a fixture response may have at most "
                errors.append(FieldError(path, message + f"{MAX_FIXTURE_RESPONSE_BYTES}"))
    return errors
