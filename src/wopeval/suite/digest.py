"""Canonical digests of a suite and of each task's definition, and what differs between two.

A digest is the SHA-256 of canonical JSON (keys sorted, no whitespace, UTF-8) of the members the
author wrote (:func:`~wopeval.suite.load.suite_to_document`). A task's definition is its
``input``, ``expected`` and ``fixtures``: two runs of one suite pair a task only when its
definition digest agrees (``wopeval compare``), and ``wopeval suite diff`` names the parts that
changed. The digests are content-free (hex strings) and stored with every run's settings.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, cast

from wopeval.suite.load import suite_to_document
from wopeval.suite.models import AgentEvalSuite
from wopeval.wire.request import DefinitionDigests

DefinitionPart = Literal["input", "expected", "fixtures", "x-wopeval-world"]
DEFINITION_PARTS: tuple[DefinitionPart, ...] = ("input", "expected", "fixtures", "x-wopeval-world")
# Parts that enter a task's definition only when it has them, so the digest of a task without
# them (every plain RFC task) is what it always was.
_OPTIONAL_PARTS = frozenset({"x-wopeval-world"})


def canonical_json(value: object) -> str:
    """JSON with sorted keys and no whitespace; refuses NaN and infinities (not JSON)."""
    return json.dumps(
        value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def canonical_digest(value: object) -> str:
    """The hex SHA-256 of :func:`canonical_json` of ``value``, UTF-8 encoded."""
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()


def task_definition(task: Mapping[str, Any]) -> dict[str, Any]:
    """A task document's definition: its input, expectation and fixtures (``None`` if absent),
    and its world when it has one."""
    return {
        part: task.get(part)
        for part in DEFINITION_PARTS
        if part not in _OPTIONAL_PARTS or part in task
    }


def definition_digests(
    suite: AgentEvalSuite, document: Mapping[str, Any] | None = None
) -> DefinitionDigests:
    """The digests of ``suite`` as written and of each task's definition, by ``taskId``
    (``document``: its :func:`~wopeval.suite.load.suite_to_document`, when already made)."""
    if document is None:
        document = suite_to_document(suite)
    tasks = cast(list[Mapping[str, Any]], document["tasks"])
    return DefinitionDigests(
        suite=canonical_digest(document),
        tasks={str(task["taskId"]): canonical_digest(task_definition(task)) for task in tasks},
    )


@dataclass(frozen=True)
class TaskChange:
    """A task in both suites whose definition differs, and which parts of it."""

    task_id: str
    parts: tuple[DefinitionPart, ...]


@dataclass(frozen=True)
class SuiteDiff:
    """What changed from suite document ``a`` to ``b``, per task, in each suite's task order."""

    added: tuple[str, ...]
    removed: tuple[str, ...]
    changed: tuple[TaskChange, ...]
    unchanged: tuple[str, ...]
    same_suite: bool

    @property
    def differs(self) -> bool:
        """True when a task was added, removed or changed."""
        return bool(self.added or self.removed or self.changed)

    def to_json(self) -> dict[str, Any]:
        return {
            "sameSuite": self.same_suite,
            "added": list(self.added),
            "removed": list(self.removed),
            "changed": [{"taskId": c.task_id, "parts": list(c.parts)} for c in self.changed],
            "unchanged": list(self.unchanged),
        }


def _tasks(document: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    return {str(task["taskId"]): task for task in document.get("tasks") or ()}


def diff_documents(a: Mapping[str, Any], b: Mapping[str, Any]) -> SuiteDiff:
    """Compare two suite documents task by task, by ``taskId`` and definition part."""
    old, new = _tasks(a), _tasks(b)
    changed: list[TaskChange] = []
    unchanged: list[str] = []
    for task_id, task in new.items():
        if task_id not in old:
            continue
        parts = tuple(
            part
            for part in DEFINITION_PARTS
            if canonical_digest(old[task_id].get(part)) != canonical_digest(task.get(part))
        )
        if parts:
            changed.append(TaskChange(task_id, parts))
        else:
            unchanged.append(task_id)
    return SuiteDiff(
        added=tuple(task_id for task_id in new if task_id not in old),
        removed=tuple(task_id for task_id in old if task_id not in new),
        changed=tuple(changed),
        unchanged=tuple(unchanged),
        same_suite=canonical_digest(dict(a)) == canonical_digest(dict(b)),
    )


__all__ = [
    "DEFINITION_PARTS",
    "SuiteDiff",
    "TaskChange",
    "canonical_digest",
    "canonical_json",
    "definition_digests",
    "diff_documents",
    "task_definition",
]
