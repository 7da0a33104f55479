"""The opt-in extension legs (``extended=True``) against the in-process fake host.

A correct fake passes every ``wopeval.ext.*`` leg; each extension defect makes exactly the leg
that owns the broken rule ``executed-fail``, and leaves every RFC 0244 result as it was. Without
``extended`` the report holds the eight RFC ids only.
"""

from __future__ import annotations

import httpx
import pytest

from tests.conformance.fake_host import ALL_FIXTURES, API_KEY, FULL_FACET, FakeHost
from tests.conformance.helpers import BASE_URL, run_kit, statuses
from wopeval.conformance import ConformanceReport, Status, run_conformance
from wopeval.conformance import catalog as C

PASS, FAIL = Status.PASS.value, Status.FAIL.value
INAPPLICABLE, SKIPPED = Status.INAPPLICABLE.value, Status.SKIPPED.value
EXT_HOST_LEGS = C.EXTENSIONS[1:]


async def run_extended(host: FakeHost, *, require: bool = False) -> ConformanceReport:
    transport = httpx.ASGITransport(app=host.app())
    return await run_conformance(
        BASE_URL, API_KEY, require_behavior=require, extended=True, transport=transport
    )


def _rfc(report: ConformanceReport) -> list[tuple[str, str, int, tuple[str, ...]]]:
    return [
        (r.requirement, r.status.value, r.checks, r.failures)
        for r in report.results
        if r.requirement in C.REQUIREMENTS
    ]


@pytest.mark.parametrize("flavor", ["markers", "causation", "position"])
async def test_ext_correct_host_passes_every_extension_leg(flavor: str) -> None:
    host = FakeHost(flavor=flavor)
    report = await run_extended(host)
    got = statuses(report)
    assert list(got) == [*C.REQUIREMENTS, *C.EXTENSIONS]
    assert {req: got[req] for req in C.EXTENSIONS} == dict.fromkeys(C.EXTENSIONS, PASS)
    assert all(report.result(req).checks > 0 for req in C.EXTENSIONS)
    assert report.exit_code == 0
    assert report.to_json()["extended"] is True
    assert len(host.created) == 8
    assert {f.fixture_id for f in C.EXT_FIXTURES} <= set(report.run_ids)


async def test_ext_without_the_flag_the_report_is_the_eight_rfc_ids() -> None:
    plain = await run_kit(FakeHost())
    assert [r.requirement for r in plain.results] == list(C.REQUIREMENTS)
    assert "extended" not in plain.to_json()
    assert not set(plain.run_ids) & {f.fixture_id for f in C.EXT_FIXTURES}
    extended = await run_extended(FakeHost())
    assert _rfc(extended) == _rfc(plain)
    assert all(not r.requirement.startswith("0244.") for r in extended.results[8:])
    assert all(r.requirement.startswith(C.EXT_PREFIX) for r in extended.results[8:])


# defect → the one extension leg it breaks.
EXT_DEFECTS: list[tuple[str, str]] = [
    ("efficiency-outside-brackets", C.EXT_EFFICIENCY_COUNTED),
    ("efficiency-last-trial", C.EXT_EFFICIENCY_COUNTED),
    ("efficiency-gated", C.EXT_EFFICIENCY_NOT_GATED),
    ("cost-misses-judge", C.EXT_COST_EVERY_TRIAL),
    ("memory-bleed", C.EXT_TRIAL_ISOLATION),
    ("onmiss-live-uncounted", C.EXT_ONMISS_LIVE_REPORTED),
    ("unmatched-zeroes-score", C.EXT_UNMATCHED_KEEPS_SCORE),
    ("mean-reads-mean-score", C.EXT_GATING_SCORE_MEAN),
]


@pytest.mark.parametrize(("defect", "broken"), EXT_DEFECTS, ids=[d for d, _ in EXT_DEFECTS])
@pytest.mark.parametrize("flavor", ["markers", "position"])
async def test_ext_broken_host_fails_exactly_the_matching_leg(
    defect: str, broken: str, flavor: str
) -> None:
    report = await run_extended(FakeHost(flavor=flavor, defects=frozenset({defect})))
    got = statuses(report)
    assert {req for req, status in got.items() if status == FAIL} == {broken}
    assert report.result(broken).failures
    assert _rfc(report) == _rfc(await run_kit(FakeHost(flavor=flavor)))
    assert report.exit_code == 1


async def test_0244_C_efficiency_failure_names_the_bracket_means() -> None:
    report = await run_extended(FakeHost(defects=frozenset({"efficiency-last-trial"})))
    failures = report.result(C.EXT_EFFICIENCY_COUNTED).failures
    # lean-lookup: trial 2 alone makes 2 calls; the mean over 1, 1, 2 is 4/3.
    assert failures[0] == (
        "lean-lookup: efficiency.toolCallCount 2.0, the mean over the trials' brackets is "
        f"{4 / 3!r} (per trial [1.0, 1.0, 2.0])"
    )
    # busy-but-correct: 12 of (12, 10, 12) calls reported; mean 34/3. Tokens 160000 vs 440000/3.
    assert any(f.startswith("busy-but-correct: efficiency.toolCallCount 12.0") for f in failures)


async def test_0244_C_judge_usage_is_outside_every_bracket() -> None:
    """The judge's usage follows each trial's bracket: counted in cost, never in efficiency."""
    report = await run_extended(FakeHost(defects=frozenset({"efficiency-outside-brackets"})))
    failures = report.result(C.EXT_EFFICIENCY_COUNTED).failures
    # one judge call (500 in, 50 out) a trial: modelCallCount 4/3 + 1, inputTokens 440/3 + 500
    assert any("lean-lookup: efficiency.modelCallCount 2.33" in f for f in failures)
    assert not any("toolCallCount" in f for f in failures)
    assert statuses(report)[C.EXT_COST_EVERY_TRIAL] == PASS


async def test_0244_B_cost_failure_splits_inside_and_outside_the_brackets() -> None:
    report = await run_extended(FakeHost(defects=frozenset({"cost-misses-judge"})))
    (failure,) = report.result(C.EXT_COST_EVERY_TRIAL).failures
    # 0.1695 inside the brackets + 6 judge calls × 0.0005 = 0.1725.
    assert failure.startswith("totalCostUsd 0.1695, every provider.usage in the log sums to 0.1725")
    assert failure.endswith("0.003 outside)")


async def test_0244_B_memory_bleed_names_the_trials_that_saw_it() -> None:
    report = await run_extended(FakeHost(defects=frozenset({"memory-bleed"})))
    failures = report.result(C.EXT_TRIAL_ISOLATION).failures
    # trial 0 recalls the seed; trials 1 and 2 recall trial 0's write; per task: passedCount 1.
    assert [f.split(":")[0] for f in failures] == [
        "recall-seeded trial 1",
        "recall-seeded trial 2",
        "recall-seeded",
        "recall-seeded",
        "recall-unseeded trial 1",
        "recall-unseeded trial 2",
        "recall-unseeded",
        "recall-unseeded",
    ]
    assert "trials.passedCount 1, want 3" in failures[2]


def _without(member: str) -> dict[str, object]:
    return {key: value for key, value in FULL_FACET.items() if key != member}


async def test_ext_legs_are_gated_on_their_facet() -> None:
    report = await run_extended(FakeHost(eval_suite=_without("trials")), require=True)
    got = statuses(report)
    for req in (C.EXT_EFFICIENCY_COUNTED, C.EXT_COST_EVERY_TRIAL, C.EXT_TRIAL_ISOLATION):
        assert got[req] == INAPPLICABLE
        assert report.result(req).reason == "agents.evalSuite.trials is not advertised"
    assert got[C.EXT_ONMISS_LIVE_REPORTED] == PASS
    live = await run_extended(FakeHost(eval_suite=_without("fixtureMatching")), require=True)
    assert statuses(live)[C.EXT_ONMISS_LIVE_REPORTED] == INAPPLICABLE
    assert statuses(live)[C.EXT_TRIAL_ISOLATION] == PASS


async def test_ext_legs_without_eval_suite_are_inapplicable() -> None:
    host = FakeHost(eval_suite=None)
    report = await run_extended(host, require=True)
    got = statuses(report)
    assert got[C.EXT_FIXTURES_VALID] == PASS  # server-free
    assert {got[req] for req in EXT_HOST_LEGS} == {INAPPLICABLE}
    assert host.created == []


async def test_ext_fixture_not_listed_skips_or_fails_under_require_behavior() -> None:
    fixtures = tuple(f for f in ALL_FIXTURES if f != "conformance-eval-isolation")
    soft = await run_extended(FakeHost(fixtures=fixtures))
    assert statuses(soft)[C.EXT_TRIAL_ISOLATION] == SKIPPED
    assert "does not list conformance-eval-isolation" in soft.result(C.EXT_TRIAL_ISOLATION).reason
    assert soft.exit_code == 0
    hard = await run_extended(FakeHost(fixtures=fixtures), require=True)
    assert statuses(hard)[C.EXT_TRIAL_ISOLATION] == FAIL
    assert statuses(hard)[C.EXT_EFFICIENCY_COUNTED] == PASS
    assert hard.exit_code == 1
    # An RFC-only listing never makes an RFC leg fail for a missing extension fixture.
    extension_ids = {fixture.fixture_id for fixture in C.EXT_FIXTURES}
    rfc_only = tuple(f for f in ALL_FIXTURES if f not in extension_ids)
    bare = await run_extended(FakeHost(fixtures=rfc_only), require=True)
    assert {statuses(bare)[req] for req in EXT_HOST_LEGS} == {FAIL}
    assert [r.status for r in bare.results if r.requirement in C.REQUIREMENTS[1:7]] == [
        Status.PASS
    ] * 6


async def test_ext_max_trials_below_the_fixture_is_inapplicable() -> None:
    facet = {**FULL_FACET, "trials": {"maxTrials": 2}}
    report = await run_extended(FakeHost(eval_suite=facet), require=True)
    assert statuses(report)[C.EXT_TRIAL_ISOLATION] == INAPPLICABLE
    assert "maxTrials 2" in report.result(C.EXT_COST_EVERY_TRIAL).reason
