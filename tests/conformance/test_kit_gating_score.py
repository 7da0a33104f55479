"""The RFC 0246 extension legs: an unmatched golden trial keeps its score; ``mean`` reads the gate.

``wopeval.ext.unmatched-keeps-score`` over ``conformance-eval-unmatched-score`` and
``wopeval.ext.gating-score-mean`` over ``conformance-eval-gating-mean``, against the in-process
fake host (hand-worked grades) and on the fixtures alone.
"""

from __future__ import annotations

import copy
from fractions import Fraction
from typing import Any

import httpx

from tests.conformance.fake_host import API_KEY, FULL_FACET, FakeHost
from tests.conformance.helpers import BASE_URL, statuses
from wopeval.conformance import ConformanceReport, Status, run_conformance
from wopeval.conformance import catalog as C
from wopeval.conformance.legs.ext_fixtures import ext_fixture_errors
from wopeval.conformance.legs.gating_score import TrialFacts, trial_facts
from wopeval.conformance.suites import load_fixture, tasks_of

PASS, INAPPLICABLE = Status.PASS.value, Status.INAPPLICABLE.value


async def _run(host: FakeHost) -> ConformanceReport:
    transport = httpx.ASGITransport(app=host.app())
    return await run_conformance(BASE_URL, API_KEY, extended=True, transport=transport)


async def test_0246_A_unmatched_golden_trial_keeps_its_output_score() -> None:
    report = await _run(FakeHost(defects=frozenset({"unmatched-zeroes-score"})))
    # unmatched-right-output: refund before lookup, output "refund approved…": score 1 stays.
    # aggregateScore: (1 + 0 + 1)/3 = 2/3; the defect reports (0 + 0 + 1)/3.
    assert report.result(C.EXT_UNMATCHED_KEEPS_SCORE).failures == (
        "unmatched-right-output trial 0: score 0.0, the output score is 1.0 "
        "(trajectory unmatched; §A: the score stays the output score)",
        "unmatched-right-output: summary score 0.0, the mean output score is 1.0",
        f"aggregateScore {1 / 3!r}, the mean of the task output scores is {2 / 3!r}",
    )


async def test_0246_B_mean_rule_and_suite_read_the_gating_score() -> None:
    report = await _run(FakeHost(defects=frozenset({"mean-reads-mean-score"})))
    # mixed-gates: scores 1, 1 (unmatched), 0 (failed closed): meanScore 2/3, gating 1/3 < 0.6.
    # Suite: gating aggregate (1/3 + 2/3)/2 = 1/2 < 0.6, aggregateScore (2/3 + 1)/2 = 5/6.
    assert report.result(C.EXT_GATING_SCORE_MEAN).failures == (
        "mixed-gates: passed=True; passRule 'mean' reads the gating score 0.333333 "
        "(gated trials count 0) against passScore 0.6: False (meanScore 0.666667 would give True)",
        "suite passed=True, but the gating aggregate 0.5 is below passScore 0.6 "
        "(RFC 0246; aggregateScore 0.833333 would pass)",
    )


def test_0246_B_the_script_fixes_which_trials_are_gated() -> None:
    suite = load_fixture(C.GATING_MEAN_FIXTURE)
    mixed, one_gate = tasks_of(suite)
    assert [trial_facts(mixed, i) for i in range(3)] == [
        TrialFacts(Fraction(1), unmatched=False, failed_closed=False),
        TrialFacts(Fraction(1), unmatched=True, failed_closed=False),  # refund before lookup
        TrialFacts(Fraction(0), unmatched=False, failed_closed=True),  # amountMinor 99999
    ]
    assert [trial_facts(one_gate, i).gated for i in range(3)] == [False, False, True]
    right, wrong, matched = tasks_of(load_fixture(C.UNMATCHED_SCORE_FIXTURE))
    facts = [trial_facts(task, 0) for task in (right, wrong, matched)]
    assert [(fact.score, fact.unmatched) for fact in facts] == [
        (Fraction(1), True),
        (Fraction(0), True),
        (Fraction(1), False),
    ]


def _without(*members: str) -> dict[str, object]:
    return {key: value for key, value in FULL_FACET.items() if key not in members}


async def test_0246_gating_leg_needs_every_facet_of_its_fixture() -> None:
    for member in ("trials", "trajectory", "fixtureMatching"):
        got = await _run(FakeHost(eval_suite=_without(member)))
        result = got.result(C.EXT_GATING_SCORE_MEAN)
        assert result.status.value == INAPPLICABLE
        assert result.reason == f"agents.evalSuite.{member} is not advertised"
        keeps = statuses(got)[C.EXT_UNMATCHED_KEEPS_SCORE]
        assert keeps == (INAPPLICABLE if member == "trajectory" else PASS)


def _broken(fixture: C.Fixture, edit: Any) -> list[str]:
    suite = copy.deepcopy(load_fixture(fixture))
    edit(suite)
    return ext_fixture_errors(fixture, suite)


def test_0246_fixture_designs_that_would_make_the_legs_vacuous_are_refused() -> None:
    def all_rule(suite: dict[str, Any]) -> None:
        suite["trials"]["passRule"] = "all"

    def serve_the_miss(suite: dict[str, Any]) -> None:
        suite["tasks"][0]["fixtures"]["toolResponses"][1]["argsMatch"] = "ignore"

    def tie(suite: dict[str, Any]) -> None:
        suite["thresholds"]["passScore"] = 0.5  # the gating aggregate is exactly 1/2

    def wrong_output(suite: dict[str, Any]) -> None:
        suite["tasks"][0]["input"]["output"] = "refund declined"

    assert _broken(C.GATING_MEAN_FIXTURE, all_rule) == [
        "design: needs passRule 'mean', a passScore and golden tasks the kit can grade"
    ]
    assert "design: needs a trial that fails closed" in _broken(
        C.GATING_MEAN_FIXTURE, serve_the_miss
    )
    assert _broken(C.GATING_MEAN_FIXTURE, tie) == [
        "design: the mean task score must meet passScore, the gating aggregate must not",
        "design: a decision lies within 0.01 of passScore",
    ]
    assert _broken(C.UNMATCHED_SCORE_FIXTURE, wrong_output) == [
        "design: needs unmatched trials whose output matches and does not match"
    ]
