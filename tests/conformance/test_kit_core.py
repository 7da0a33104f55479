"""The core host legs (``--core``) end to end over HTTP, in process, against a fake host serving
the workflow fixtures: correct, deliberately broken one rule at a time, and missing fixtures.
"""

from __future__ import annotations

import httpx
import pytest

from tests.conformance.fake_core_host import API_KEY, FIXTURES, FakeCoreHost
from tests.conformance.helpers import BASE_URL, statuses
from wopeval.conformance import ConformanceReport, Status, run_conformance
from wopeval.conformance import catalog as C
from wopeval.conformance import core as K
from wopeval.conformance.core_wire import parse_frames

PASS, FAIL, SKIPPED = Status.PASS.value, Status.FAIL.value, Status.SKIPPED.value


async def _kit(host: FakeCoreHost, *, require: bool = False) -> ConformanceReport:
    transport = httpx.ASGITransport(app=host.app())
    return await run_conformance(
        BASE_URL, API_KEY, require_behavior=require, core=True, transport=transport
    )


def _core(report: ConformanceReport) -> dict[str, str]:
    return {req: status for req, status in statuses(report).items() if req.startswith("core.")}


async def test_core_correct_host_passes_every_core_leg() -> None:
    report = await _kit(FakeCoreHost())
    assert list(_core(report)) == list(K.CORE_REQUIREMENTS)
    assert set(_core(report).values()) == {PASS}, [r for r in report.results if r.failures]
    assert all(report.result(req).checks > 0 for req in K.CORE_REQUIREMENTS)
    # the RFC results come first and are unchanged (the fake advertises no agents.evalSuite)
    assert [r.requirement for r in report.results][: len(C.REQUIREMENTS)] == list(C.REQUIREMENTS)
    assert report.to_json()["core"] is True
    assert report.exit_code == 0


async def test_core_legs_are_opt_in() -> None:
    transport = httpx.ASGITransport(app=FakeCoreHost().app())
    report = await run_conformance(BASE_URL, API_KEY, transport=transport)
    assert not _core(report)
    assert "core" not in report.to_json()


# defect → the core legs it breaks (every other core leg must still pass).
DEFECTS: list[tuple[str, tuple[str, ...]]] = [
    ("identity-drops-payload", (K.RUN_LIFECYCLE,)),
    ("delay-reports-pending", (K.RUN_LIFECYCLE,)),
    ("failure-without-error", (K.FAILURE_PATH,)),
    ("double-cancelled", (K.TERMINAL_ONCE,)),
    ("cancel-terminal-200", (K.RUN_CANCEL,)),
    ("replay-new-run", (K.IDEMPOTENT_REPLAY,)),
    ("poll-cursor-inclusive", (K.POLL_CURSOR,)),
    ("stream-mode-ignored", (K.STREAM_MODE_REFUSED,)),
    ("last-event-id-ignored", (K.SSE_LAST_EVENT_ID,)),
    ("etag-stale", (K.SNAPSHOT_ETAG,)),
]


@pytest.mark.parametrize(("defect", "broken"), DEFECTS, ids=[d for d, _ in DEFECTS])
async def test_core_broken_host_fails_the_matching_leg(
    defect: str, broken: tuple[str, ...]
) -> None:
    report = await _kit(FakeCoreHost(defects=frozenset({defect})))
    got = _core(report)
    assert {req for req, status in got.items() if status == FAIL} == set(broken), [
        report.result(req).failures for req in got if got[req] == FAIL
    ]
    assert {req: got[req] for req in got if req not in broken} == dict.fromkeys(
        (req for req in got if req not in broken), PASS
    )
    for req in broken:
        assert report.result(req).failures, req
    assert report.exit_code == 1


def test_core_every_fake_defect_is_exercised() -> None:
    from tests.conformance.fake_core_host import DEFECTS as ALL

    assert {d for d, _ in DEFECTS} == ALL


async def test_core_leg_without_its_fixture_is_skipped_or_fails_when_required() -> None:
    only_noop = ("conformance-noop",)
    soft = _core(await _kit(FakeCoreHost(fixtures=only_noop)))
    noop_only = {K.POLL_CURSOR, K.STREAM_MODE_REFUSED, K.SSE_LAST_EVENT_ID}
    assert {req for req, s in soft.items() if s == PASS} == noop_only
    assert {req for req, s in soft.items() if s == SKIPPED} == set(K.CORE_REQUIREMENTS) - noop_only
    hard = await _kit(FakeCoreHost(fixtures=only_noop), require=True)
    assert _core(hard)[K.RUN_CANCEL] == FAIL
    assert "conformance-cancellable" in hard.result(K.RUN_CANCEL).reason
    assert hard.exit_code == 1


async def test_core_unlisted_fixture_host_never_gets_a_run() -> None:
    host = FakeCoreHost(fixtures=())
    report = await _kit(host)
    assert set(_core(report).values()) == {SKIPPED}
    assert host.runs == {}
    assert FIXTURES == K.CORE_FIXTURES


async def test_core_a_host_that_refuses_every_create_fails_every_leg() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/.well-known/openwop":
            return httpx.Response(200, json={"protocolVersions": ["2.0"], "fixtures": FIXTURES})
        return httpx.Response(404, json={"error": "not_found", "message": "no workflow"})

    report = await run_conformance(
        BASE_URL, API_KEY, core=True, transport=httpx.MockTransport(handler)
    )
    assert set(_core(report).values()) == {FAIL}
    assert all("404 not_found" in report.result(r).failures[0] for r in K.CORE_REQUIREMENTS)


def test_core_sse_frames_parse_ids_events_and_multiline_data() -> None:
    text = (
        "retry: 1000\n\n: keep-alive\n\n"
        'id: 3\nevent: run.started\ndata: {"a":\ndata: 1}\n\n'
        "id: 4\r\ndata: not json\r\n\r\n"
    )
    frames = parse_frames(text)
    assert [(f.id, f.event, f.data) for f in frames] == [
        ("3", "run.started", {"a": 1}),
        ("4", None, "not json"),
    ]
