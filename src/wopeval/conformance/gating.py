"""What every host leg shares: the discovery advert, the gate, one fixture run, and a result.

Gating (RFC 0244 §Conformance): each host leg needs its ``agents.evalSuite`` member (every
member of a fixture that mixes features) and its fixture id in discovery ``fixtures``.

* a member not advertised (or ``agents.evalSuite`` absent): ``inapplicable``, the host does not
  claim the behaviour;
* member advertised but the fixture not listed: ``skipped``, or ``executed-fail`` with
  ``require_behavior`` (the host claims a behaviour the kit cannot witness);
* both present: the fixture runs, and the leg is ``executed-pass`` or ``executed-fail``. A run
  that cannot be created, read to its end or summarised fails the leg.

The extension legs (:mod:`wopeval.conformance.extended`) are gated the same way.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import anyio

from wopeval.conformance.catalog import Fixture
from wopeval.conformance.client import WireClient, WireError
from wopeval.conformance.legs.common import Checker, RunCapture
from wopeval.conformance.report import RequirementResult, Status
from wopeval.conformance.suites import Suite, trial_plan


@dataclass(frozen=True)
class Advert:
    """What discovery claims about the eval lane."""

    eval_suite: dict[str, Any] | None
    fixtures: frozenset[str]
    implementation: dict[str, Any]

    @classmethod
    def from_discovery(cls, doc: dict[str, Any]) -> Advert:
        agents = doc.get("agents")
        facet = agents.get("evalSuite") if isinstance(agents, dict) else None
        listed = doc.get("fixtures")
        impl = doc.get("implementation")
        return cls(
            eval_suite=facet if isinstance(facet, dict) else None,
            fixtures=frozenset(str(item) for item in listed or () if isinstance(listed, list)),
            implementation=dict(impl) if isinstance(impl, dict) else {},
        )

    def has(self, member: str) -> bool:
        value = (self.eval_suite or {}).get(member)
        return value is True or (member == "trials" and isinstance(value, dict))

    @property
    def max_trials(self) -> int | None:
        trials = (self.eval_suite or {}).get("trials")
        value = trials.get("maxTrials") if isinstance(trials, dict) else None
        return value if isinstance(value, int) else None


@dataclass(frozen=True)
class Gate:
    """Whether a fixture runs; when it does not, the status and reason its legs get."""

    runs: bool
    status: Status = Status.INAPPLICABLE
    reason: str = ""


def gate_for(advert: Advert, fixture: Fixture, suite: Suite | None, require: bool) -> Gate:
    """The gate of a fixture's leg (module docstring)."""
    member = f"agents.evalSuite.{fixture.facet}"
    if advert.eval_suite is None:
        return Gate(False, Status.INAPPLICABLE, "agents.evalSuite is not advertised")
    for facet in fixture.facets:
        if not advert.has(facet):
            return Gate(False, Status.INAPPLICABLE, f"agents.evalSuite.{facet} is not advertised")
    if "trials" in fixture.facets and suite is not None and advert.max_trials is not None:
        count, _, _ = trial_plan(suite)
        if advert.max_trials < count:
            why = f"maxTrials {advert.max_trials} is below the fixture's {count} trials"
            return Gate(False, Status.INAPPLICABLE, why)
    if fixture.fixture_id not in advert.fixtures:
        why = f"{member} is advertised but discovery does not list {fixture.fixture_id}"
        return Gate(False, Status.FAIL if require else Status.SKIPPED, why)
    if suite is None:
        return Gate(False, Status.FAIL, f"the kit cannot read its {fixture.fixture_id} fixture")
    return Gate(True)


@dataclass(frozen=True)
class CaptureFailure:
    """A fixture run that could not be used; ``unauthorized`` means the API key was refused."""

    message: str
    unauthorized: bool = False


Captured = RunCapture | CaptureFailure


async def capture_run(
    client: WireClient, fixture: Fixture, suite: Suite, deadline_s: float
) -> Captured:
    """Create a fixture's eval run, read it to its end, and fetch its summary."""
    try:
        created = await client.create_eval_run(fixture)
        body = created.body if isinstance(created.body, dict) else {}
        if created.status in (401, 403):
            why = f"POST /runs answered {created.status} {body.get('error')!r}"
            return CaptureFailure(why, unauthorized=created.status == 401)
        if created.status not in (200, 201, 202) or not isinstance(body.get("runId"), str):
            return CaptureFailure(
                f"POST /runs for {fixture.suite_ref} answered {created.status}: "
                f"{body.get('error')!r} {body.get('message')!r}"
            )
        run_id = body["runId"]
        log = await client.read_run(run_id, deadline_s=deadline_s)
        if log.status != "completed":
            return CaptureFailure(f"run {run_id} ended {log.status!r}, want 'completed'")
        summary = await client.read_summary(run_id)
    except WireError as exc:
        return CaptureFailure(str(exc))
    if summary.status != 200 or not isinstance(summary.body, dict):
        return CaptureFailure(f"GET eval-summary of {run_id} answered {summary.status}")
    return RunCapture(fixture, suite, run_id, log.status, log.events, summary.body)


async def capture_all(
    client: WireClient, runnable: Mapping[Fixture, Suite], deadline_s: float
) -> dict[Fixture, Captured]:
    """Run every runnable fixture concurrently (one task group, no stray tasks)."""
    captures: dict[Fixture, Captured] = {}

    async def one(fixture: Fixture, suite: Suite) -> None:
        captures[fixture] = await capture_run(client, fixture, suite, deadline_s)

    async with anyio.create_task_group() as group:
        for fixture, suite in runnable.items():
            group.start_soon(one, fixture, suite)
    return captures


def leg_result(requirement: str, ck: Checker, fixtures: tuple[str, ...]) -> RequirementResult:
    """The result of a leg that ran: pass when no check failed."""
    status = Status.PASS if ck.passed else Status.FAIL
    reason = f"{ck.checks} checks" if ck.passed else f"{len(ck.failures)} of {ck.checks} failed"
    return RequirementResult(requirement, status, reason, ck.checks, tuple(ck.failures), fixtures)


def not_run(requirement: str, gate: Gate, fixtures: tuple[str, ...]) -> RequirementResult:
    """The result of a leg its gate kept from running."""
    failures = (gate.reason,) if gate.status == Status.FAIL else ()
    return RequirementResult(requirement, gate.status, gate.reason, 0, failures, fixtures)


LegCheck = Callable[[RunCapture], Checker]


def fixture_leg_results(
    legs: Iterable[tuple[str, Fixture, LegCheck]],
    gates: Mapping[Fixture, Gate],
    captures: Mapping[Fixture, Captured],
) -> list[RequirementResult]:
    """One result per leg: not run (its gate), failed (its run), or the leg's own checks."""
    results: list[RequirementResult] = []
    for requirement, fixture, check in legs:
        ids = (fixture.fixture_id,)
        capture = captures.get(fixture)
        if not gates[fixture].runs or capture is None:
            results.append(not_run(requirement, gates[fixture], ids))
        elif isinstance(capture, CaptureFailure):
            failure = (capture.message,)
            results.append(
                RequirementResult(requirement, Status.FAIL, capture.message, 1, failure, ids)
            )
        else:
            results.append(leg_result(requirement, check(capture), ids))
    return results
