"""The conformance report: one result per RFC 0244 requirement id, as a table and as JSON.

With ``--extended`` the opt-in extension legs follow, under ids in wopeval's own namespace
``wopeval.ext.<name>`` (never an RFC requirement id), and the JSON carries ``"extended": true``.
With ``--core`` the core host legs follow (``core.<name>``) and the JSON carries ``"core": true``.

Statuses follow the openwop-conformance vocabulary: ``executed-pass``, ``executed-fail``,
``inapplicable`` (the host does not claim the behaviour) and ``skipped`` (it claims it but the
leg could not run; with ``--require-behavior`` that is an ``executed-fail`` instead). Exit code:
1 on any ``executed-fail``, else 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

MAX_SHOWN_FAILURES = 5


class Status(StrEnum):
    PASS = "executed-pass"
    FAIL = "executed-fail"
    INAPPLICABLE = "inapplicable"
    SKIPPED = "skipped"


_STYLE = {
    Status.PASS: "bold green",
    Status.FAIL: "bold red",
    Status.INAPPLICABLE: "dim",
    Status.SKIPPED: "yellow",
}


@dataclass(frozen=True)
class RequirementResult:
    """The verdict on one requirement id, with the checks made and every failure found."""

    requirement: str
    status: Status
    reason: str = ""
    checks: int = 0
    failures: tuple[str, ...] = ()
    fixtures: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "requirement": self.requirement,
            "status": self.status.value,
            "reason": self.reason,
            "checks": self.checks,
            "failures": list(self.failures),
            "fixtures": list(self.fixtures),
        }


@dataclass(frozen=True)
class ConformanceReport:
    """Everything one ``wopeval conformance`` run found."""

    base_url: str
    results: tuple[RequirementResult, ...]
    require_behavior: bool = False
    extended: bool = False
    core: bool = False
    implementation: dict[str, Any] = field(default_factory=dict)
    advertised: dict[str, Any] = field(default_factory=dict)
    fixtures_listed: tuple[str, ...] = ()
    run_ids: dict[str, str] = field(default_factory=dict)

    def result(self, requirement: str) -> RequirementResult:
        for result in self.results:
            if result.requirement == requirement:
                return result
        raise KeyError(requirement)

    def counts(self) -> dict[str, int]:
        return {status.value: sum(r.status == status for r in self.results) for status in Status}

    @property
    def passed(self) -> bool:
        return not any(result.status == Status.FAIL for result in self.results)

    @property
    def exit_code(self) -> int:
        return 0 if self.passed else 1

    def to_json(self) -> dict[str, Any]:
        extended = {"extended": True} if self.extended else {}
        core = {"core": True} if self.core else {}
        return {
            "baseUrl": self.base_url,
            "requireBehavior": self.require_behavior,
            **extended,
            **core,
            "implementation": self.implementation,
            "advertised": self.advertised,
            "fixtures": list(self.fixtures_listed),
            "runs": self.run_ids,
            "results": [result.to_json() for result in self.results],
            "counts": self.counts(),
            "passed": self.passed,
        }


def _details(result: RequirementResult) -> Text:
    text = Text(result.reason)
    shown = result.failures[:MAX_SHOWN_FAILURES]
    for failure in shown:
        text.append(f"\n• {failure}", style="red")
    hidden = len(result.failures) - len(shown)
    if hidden > 0:
        text.append(f"\n… and {hidden} more (see --json)", style="red")
    return text


def render(report: ConformanceReport, console: Console) -> None:
    """Print the report as a rich table plus a one-line tally."""
    impl = report.implementation
    name = f"{impl.get('name', '?')} {impl.get('version', '')}".strip()
    title = f"RFC 0244 conformance: {report.base_url} ({name})"
    table = Table(title=title, show_lines=True, title_justify="left")
    table.add_column("Requirement", no_wrap=True)
    table.add_column("Result", no_wrap=True)
    table.add_column("Checks", justify="right")
    table.add_column("Details")
    for result in report.results:
        table.add_row(
            result.requirement,
            Text(result.status.value, style=_STYLE[result.status]),
            str(result.checks),
            _details(result),
        )
    console.print(table)
    counts = report.counts()
    tally = ", ".join(f"{count} {status}" for status, count in counts.items())
    verdict = Text(
        "PASS" if report.passed else "FAIL", style="bold green" if report.passed else "bold red"
    )
    console.print(Text("Conformance: ").append(verdict).append(f" ({tally})"))
