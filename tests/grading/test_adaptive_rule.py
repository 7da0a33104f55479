"""The sequential rule of ``x-wopeval-adaptive`` (Wald's SPRT with the Ville-exact boundaries
``1/α`` and ``β``): hand-worked boundaries, exact ties, the error guarantee computed exactly over
every outcome sequence, and waves that never run past a possible stop."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.hypothesis_counts import examples
from wopeval.grading.adaptive import (
    OperatingCharacteristic,
    Stop,
    boundaries,
    decision_at,
    first_stop,
    next_wave,
    operating_characteristic,
)
from wopeval.suite.adaptive import AdaptivePlan, exact

F = Fraction


@pytest.fixture(autouse=True)
def _boundaries_afresh() -> None:
    """Each case computes its boundaries: an earlier test's cached table would hide the rule
    under test (a mutant, under mutation testing)."""
    boundaries.cache_clear()


def plan(
    p0: str = "0.7",
    p1: str = "0.9",
    alpha: str = "0.05",
    beta: str | None = None,
    *,
    min_trials: int = 1,
    max_trials: int = 20,
) -> AdaptivePlan:
    low, high = F(p0), F(p1)
    return AdaptivePlan(
        rule="sprt",
        alpha=F(alpha),
        beta=F(beta if beta is not None else alpha),
        threshold=(low + high) / 2,
        p0=low,
        p1=high,
        min_trials=min_trials,
        max_trials=max_trials,
    )


# p0 0.7, p1 0.9, α = β = 0.05. Per pass the log-LR gains a = ln(9/7) ≈ 0.25131, per failure it
# loses b = ln(0.3/0.1) = ln 3 ≈ 1.09861; "above" needs log-LR ≥ ln 20 ≈ 2.99573, "below" ≤ −ln 20.
#   all passes: 12·a ≈ 3.0158 ≥ 2.9957 but 11·a ≈ 2.7645 < it  → above first at n = 12;
#   one failure: (n−1)·a − b ≥ 2.9957 ⇔ n − 1 ≥ 16.29           → above first at n = 18;
#   no pass: 3·b ≈ 3.2958 ≥ 2.9957, 2·b ≈ 2.197 < it             → below first at n = 3;
#   one pass: f·b − a ≥ 2.9957 ⇔ f ≥ 2.955 → 3 failures         → below at n = 4;
#   two passes: f ≥ (2.9957 + 2a)/b ≈ 3.184 → 4 failures        → below at n = 6.
HAND = plan()


def test_adaptive_hand_worked_boundaries() -> None:
    bounds = boundaries(HAND)
    assert bounds.above[1] == 2  # none decides: the sentinel n + 1, as documented
    assert bounds.above[11] == 12  # no count of 11 decides above
    assert bounds.above[12] == 12
    assert bounds.above[17] == 17
    assert bounds.above[18] == 17
    assert bounds.below[2] == -1  # no count of 2 decides below
    assert bounds.below[3] == 0
    assert bounds.below[4] == 1
    assert bounds.below[5] == 1
    assert bounds.below[6] == 2
    assert len(bounds.above) == len(bounds.below) == HAND.max_trials + 1


@pytest.mark.parametrize(
    ("n", "c", "expected"),
    [
        (12, 12, "above"),
        (11, 11, None),
        (18, 17, "above"),
        (17, 16, None),
        (3, 0, "below"),
        (2, 0, None),
        (4, 1, "below"),
        (6, 2, "below"),
        (6, 3, None),
        (20, 16, None),  # 0.8 at the maximum: undecided
    ],
)
def test_adaptive_hand_worked_decisions(n: int, c: int, expected: str | None) -> None:
    assert decision_at(HAND, n, c) == expected


def test_adaptive_nothing_decides_before_min_or_after_max() -> None:
    late = plan(min_trials=5)
    assert decision_at(late, 3, 0) is None  # would be "below" from minTrials 1
    assert decision_at(late, 4, 0) is None
    assert decision_at(late, 5, 0) == "below"
    assert decision_at(HAND, 21, 21) is None
    assert decision_at(HAND, 20, 20) == "above"
    assert boundaries(late).above[4] == 5
    assert boundaries(late).below[4] == -1


def test_adaptive_exact_tie_at_the_upper_boundary_decides() -> None:
    # p0 1/4, p1 1/2: each pass doubles LR, so 4 passes give LR = 16 = 1/α exactly at α 1/16.
    tie = plan("0.25", "0.5", "0.0625", "0.01")
    assert decision_at(tie, 4, 4) == "above"
    assert decision_at(tie, 3, 3) is None
    short = plan("0.25", "0.5", "0.0624", "0.01")
    assert decision_at(short, 4, 4) is None  # LR 16 < 1/0.0624
    assert decision_at(short, 5, 5) == "above"


def test_adaptive_exact_tie_at_the_lower_boundary_decides() -> None:
    # p0 1/2, p1 3/4: each failure halves LR, so 2 failures give LR = 1/4 = β exactly at β 0.25.
    tie = plan("0.5", "0.75", "0.01", "0.25")
    assert decision_at(tie, 2, 0) == "below"
    assert decision_at(tie, 1, 0) is None
    short = plan("0.5", "0.75", "0.01", "0.2499")
    assert decision_at(short, 2, 0) is None  # LR 1/4 > 0.2499
    assert decision_at(short, 3, 0) == "below"


def test_adaptive_beta_and_alpha_act_on_their_own_side() -> None:
    loose_beta = plan(alpha="0.05", beta="0.3")
    # ln(1/0.3) ≈ 1.204 ≤ 2·b: two failures decide below; above still needs 12 passes.
    assert decision_at(loose_beta, 2, 0) == "below"
    assert decision_at(loose_beta, 11, 11) is None
    assert decision_at(loose_beta, 12, 12) == "above"


def test_adaptive_first_stop_over_outcomes() -> None:
    assert first_stop(HAND, [True] * 20) == Stop(12, 12, "above")
    assert first_stop(HAND, [False] * 20) == Stop(3, 0, "below")
    assert first_stop(HAND, [True, False, False, False]) == Stop(4, 1, "below")
    assert first_stop(HAND, [True] * 11) == Stop(11, 11, None)  # ran out undecided
    assert first_stop(HAND, []) == Stop(0, 0, None)
    borderline = [i % 5 != 0 for i in range(30)]  # 4 in 5: inside the zone
    assert first_stop(HAND, borderline) == Stop(20, 16, None)  # 30 given, 20 read


def test_adaptive_first_stop_is_the_first_crossing_not_the_last() -> None:
    # Three failures decide below at 3, whatever passes follow.
    assert first_stop(HAND, [False, False, False] + [True] * 17) == Stop(3, 0, "below")


def test_adaptive_plain_one_trial_minimum_two_maximum() -> None:
    tiny = plan(min_trials=1, max_trials=2)
    assert first_stop(tiny, [True, True]) == Stop(2, 2, None)
    assert next_wave(tiny, 0, 0) == 2
    assert next_wave(tiny, 2, 2) == 0


def test_adaptive_next_wave_hand_worked() -> None:
    assert next_wave(HAND, 0, 0) == 3  # three failures are the soonest stop
    assert next_wave(HAND, 3, 3) == 4  # 3/3: four failures (below[7] = 3) are the soonest stop
    assert next_wave(HAND, 3, 2) == 3  # 2 passes: below needs 4 failures, at n = 6
    assert next_wave(HAND, 11, 11) == 1  # one more pass decides above
    assert next_wave(HAND, 19, 15) == 1  # the last trial
    assert next_wave(HAND, 20, 16) == 0
    assert next_wave(plan(min_trials=5), 0, 0) == 5


def test_adaptive_next_wave_counts_from_three_passes() -> None:
    # 3/3: below needs c ≤ below[m] = 3 → m with below[m] ≥ 3; above needs 3 + d ≥ above[3+d].
    bounds = boundaries(HAND)
    d = next_wave(HAND, 3, 3)
    m = 3 + d
    assert 3 + d >= bounds.above[m] or bounds.below[m] >= 3


def test_adaptive_operating_characteristic_hand_worked() -> None:
    # At most 3 trials, rate 1/2: only three failures decide (below), 1/8; every path runs 3.
    assert operating_characteristic(plan(max_trials=3), F(1, 2)) == OperatingCharacteristic(
        F(0), F(1, 8), F(3)
    )
    # p0 1/2, p1 3/4, β 1/4: two failures decide below at 2 (LR 1/4); at 3 trials one pass
    # gives LR 3/8, no decision. P(below) = 1/4; E[n] = 2·1/4 + 3·3/4 = 11/4.
    tie = plan("0.5", "0.75", "0.01", "0.25", max_trials=3)
    assert operating_characteristic(tie, F(1, 2)) == OperatingCharacteristic(
        F(0), F(1, 4), F(11, 4)
    )
    # At most 4, rate 1/2: below at 3 after FFF (1/8) and at 4 after one pass in four that
    # did not start FFF (PFFF, FPFF, FFPF: 3/16); E[n] = 3·1/8 + 4·7/8 = 31/8.
    assert operating_characteristic(plan(max_trials=4), F(1, 2)) == OperatingCharacteristic(
        F(0), F(5, 16), F(31, 8)
    )
    # p0 1/4, p1 1/2, α 1/16: four passes decide above (LR 16); rate 1 reaches it surely.
    sure = plan("0.25", "0.5", "0.0625", "0.01", max_trials=6)
    assert operating_characteristic(sure, F(1)) == OperatingCharacteristic(F(1), F(0), F(4))
    # At rate 1/2 (a failure multiplies LR by 2/3): above at 4 after PPPP (1/16), at 6 after
    # five passes and one failure among the first four (LR 32·2/3 ≥ 16; 4/64); never at 5
    # (16·2/3 < 16). P(above) = 1/8, E[n] = 4·1/16 + 6·15/16 = 47/8.
    assert operating_characteristic(sure, F(1, 2)) == OperatingCharacteristic(
        F(1, 8), F(0), F(47, 8)
    )


@pytest.mark.parametrize("max_trials", [5, 20, 40])
@pytest.mark.parametrize(("alpha", "beta"), [("0.05", "0.05"), ("0.1", "0.2"), ("0.01", "0.05")])
def test_adaptive_error_rates_hold_exactly_outside_the_zone(
    max_trials: int, alpha: str, beta: str
) -> None:
    p = plan(alpha=alpha, beta=beta, max_trials=max_trials)
    for rate in ("0.5", "0.6", "0.7"):  # at or below p0: "above" is the wrong decision
        wrong = operating_characteristic(p, F(rate)).above
        assert wrong <= p.alpha, (rate, float(wrong))
    for rate in ("0.9", "0.95", "0.99"):  # at or above p1: "below" is the wrong decision
        wrong = operating_characteristic(p, F(rate)).below
        assert wrong <= p.beta, (rate, float(wrong))


def test_adaptive_clear_rates_stop_early_on_average() -> None:
    p = plan(max_trials=40)
    at_half = operating_characteristic(p, F("0.5")).mean_trials
    at_095 = operating_characteristic(p, F("0.95")).mean_trials
    at_08 = operating_characteristic(p, F("0.8")).mean_trials
    # Computed exactly above: ≈ 8.07, 16.62 and 27.24 trials of at most 40.
    assert at_half < 9
    assert at_095 < 17
    assert at_half < at_095 < at_08 < 40  # the borderline rate gets the most trials


def test_exact_reads_the_decimal_written() -> None:
    assert exact(0.8) == F(4, 5)
    assert exact(0.8) - exact(0.1) == F(7, 10)  # 0.8 − 0.1 is 0.7000000000000001 in floats
    assert exact(1.0) == 1
    assert exact(0.05) == F(1, 20)


@st.composite
def _plans(draw: st.DrawFn) -> AdaptivePlan:
    p0 = draw(st.sampled_from(["0.1", "0.3", "0.5", "0.6", "0.7", "0.75"]))
    width = draw(st.sampled_from(["0.05", "0.1", "0.2"]))
    p1 = str(F(p0) + F(width))
    alpha = draw(st.sampled_from(["0.01", "0.05", "0.1", "0.2"]))
    beta = draw(st.sampled_from(["0.01", "0.05", "0.1", "0.2"]))
    max_trials = draw(st.integers(2, 40))
    min_trials = draw(st.integers(1, max_trials - 1))
    low, high = F(p0), F(p1)
    return AdaptivePlan(
        "sprt", F(alpha), F(beta), (low + high) / 2, low, high, min_trials, max_trials
    )


@settings(max_examples=examples(150), deadline=None)
@given(p=_plans(), outcomes=st.lists(st.booleans(), max_size=45))
def test_adaptive_waves_never_run_past_a_stop(p: AdaptivePlan, outcomes: list[bool]) -> None:
    """Running each wave whole, as the engine does, stops exactly where the first crossing is."""
    n = c = 0
    while n < p.max_trials and n < len(outcomes):
        if decision_at(p, n, c) is not None:
            break
        wave = next_wave(p, n, c)
        assert wave >= 1
        # No trial inside the wave can decide, whatever its outcome.
        for j in range(1, wave):
            for extra in range(j + 1):
                assert decision_at(p, n + j, c + extra) is None
        if n + wave < p.max_trials:  # the wave ends where some outcome could decide
            m = n + wave
            assert decision_at(p, m, c + wave) is not None or decision_at(p, m, c) is not None
        taken = outcomes[n : n + wave]
        n += len(taken)
        c += sum(taken)
        if len(taken) < wave:
            break
    stop = first_stop(p, outcomes)
    assert (stop.trials, stop.passed) == (n, c)
