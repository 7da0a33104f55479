"""Run the kit against a host: discovery, gating, the fixture runs, then every leg.

Gating (:mod:`wopeval.conformance.gating`, RFC 0244 §Conformance): each host leg needs its
``agents.evalSuite`` member and its fixture id in discovery ``fixtures``; inapplicable without the
member, skipped (``executed-fail`` with ``require_behavior``) without the fixture.

The refusal leg is the opposite gate: ``agents.evalSuite`` without ``trials`` but listing
``conformance-eval-trials``. Its behaviour is required only of such a host, so it is
``inapplicable`` elsewhere, with or without ``require_behavior``.

With ``extended``, the opt-in extension legs (:mod:`wopeval.conformance.extended`) run too,
after the eight RFC results and under their own ``wopeval.ext.*`` ids; their fixture runs feed
only their own legs, so the RFC results are the same with or without them. With ``core``, the
core host legs (:mod:`wopeval.conformance.core`) follow, on the workflow fixtures.
"""

from __future__ import annotations

from typing import Any

import httpx

from wopeval.conformance.catalog import (
    CONTENT_FREE,
    FIXTURE_MISS_FAILS,
    FIXTURE_MISS_FIXTURE,
    FIXTURES,
    FIXTURES_VALID,
    REQUIREMENTS,
    TRAJECTORY_FIXTURE,
    TRAJECTORY_GRADED,
    TRIAL_STATS_FORMULA,
    TRIALS_FIXTURE,
    TRIALS_PER_TASK,
    UNADVERTISED_REFUSED,
    WIRE_SHAPE,
    Fixture,
)
from wopeval.conformance.client import WireClient, WireError
from wopeval.conformance.core import core_results
from wopeval.conformance.extended import extension_results, load_extensions
from wopeval.conformance.gating import (
    Advert,
    Captured,
    CaptureFailure,
    Gate,
    LegCheck,
    capture_all,
    fixture_leg_results,
    gate_for,
    leg_result,
    not_run,
)
from wopeval.conformance.legs.common import RunCapture
from wopeval.conformance.legs.fixture_miss import check_fixture_miss
from wopeval.conformance.legs.fixtures_valid import check_fixtures
from wopeval.conformance.legs.refusal import check_refusal
from wopeval.conformance.legs.shape import check_content_free, check_wire_shape
from wopeval.conformance.legs.trajectory import check_trajectory
from wopeval.conformance.legs.trials import check_trial_stats, check_trials_per_task
from wopeval.conformance.report import ConformanceReport, RequirementResult, Status
from wopeval.conformance.suites import Suite, load_fixture
from wopeval.errors import UserError


class ConformanceInputError(UserError):
    """The kit cannot start: the host is unreachable, its discovery is unusable, or the key."""


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


FIXTURE_LEGS: tuple[tuple[str, Fixture, LegCheck], ...] = (
    (TRAJECTORY_GRADED, TRAJECTORY_FIXTURE, check_trajectory),
    (TRIALS_PER_TASK, TRIALS_FIXTURE, check_trials_per_task),
    (TRIAL_STATS_FORMULA, TRIALS_FIXTURE, check_trial_stats),
    (FIXTURE_MISS_FAILS, FIXTURE_MISS_FIXTURE, check_fixture_miss),
)


def _load_all() -> dict[Fixture, Suite | str]:
    suites: dict[Fixture, Suite | str] = {}
    for fixture in FIXTURES:
        try:
            suites[fixture] = load_fixture(fixture)
        except (OSError, ValueError) as exc:
            suites[fixture] = f"cannot read {fixture.file_name}: {exc}"
    return suites


def _shape_results(
    advert: Advert,
    gates: dict[Fixture, Gate],
    captures: dict[Fixture, Captured],
    require: bool,
) -> list[RequirementResult]:
    good = [capture for capture in captures.values() if isinstance(capture, RunCapture)]
    if good:
        ids = tuple(capture.fixture.fixture_id for capture in good)
        return [
            leg_result(WIRE_SHAPE, check_wire_shape(good, advert.eval_suite or {}), ids),
            leg_result(CONTENT_FREE, check_content_free(good), ids),
        ]
    if advert.eval_suite is None:
        gate = Gate(False, Status.INAPPLICABLE, "agents.evalSuite is not advertised")
    elif any(g.runs or g.status != Status.INAPPLICABLE for g in gates.values()):
        why = "no fixture run completed, so there is no eval run to inspect"
        gate = Gate(False, Status.FAIL if require else Status.SKIPPED, why)
    else:
        gate = Gate(False, Status.INAPPLICABLE, "no RFC 0244 facet is advertised")
    return [not_run(WIRE_SHAPE, gate, ()), not_run(CONTENT_FREE, gate, ())]


async def _refusal_result(
    client: WireClient, advert: Advert, suites: dict[Fixture, Suite | str]
) -> RequirementResult:
    fixture = TRIALS_FIXTURE
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
        return not_run(UNADVERTISED_REFUSED, gate, ids)
    try:
        reply = await client.create_eval_run(fixture)
    except WireError as exc:
        return RequirementResult(UNADVERTISED_REFUSED, Status.FAIL, str(exc), 1, (str(exc),), ids)
    if reply.status == 401:
        raise ConformanceInputError("the host refused the API key (401 on POST /runs)")
    return leg_result(UNADVERTISED_REFUSED, check_refusal(reply), ids)


def _gates(
    advert: Advert, suites: dict[Fixture, Suite | str], require: bool
) -> dict[Fixture, Gate]:
    return {
        fixture: gate_for(advert, fixture, None if isinstance(s, str) else s, require)
        for fixture, s in suites.items()
    }


def _runnable(
    suites: dict[Fixture, Suite | str], gates: dict[Fixture, Gate]
) -> dict[Fixture, Suite]:
    return {f: s for f, s in suites.items() if gates[f].runs and not isinstance(s, str)}


async def run_conformance(
    base_url: str,
    api_key: str,
    *,
    require_behavior: bool = False,
    extended: bool = False,
    core: bool = False,
    transport: httpx.AsyncBaseTransport | None = None,
    run_timeout_s: float = 120.0,
) -> ConformanceReport:
    """Check an OpenWOP host against RFC 0244 over HTTP; the kit's one entry point.

    Raises :class:`ConformanceInputError` when the kit cannot start (unreachable host, unusable
    discovery, refused API key). ``extended`` adds the opt-in ``wopeval.ext.*`` legs after the
    RFC results; ``core`` adds the core host legs (``core.*``, :mod:`wopeval.conformance.core`)
    on the workflow fixtures after those. ``transport`` lets tests run a host in process
    (``httpx.ASGITransport``).
    """
    suites = _load_all()
    ext_suites = load_extensions() if extended else {}
    all_ids = tuple(fixture.fixture_id for fixture in FIXTURES)
    fixtures_valid = leg_result(FIXTURES_VALID, check_fixtures(suites), all_ids)
    async with WireClient(base_url, api_key, transport=transport) as client:
        advert = Advert.from_discovery(await _discover(client))
        gates = _gates(advert, suites, require_behavior)
        ext_gates = _gates(advert, ext_suites, require_behavior)
        runnable = _runnable(suites, gates) | _runnable(ext_suites, ext_gates)
        every = await capture_all(client, runnable, run_timeout_s)
        if any(isinstance(c, CaptureFailure) and c.unauthorized for c in every.values()):
            raise ConformanceInputError("the host refused the API key (401 on POST /runs)")
        refusal = await _refusal_result(client, advert, suites)
    captures = {f: c for f, c in every.items() if f in suites}
    results = [
        fixtures_valid,
        *fixture_leg_results(FIXTURE_LEGS, gates, captures),
        *_shape_results(advert, gates, captures, require_behavior),
        refusal,
    ]
    results.sort(key=lambda result: REQUIREMENTS.index(result.requirement))
    if extended:
        ext_captures = {f: c for f, c in every.items() if f in ext_suites}
        results += extension_results(ext_suites, ext_gates, ext_captures)
    if core:
        results += await core_results(
            base_url, api_key, advert.fixtures, require_behavior=require_behavior,
            transport=transport,
        )  # fmt: skip
    return ConformanceReport(
        base_url=base_url,
        results=tuple(results),
        require_behavior=require_behavior,
        extended=extended,
        core=core,
        implementation=advert.implementation,
        advertised=dict(advert.eval_suite or {}),
        fixtures_listed=tuple(sorted(advert.fixtures)),
        run_ids={f.fixture_id: c.run_id for f, c in every.items() if isinstance(c, RunCapture)},
    )
