"""Run the kit against a host: discovery, gating, the fixture runs, then every leg.

Gating (RFC 0244 §Conformance): each host leg needs its ``agents.evalSuite`` member and its
fixture id in discovery ``fixtures``.

* member not advertised (or ``agents.evalSuite`` absent): ``inapplicable``, the host does not
  claim the behaviour;
* member advertised but the fixture not listed: ``skipped``, or ``executed-fail`` with
  ``require_behavior`` (the host claims a behaviour the kit cannot witness);
* both present: the fixture runs, and the leg is ``executed-pass`` or ``executed-fail``. A run
  that cannot be created, read to its end or summarised fails the leg.

The refusal leg is the opposite gate: ``agents.evalSuite`` without ``trials`` but listing
``conformance-eval-trials``. Its behaviour is required only of such a host, so it is
``inapplicable`` elsewhere, with or without ``require_behavior``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio
import httpx

from wopeval.conformance import catalog as C
from wopeval.conformance.catalog import Fixture
from wopeval.conformance.client import WireClient, WireError
from wopeval.conformance.legs.common import Checker, RunCapture
from wopeval.conformance.legs.fixture_miss import check_fixture_miss
from wopeval.conformance.legs.fixtures_valid import check_fixtures
from wopeval.conformance.legs.refusal import check_refusal
from wopeval.conformance.legs.shape import check_content_free, check_wire_shape
from wopeval.conformance.legs.trajectory import check_trajectory
from wopeval.conformance.legs.trials import check_trial_stats, check_trials_per_task
from wopeval.conformance.report import ConformanceReport, RequirementResult, Status
from wopeval.conformance.suites import Suite, load_fixture, trial_plan


class ConformanceInputError(Exception):
    """The kit cannot start: the host is unreachable, its discovery is unusable, or the key."""


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
    if not advert.has(fixture.facet):
        return Gate(False, Status.INAPPLICABLE, f"{member} is not advertised")
    if fixture.facet == "trials" and suite is not None and advert.max_trials is not None:
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


async def _discover(client: WireClient) -> dict[str, Any]:
    try:
        reply = await client.discovery()
    except WireError as exc:
        raise ConformanceInputError(f"cannot reach the host: {exc}") from exc
    if reply.status != 200 or not isinstance(reply.body, dict):
        raise ConformanceInputError(
            f"GET /.well-known/openwop answered {reply.status} without a JSON object"
        )
    return reply.body


@dataclass(frozen=True)
class CaptureFailure:
    """A fixture run that could not be used; ``unauthorized`` means the API key was refused."""

    message: str
    unauthorized: bool = False


async def capture_run(
    client: WireClient, fixture: Fixture, suite: Suite, deadline_s: float
) -> RunCapture | CaptureFailure:
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


def _result(requirement: str, ck: Checker, fixtures: tuple[str, ...]) -> RequirementResult:
    status = Status.PASS if ck.passed else Status.FAIL
    reason = f"{ck.checks} checks" if ck.passed else f"{len(ck.failures)} of {ck.checks} failed"
    return RequirementResult(requirement, status, reason, ck.checks, tuple(ck.failures), fixtures)


def _not_run(requirement: str, gate: Gate, fixtures: tuple[str, ...]) -> RequirementResult:
    failures = (gate.reason,) if gate.status == Status.FAIL else ()
    return RequirementResult(requirement, gate.status, gate.reason, 0, failures, fixtures)


LegCheck = Callable[[RunCapture], Checker]
FIXTURE_LEGS: tuple[tuple[str, Fixture, LegCheck], ...] = (
    (C.TRAJECTORY_GRADED, C.TRAJECTORY_FIXTURE, check_trajectory),
    (C.TRIALS_PER_TASK, C.TRIALS_FIXTURE, check_trials_per_task),
    (C.TRIAL_STATS_FORMULA, C.TRIALS_FIXTURE, check_trial_stats),
    (C.FIXTURE_MISS_FAILS, C.FIXTURE_MISS_FIXTURE, check_fixture_miss),
)


def _load_all() -> dict[Fixture, Suite | str]:
    suites: dict[Fixture, Suite | str] = {}
    for fixture in C.FIXTURES:
        try:
            suites[fixture] = load_fixture(fixture)
        except (OSError, ValueError) as exc:
            suites[fixture] = f"cannot read {fixture.file_name}: {exc}"
    return suites


async def _capture_all(
    client: WireClient, runnable: dict[Fixture, Suite], deadline_s: float
) -> dict[Fixture, RunCapture | CaptureFailure]:
    """Run every runnable fixture concurrently (one task group, no stray tasks)."""
    captures: dict[Fixture, RunCapture | CaptureFailure] = {}

    async def one(fixture: Fixture, suite: Suite) -> None:
        captures[fixture] = await capture_run(client, fixture, suite, deadline_s)

    async with anyio.create_task_group() as group:
        for fixture, suite in runnable.items():
            group.start_soon(one, fixture, suite)
    return captures


def _fixture_results(
    gates: dict[Fixture, Gate], captures: dict[Fixture, RunCapture | CaptureFailure]
) -> list[RequirementResult]:
    results: list[RequirementResult] = []
    for requirement, fixture, check in FIXTURE_LEGS:
        ids = (fixture.fixture_id,)
        capture = captures.get(fixture)
        if not gates[fixture].runs or capture is None:
            results.append(_not_run(requirement, gates[fixture], ids))
        elif isinstance(capture, CaptureFailure):
            failure = (capture.message,)
            results.append(
                RequirementResult(requirement, Status.FAIL, capture.message, 1, failure, ids)
            )
        else:
            results.append(_result(requirement, check(capture), ids))
    return results


def _shape_results(
    advert: Advert,
    gates: dict[Fixture, Gate],
    captures: dict[Fixture, RunCapture | CaptureFailure],
    require: bool,
) -> list[RequirementResult]:
    good = [capture for capture in captures.values() if isinstance(capture, RunCapture)]
    if good:
        ids = tuple(capture.fixture.fixture_id for capture in good)
        return [
            _result(C.WIRE_SHAPE, check_wire_shape(good, advert.eval_suite or {}), ids),
            _result(C.CONTENT_FREE, check_content_free(good), ids),
        ]
    if advert.eval_suite is None:
        gate = Gate(False, Status.INAPPLICABLE, "agents.evalSuite is not advertised")
    elif any(g.runs or g.status != Status.INAPPLICABLE for g in gates.values()):
        why = "no fixture run completed, so there is no eval run to inspect"
        gate = Gate(False, Status.FAIL if require else Status.SKIPPED, why)
    else:
        gate = Gate(False, Status.INAPPLICABLE, "no RFC 0244 facet is advertised")
    return [_not_run(C.WIRE_SHAPE, gate, ()), _not_run(C.CONTENT_FREE, gate, ())]


async def _refusal_result(
    client: WireClient, advert: Advert, suites: dict[Fixture, Suite | str]
) -> RequirementResult:
    fixture = C.TRIALS_FIXTURE
    ids = (fixture.fixture_id,)
    if advert.eval_suite is None:
        gate = Gate(False, Status.INAPPLICABLE, "agents.evalSuite is not advertised")
    elif advert.has("trials"):
        gate = Gate(False, Status.INAPPLICABLE, "agents.evalSuite.trials is advertised")
    elif fixture.fixture_id not in advert.fixtures:
        gate = Gate(False, Status.INAPPLICABLE, f"discovery does not list {fixture.fixture_id}")
    elif isinstance(suites[fixture], str):
        gate = Gate(False, Status.FAIL, f"the kit cannot read its {fixture.fixture_id} fixture")
    else:
        gate = Gate(True)
    if not gate.runs:
        return _not_run(C.UNADVERTISED_REFUSED, gate, ids)
    try:
        reply = await client.create_eval_run(fixture)
    except WireError as exc:
        return RequirementResult(C.UNADVERTISED_REFUSED, Status.FAIL, str(exc), 1, (str(exc),), ids)
    if reply.status == 401:
        raise ConformanceInputError("the host refused the API key (401 on POST /runs)")
    return _result(C.UNADVERTISED_REFUSED, check_refusal(reply), ids)


async def run_conformance(
    base_url: str,
    api_key: str,
    *,
    require_behavior: bool = False,
    transport: httpx.AsyncBaseTransport | None = None,
    run_timeout_s: float = 120.0,
) -> ConformanceReport:
    """Check an OpenWOP host against RFC 0244 over HTTP; the kit's one entry point.

    Raises :class:`ConformanceInputError` when the kit cannot start (unreachable host, unusable
    discovery, refused API key). ``transport`` lets tests run a host in process
    (``httpx.ASGITransport``).
    """
    suites = _load_all()
    all_ids = tuple(fixture.fixture_id for fixture in C.FIXTURES)
    fixtures_valid = _result(C.FIXTURES_VALID, check_fixtures(suites), all_ids)
    async with WireClient(base_url, api_key, transport=transport) as client:
        advert = Advert.from_discovery(await _discover(client))
        gates = {
            fixture: gate_for(advert, fixture, None if isinstance(s, str) else s, require_behavior)
            for fixture, s in suites.items()
        }
        runnable = {f: s for f, s in suites.items() if gates[f].runs and not isinstance(s, str)}
        captures = await _capture_all(client, runnable, run_timeout_s)
        if any(isinstance(c, CaptureFailure) and c.unauthorized for c in captures.values()):
            raise ConformanceInputError("the host refused the API key (401 on POST /runs)")
        refusal = await _refusal_result(client, advert, suites)
    results = [
        fixtures_valid,
        *_fixture_results(gates, captures),
        *_shape_results(advert, gates, captures, require_behavior),
        refusal,
    ]
    results.sort(key=lambda result: C.REQUIREMENTS.index(result.requirement))
    return ConformanceReport(
        base_url=base_url,
        results=tuple(results),
        require_behavior=require_behavior,
        implementation=advert.implementation,
        advertised=dict(advert.eval_suite or {}),
        fixtures_listed=tuple(sorted(advert.fixtures)),
        run_ids={f.fixture_id: c.run_id for f, c in captures.items() if isinstance(c, RunCapture)},
    )
