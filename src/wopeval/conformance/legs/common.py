"""What every leg shares: the captured run and the check counter."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from wopeval.conformance.catalog import Fixture
from wopeval.conformance.suites import Suite


@dataclass
class Checker:
    """Counts the checks a leg makes and keeps every failure message."""

    checks: int = 0
    failures: list[str] = field(default_factory=list)

    def check(self, ok: bool, message: str) -> bool:
        self.checks += 1
        if not ok:
            self.failures.append(message)
        return ok

    def fail(self, message: str) -> None:
        self.check(False, message)

    @property
    def passed(self) -> bool:
        return not self.failures


@dataclass(frozen=True)
class RunCapture:
    """One fixture's eval run as read over the wire: every event, and the summary."""

    fixture: Fixture
    suite: Suite
    run_id: str
    status: str
    events: list[dict[str, Any]]
    summary: dict[str, Any]

    def of_type(self, event_type: str) -> list[dict[str, Any]]:
        return [event for event in self.events if event.get("type") == event_type]

    def payloads(self, event_type: str) -> list[dict[str, Any]]:
        return [
            event["payload"] if isinstance(event.get("payload"), dict) else {}
            for event in self.of_type(event_type)
        ]

    def scored(self, task_id: str) -> list[dict[str, Any]]:
        """The ``eval.scored`` payloads of one task, in log order."""
        return [p for p in self.payloads("eval.scored") if p.get("taskId") == task_id]

    def summary_task(self, task_id: str) -> dict[str, Any] | None:
        for entry in self.summary.get("tasks") or []:
            if isinstance(entry, dict) and entry.get("taskId") == task_id:
                return entry
        return None


def is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)
