"""The core host legs (``--core``) end to end over HTTP, in process, against a fake host serving
the workflow fixtures: correct, deliberately broken one rule at a time, and missing fixtures.

A kit run against the fake host is seconds of waiting (a delayed run, a log left to settle) and
little work: the module runs the kit against every host at once, each host its own, and the
tests read the reports (:func:`reports`).
"""

from __future__ import annotations

import asyncio

import httpx
import pytest

from tests.conformance.fake_core_host import API_KEY, FIXTURES, FakeCoreHost
from tests.conformance.helpers import BASE_URL, statuses
from wopeval.conformance import ConformanceReport, Status, run_conformance
from wopeval.conformance import catalog as C
from wopeval.conformance import core as K
from wopeval.conformance.core_wire import parse_frames

PASS, FAIL, SKIPPED = Status.PASS.value, Status.FAIL.value, Status.SKIPPED.value


async def _kit(
    host: FakeCoreHost, *, require: bool = False, core: bool = True
) -> ConformanceReport:
    transport = httpx.ASGITransport(app=host.app())
    return await run_conformance(
        BASE_URL, API_KEY, require_behavior=require, core=core, transport=transport
    )


def _core(report: ConformanceReport) -> dict[str, str]:
    return {req: status for req, status in statuses(report).items() if req.startswith("core.")}


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

ONLY_NOOP = ("conformance-noop",)


class Reports:
    """The kit run against each host (by name), concurrently: its report, or what it raised,
    raised again for the test that reads it."""

    def __init__(self) -> None:
        self.hosts = {
            "correct": FakeCoreHost(),
            "without-core": FakeCoreHost(),
            **{defect: FakeCoreHost(defects=frozenset({defect})) for defect, _ in DEFECTS},
            "only-noop": FakeCoreHost(fixtures=ONLY_NOOP),
            "only-noop-required": FakeCoreHost(fixtures=ONLY_NOOP),
            "no-fixture": FakeCoreHost(fixtures=()),
        }
        self._done: dict[str, ConformanceReport | BaseException] = {}

    async def run(self) -> None:
        kits = [
            _kit(host, require=name.endswith("-required"), core=name != "without-core")
            for name, host in self.hosts.items()
        ]
        done = await asyncio.gather(*kits, return_exceptions=True)
        self._done = dict(zip(self.hosts, done, strict=True))

    def __getitem__(self, name: str) -> ConformanceReport:
        report = self._done[name]
        if isinstance(report, BaseException):
            raise report
        return report


@pytest.fixture(scope="module")
def reports() -> Reports:
    made = Reports()
    asyncio.run(made.run())
    return made


def test_core_correct_host_passes_every_core_leg(reports: Reports) -> None:
    report = reports["correct"]
    assert list(_core(report)) == list(K.CORE_REQUIREMENTS)
    assert set(_core(report).values()) == {PASS}, [r for r in report.results if r.failures]
    assert all(report.result(req).checks > 0 for req in K.CORE_REQUIREMENTS)
    # the RFC results come first and are unchanged (the fake advertises no agents.evalSuite)
    assert [r.requirement for r in report.results][: len(C.REQUIREMENTS)] == list(C.REQUIREMENTS)
    assert report.to_json()["core"] is True
    assert report.exit_code == 0


def test_core_legs_are_opt_in(reports: Reports) -> None:
    report = reports["without-core"]
    assert not _core(report)
    assert "core" not in report.to_json()


@pytest.mark.parametrize(("defect", "broken"), DEFECTS, ids=[d for d, _ in DEFECTS])
def test_core_broken_host_fails_the_matching_leg(
    reports: Reports, defect: str, broken: tuple[str, ...]
) -> None:
    report = reports[defect]
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


def test_core_leg_without_its_fixture_is_skipped_or_fails_when_required(
    reports: Reports,
) -> None:
    soft = _core(reports["only-noop"])
    noop_only = {K.POLL_CURSOR, K.STREAM_MODE_REFUSED, K.SSE_LAST_EVENT_ID}
    assert {req for req, s in soft.items() if s == PASS} == noop_only
    assert {req for req, s in soft.items() if s == SKIPPED} == set(K.CORE_REQUIREMENTS) - noop_only
    hard = reports["only-noop-required"]
    assert _core(hard)[K.RUN_CANCEL] == FAIL
    assert "conformance-cancellable" in hard.result(K.RUN_CANCEL).reason
    assert hard.exit_code == 1


def test_core_unlisted_fixture_host_never_gets_a_run(reports: Reports) -> None:
    report = reports["no-fixture"]
    assert set(_core(report).values()) == {SKIPPED}
    assert reports.hosts["no-fixture"].runs == {}
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
