"""The kit end to end over HTTP (in process) against a fake host, correct and deliberately broken.

A correct fake passes every leg it is gated into; each defect makes exactly the leg that owns the
broken rule report ``executed-fail``, and leaves every other leg passing.
"""

from __future__ import annotations

import httpx
import pytest
from starlette.types import Receive, Scope, Send

from tests.conformance.fake_host import ALL_FIXTURES, FULL_FACET, FakeHost
from tests.conformance.helpers import BASE_URL, run_kit, statuses
from wopeval.conformance import ConformanceInputError, Status, run_conformance
from wopeval.conformance import catalog as C

PASS, FAIL = Status.PASS.value, Status.FAIL.value
INAPPLICABLE, SKIPPED = Status.INAPPLICABLE.value, Status.SKIPPED.value
HOST_LEGS = (
    C.TRAJECTORY_GRADED,
    C.TRIALS_PER_TASK,
    C.TRIAL_STATS_FORMULA,
    C.FIXTURE_MISS_FAILS,
    C.WIRE_SHAPE,
    C.CONTENT_FREE,
)


def _without(member: str) -> dict[str, object]:
    return {key: value for key, value in FULL_FACET.items() if key != member}


@pytest.mark.parametrize("flavor", ["markers", "causation", "position"])
async def test_0244_correct_host_passes_every_gated_leg(flavor: str) -> None:
    host = FakeHost(flavor=flavor)
    report = await run_kit(host)
    assert statuses(report) == {
        C.FIXTURES_VALID: PASS,
        **dict.fromkeys(HOST_LEGS, PASS),
        C.UNADVERTISED_REFUSED: INAPPLICABLE,
    }
    assert report.exit_code == 0
    assert all(r.checks > 0 for r in report.results if r.status == Status.PASS)
    assert sorted(report.run_ids) == sorted(f.fixture_id for f in C.FIXTURES)
    assert len(host.created) == 3


async def test_0244_A_redacted_inputs_are_recomputed_from_the_script() -> None:
    """UQ 6: a host that keeps ``inputs`` off the wire is graded on the suite's own args."""
    report = await run_kit(FakeHost(redact_inputs=True))
    assert statuses(report)[C.TRAJECTORY_GRADED] == PASS
    broken = await run_kit(FakeHost(redact_inputs=True, defects=frozenset({"greedy-any-order"})))
    assert statuses(broken)[C.TRAJECTORY_GRADED] == FAIL


# defect → the requirement it breaks (every other leg must still pass).
DEFECTS: list[tuple[str, tuple[str, ...]]] = [
    ("greedy-any-order", (C.TRAJECTORY_GRADED,)),
    ("unmatched-passes", (C.TRAJECTORY_GRADED,)),
    ("subset-as-exact", (C.TRAJECTORY_GRADED,)),
    ("trajectory-score-fraction", (C.TRAJECTORY_GRADED,)),
    ("duplicate-tool-event", (C.TRAJECTORY_GRADED,)),
    ("missing-trial-index", (C.TRIALS_PER_TASK,)),
    ("trial-count-absent", (C.TRIALS_PER_TASK,)),
    ("naive-pass-hat-k", (C.TRIAL_STATS_FORMULA,)),
    ("population-stderr", (C.TRIAL_STATS_FORMULA,)),
    ("miss-keeps-score", (C.FIXTURE_MISS_FAILS,)),
    ("miss-not-counted", (C.FIXTURE_MISS_FAILS,)),
    ("tools-in-block", (C.WIRE_SHAPE, C.CONTENT_FREE)),
    ("prose-score-label", (C.WIRE_SHAPE, C.CONTENT_FREE)),
    ("output-in-scored", (C.CONTENT_FREE,)),
]


@pytest.mark.parametrize(("defect", "broken"), DEFECTS, ids=[d for d, _ in DEFECTS])
async def test_0244_broken_host_fails_the_matching_leg(
    defect: str, broken: tuple[str, ...]
) -> None:
    report = await run_kit(FakeHost(defects=frozenset({defect})))
    got = statuses(report)
    assert {req for req, status in got.items() if status == FAIL} == set(broken)
    assert all(got[req] == PASS for req in HOST_LEGS if req not in broken)
    assert all(report.result(req).failures for req in broken)
    assert report.exit_code == 1


async def test_0244_A_greedy_matched_count_is_named() -> None:
    report = await run_kit(FakeHost(defects=frozenset({"greedy-any-order"})))
    assert report.result(C.TRAJECTORY_GRADED).failures == (
        "forbidden-hit: trajectory block differs from the reference grade: "
        "matchedCount 1 (reference 2)",
    )


async def test_0244_D_miss_keeping_its_score_is_caught_on_event_and_summary() -> None:
    report = await run_kit(FakeHost(defects=frozenset({"miss-keeps-score"})))
    failures = report.result(C.FIXTURE_MISS_FAILS).failures
    assert any("summary score is 1.0, want 0" in f for f in failures)
    assert any("eval.scored (trial 0): score 1.0, want 0" in f for f in failures)


async def test_0244_B_trial_stats_failures_name_the_formula_value() -> None:
    report = await run_kit(FakeHost(defects=frozenset({"naive-pass-hat-k"})))
    failures = report.result(C.TRIAL_STATS_FORMULA).failures
    # (2/3)^2 = 4/9 reported; C(2,2)/C(3,2) = 1/3 by formula. c = 1: (1/3)^2 vs 0.
    assert failures[0].startswith("passes-two-of-three: trials.passHatK 0.444")
    assert "gives 0.333" in failures[0]
    assert failures[1].startswith("passes-one-of-three: trials.passHatK 0.111")
    assert len(failures) == 2  # the suite-level trialStats were left correct


async def test_0244_G_refusal_leg_runs_on_a_host_without_trials() -> None:
    report = await run_kit(FakeHost(eval_suite=_without("trials")))
    got = statuses(report)
    assert got[C.UNADVERTISED_REFUSED] == PASS
    assert got[C.TRIALS_PER_TASK] == got[C.TRIAL_STATS_FORMULA] == INAPPLICABLE
    assert report.result(C.TRIALS_PER_TASK).reason == "agents.evalSuite.trials is not advertised"
    assert got[C.TRAJECTORY_GRADED] == got[C.FIXTURE_MISS_FAILS] == PASS


async def test_0244_G_accepting_an_unadvertised_feature_fails() -> None:
    host = FakeHost(eval_suite=_without("trials"), defects=frozenset({"accept-unadvertised"}))
    report = await run_kit(host)
    assert statuses(report)[C.UNADVERTISED_REFUSED] == FAIL
    assert "accepted (201" in report.result(C.UNADVERTISED_REFUSED).failures[0]


async def test_0244_G_refusal_leg_needs_the_trials_fixture_listed() -> None:
    fixtures = tuple(f for f in ALL_FIXTURES if f != "conformance-eval-trials")
    report = await run_kit(FakeHost(eval_suite=_without("trials"), fixtures=fixtures), require=True)
    result = report.result(C.UNADVERTISED_REFUSED)
    assert result.status == Status.INAPPLICABLE
    assert result.reason == "discovery does not list conformance-eval-trials"


async def test_host_without_eval_suite_is_inapplicable_everywhere() -> None:
    host = FakeHost(eval_suite=None)
    for require in (False, True):
        report = await run_kit(host, require=require)
        got = statuses(report)
        assert got[C.FIXTURES_VALID] == PASS
        assert {got[r] for r in (*HOST_LEGS, C.UNADVERTISED_REFUSED)} == {INAPPLICABLE}
        assert report.exit_code == 0
    assert host.created == []


async def test_advertised_facet_without_its_fixture_skips_or_fails_under_require_behavior() -> None:
    fixtures = tuple(f for f in ALL_FIXTURES if f != "conformance-eval-trajectory")
    host = FakeHost(fixtures=fixtures)
    soft = await run_kit(host)
    assert statuses(soft)[C.TRAJECTORY_GRADED] == SKIPPED
    assert "does not list conformance-eval-trajectory" in soft.result(C.TRAJECTORY_GRADED).reason
    assert soft.exit_code == 0
    hard = await run_kit(host, require=True)
    assert statuses(hard)[C.TRAJECTORY_GRADED] == FAIL
    assert hard.exit_code == 1
    # The other legs still ran on the fixtures that are listed.
    assert statuses(hard)[C.TRIALS_PER_TASK] == statuses(hard)[C.WIRE_SHAPE] == PASS


async def test_shape_legs_without_any_run() -> None:
    only_noop = ("conformance-noop",)
    soft = await run_kit(FakeHost(fixtures=only_noop))
    assert statuses(soft)[C.WIRE_SHAPE] == statuses(soft)[C.CONTENT_FREE] == SKIPPED
    hard = await run_kit(FakeHost(fixtures=only_noop), require=True)
    assert statuses(hard)[C.WIRE_SHAPE] == FAIL
    bare = await run_kit(FakeHost(eval_suite={"modes": ["golden"]}), require=True)
    assert statuses(bare)[C.WIRE_SHAPE] == INAPPLICABLE
    assert bare.result(C.WIRE_SHAPE).reason == "no RFC 0244 facet is advertised"


async def test_max_trials_below_the_fixture_makes_trials_inapplicable() -> None:
    facet = {**FULL_FACET, "trials": {"maxTrials": 2}}
    report = await run_kit(FakeHost(eval_suite=facet), require=True)
    assert statuses(report)[C.TRIALS_PER_TASK] == INAPPLICABLE
    assert "maxTrials 2" in report.result(C.TRIALS_PER_TASK).reason


async def test_wire_shape_checks_the_facet_members() -> None:
    facet = {**FULL_FACET, "fixtureMatching": True, "regressionVerdict": "yes"}
    report = await run_kit(FakeHost(eval_suite=facet))
    assert report.result(C.WIRE_SHAPE).failures == (
        "agents.evalSuite.regressionVerdict is 'yes', want a boolean",
    )


async def test_refused_api_key_is_bad_input() -> None:
    with pytest.raises(ConformanceInputError, match="refused the API key"):
        await run_kit(FakeHost(), key="wrong")


async def test_unreachable_host_is_bad_input() -> None:
    with pytest.raises(ConformanceInputError, match="cannot reach the host"):
        await run_conformance("http://127.0.0.1:9", "k")


async def test_discovery_that_is_not_a_json_object_is_bad_input() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(404, json={"error": "not_found", "message": "no"})

    transport = httpx.MockTransport(handler)
    with pytest.raises(ConformanceInputError, match="answered 404"):
        await run_conformance(BASE_URL, "k", transport=transport)


async def test_a_run_that_fails_to_create_fails_its_leg_only() -> None:
    host = FakeHost()
    app = host.app()

    async def flaky(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["path"] == "/runs" and host.runs:
            # the second create onwards: 503 without a body
            await send({"type": "http.response.start", "status": 503, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        await app(scope, receive, send)

    transport = httpx.ASGITransport(app=flaky)
    report = await run_conformance(BASE_URL, "test-key", transport=transport)
    got = statuses(report)
    assert sorted(
        got[r] for r in (C.TRAJECTORY_GRADED, C.TRIALS_PER_TASK, C.FIXTURE_MISS_FAILS)
    ) == [
        FAIL,
        FAIL,
        PASS,
    ]
    failed = [r for r in report.results if r.status == Status.FAIL]
    assert all("answered 503" in r.reason for r in failed)
    assert got[C.WIRE_SHAPE] == PASS  # the one run that completed is still inspected
