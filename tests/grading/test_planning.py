"""Gate planning (``wopeval.grading.planning``): hand-worked binomial numbers, a brute-force
reference over exact rationals, the grader's own thresholds, and bad input."""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from wopeval.grading.intervals import clopper_pearson, task_clopper_pearson_of_sum
from wopeval.grading.planning import (
    MAX_SUITE_TRIALS,
    MAX_TASK_TRIALS,
    _aggregate_candidate,
    _bound_candidates,
    bound_minimum,
    check_errors,
    lowered,
    plan_suite_gate,
    plan_task_gate,
    rule_minimum,
    suite_minimum,
    tail,
    tasks_for_bound,
    total_law,
    upper_tail,
)

ODDS = {"alpha": 0.05, "power": 0.8}


def test_rule_minimum_reads_each_pass_rule_exactly() -> None:
    assert rule_minimum("all", 5, Fraction(1)) == 5
    assert rule_minimum("all", 5, Fraction(1, 2)) == 5  # every trial, whatever passScore
    assert rule_minimum("any", 5, Fraction(1)) == 1
    assert rule_minimum("mean", 5, Fraction(7, 10)) == 4  # ⌈3.5⌉
    # 0.7 × 10 is 7 exactly: a float product (7.000000000000001) would ask for 8
    assert rule_minimum("mean", 10, Fraction(7, 10)) == 7
    assert rule_minimum("mean", 3, Fraction(0)) == 0


def test_lowered_is_taken_between_decimals_and_floored_at_zero() -> None:
    assert lowered(0.9, 0.2) == 0.7  # not 0.6999999999999999
    assert lowered(0.05, 0.1) == 0.0
    assert lowered(1.0, 0.1) == 0.9


def test_bound_minimum_is_the_graders_clopper_pearson_count() -> None:
    # 95 %: the lower bound of 8/10 is 0.4439, of 9/10 0.5550: 9 passes certify 0.5
    assert clopper_pearson(8, 10).low < 0.5 < clopper_pearson(9, 10).low
    assert bound_minimum(10, Fraction(1, 2), 0.95) == 9
    # 5/5 gives 0.025^(1/5) = 0.478 < 0.5: no count of 5 certifies 0.5
    assert bound_minimum(5, Fraction(1, 2), 0.95) == 6
    assert bound_minimum(4, Fraction(0), 0.95) == 0
    # 1/10 bounds at 0.0025 ≥ 0.001, 0/10 at 0: one pass certifies 0.001
    assert bound_minimum(10, Fraction(1, 1000), 0.95) == 1


@pytest.mark.parametrize("n", [1, 2, 7, 20, 33])
@pytest.mark.parametrize("score", ["0.3", "0.5", "0.8", "0.9"])
def test_bound_minimum_matches_a_walk_over_every_count(n: int, score: str) -> None:
    s = Fraction(score)
    walk = next((c for c in range(n + 1) if clopper_pearson(c, n).low_exact >= s), n + 1)
    assert bound_minimum(n, s, 0.95) == walk


def test_0244_B_all_rule_with_a_perfect_task_needs_29_trials_at_mde_0_1() -> None:
    # rate 1 passes 'all' always; at 0.9 it passes with 0.9^n ≤ 0.05 from n = ⌈log 0.05 /
    # log 0.9⌉ = ⌈28.43⌉ = 29 (0.9^28 = 0.0523, 0.9^29 = 0.0471)
    plan = plan_task_gate(1.0, 0.1, "all", Fraction(1), **ODDS)
    assert plan.gate == "all"
    assert plan.trials == 29
    assert plan.pass_at_rate == 1.0
    assert plan.pass_at_lowered == pytest.approx(0.9**29, rel=1e-12)
    assert plan.reason is None


def test_0244_B_any_rule_hand_worked() -> None:
    # rate 0.6: passes 'any' with 1 − 0.4^n ≥ 0.8 from n = 2 (0.84); at 0.01: 1 − 0.99^2 = 0.0199
    plan = plan_task_gate(0.6, 0.59, "any", Fraction(1), **ODDS)
    assert plan.trials == 2
    assert plan.pass_at_rate == pytest.approx(0.84)
    assert plan.pass_at_lowered == pytest.approx(0.0199)
    # rate 0.5 needs n ≥ 3, at 0.1 the gate passes with 1 − 0.9^n ≤ 0.05 only for n = 0: none
    none = plan_task_gate(0.5, 0.4, "any", Fraction(1), **ODDS)
    assert none.gate == "any"
    assert none.trials is None
    assert none.reason is not None
    assert str(MAX_TASK_TRIALS) in none.reason


def test_mean_rule_says_why_no_count_decides() -> None:
    below = plan_task_gate(0.6, 0.1, "mean", Fraction(7, 10), **ODDS)
    assert below.trials is None
    assert below.reason == "the rate 0.6 is below passScore 0.7"
    still = plan_task_gate(0.9, 0.2, "mean", Fraction(7, 10), **ODDS)
    assert still.reason == "the lowered rate 0.7 still meets passScore"
    # the lower bound lifts the threshold above 0.7: 0.9 against 0.7 is then decidable
    # with the lower bound, passScore decides 'all' too: a rate below it never passes
    all_bound = plan_task_gate(0.9, 0.1, "all", Fraction(95, 100), level=0.95, **ODDS)
    assert (all_bound.gate, all_bound.trials) == ("all + lower bound", None)
    assert all_bound.reason == "the rate 0.9 is below passScore 0.95"
    bound = plan_task_gate(0.9, 0.2, "mean", Fraction(7, 10), level=0.95, **ODDS)
    assert bound.trials is not None
    assert bound.gate == "mean + lower bound"


def _exact_tail(minimum: int, n: int, rate: float) -> Fraction:
    p = Fraction(repr(rate))
    return sum(
        (math.comb(n, c) * p**c * (1 - p) ** (n - c) for c in range(max(minimum, 0), n + 1)),
        Fraction(0),
    )


def _brute(rate: float, mde: float, rule: str, score: Fraction, level: float | None) -> int | None:
    for n in range(1, 41):
        minimum = rule_minimum(rule, n, score)  # type: ignore[arg-type]
        if level is not None:
            walk = (c for c in range(n + 1) if clopper_pearson(c, n, level).low_exact >= score)
            minimum = max(minimum, next(walk, n + 1))
        if minimum > n:
            continue
        good = _exact_tail(minimum, n, rate)
        bad = _exact_tail(minimum, n, lowered(rate, mde))
        if good >= Fraction(4, 5) and bad <= Fraction(1, 20):
            return n
    return None


@pytest.mark.parametrize("rule", ["all", "any", "mean"])
@pytest.mark.parametrize("level", [None, 0.9])
@pytest.mark.parametrize(
    ("rate", "mde", "score"),
    [(1.0, 0.1, "1"), (0.95, 0.3, "0.5"), (0.9, 0.4, "0.6"), (0.8, 0.6, "0.5"), (0.6, 0.5, "0.2")],
)
def test_task_plans_agree_with_a_brute_force_over_rationals(
    rule: str, level: float | None, rate: float, mde: float, score: str
) -> None:
    plan = plan_task_gate(rate, mde, rule, Fraction(score), level=level, **ODDS)  # type: ignore[arg-type]
    expected = _brute(rate, mde, rule, Fraction(score), level)
    if expected is None:
        assert plan.trials is None or plan.trials > 40
    else:
        assert plan.trials == expected
        assert plan.pass_at_rate is not None
        assert plan.pass_at_lowered is not None
        assert plan.pass_at_rate >= 0.8
        assert plan.pass_at_lowered <= 0.05


def test_tail_is_the_binomial_upper_tail() -> None:
    assert float(tail(2, 3, 0.5)) == pytest.approx(0.5)  # 3 + 1 of 8
    assert float(tail(0, 3, 0.2)) == 1.0
    assert float(tail(4, 3, 0.9)) == 0.0


def test_total_law_is_the_poisson_binomial_law() -> None:
    assert list(total_law([0.5, 0.5], 2)) == pytest.approx([1 / 16, 4 / 16, 6 / 16, 4 / 16, 1 / 16])
    # one trial each at 0.3 and 0.6: 0.7·0.4, 0.3·0.4 + 0.7·0.6, 0.3·0.6
    assert list(total_law([0.3, 0.6], 1)) == pytest.approx([0.28, 0.54, 0.18])
    assert list(total_law([0.3], 3)) == pytest.approx([0.343, 0.441, 0.189, 0.027])
    assert list(total_law([0.3], 0)) == [1.0]


def test_upper_tail_hand_worked() -> None:
    law = total_law([0.5], 2)  # 1/4, 1/2, 1/4
    assert upper_tail(law, 0) == 1.0
    assert upper_tail(law, -3) == 1.0
    assert upper_tail(law, 1) == pytest.approx(0.75)
    assert upper_tail(law, 2) == pytest.approx(0.25)
    assert upper_tail(law, 3) == 0.0  # above the largest total
    assert upper_tail(law, 9) == 0.0
    import numpy as np

    assert upper_tail(np.array([0.6, 0.6]), 0) == 1.0  # float excess above 1 is cut


def test_suite_gate_hand_worked() -> None:
    # one task at 1 (passScore 1: every trial must pass): at 0.5, 0.5^n ≤ 0.05 from n = 5
    one = plan_suite_gate([1.0], 0.5, Fraction(1), **ODDS)
    assert (one.gate, one.trials) == ("suite", 5)
    assert one.pass_at_lowered == pytest.approx(1 / 32)
    # two such tasks: 0.5^(2n) ≤ 0.05 from n = 3 (1/64; n = 2 gives 1/16)
    two = plan_suite_gate([1.0, 1.0], 0.5, Fraction(1), **ODDS)
    assert two.trials == 3
    assert two.pass_at_lowered == pytest.approx(1 / 64)
    assert two.pass_at_rate == 1.0


def test_suite_gate_says_why_none() -> None:
    empty = plan_suite_gate([], 0.1, Fraction(1), **ODDS)
    assert (empty.gate, empty.reason) == ("suite", "the suite has no task")
    empty_bound = plan_suite_gate([], 0.1, Fraction(1), level=0.95, **ODDS)
    assert empty_bound.gate == "lower-bound"
    below = plan_suite_gate([0.5, 0.6], 0.1, Fraction(7, 10), **ODDS)
    assert below.gate == "suite"
    assert below.reason == "the mean rate 0.55 is below passScore 0.7"
    still = plan_suite_gate([0.9, 0.9], 0.2, Fraction(7, 10), **ODDS)
    assert still.reason == "the lowered mean rate 0.7 still meets passScore"
    far = plan_suite_gate([0.72, 0.72], 0.03, Fraction(7, 10), **ODDS)
    assert far.reason == f"no trial count up to {MAX_SUITE_TRIALS} per task decides it with 2 tasks"


def test_lower_bound_gate_counts_the_tasks_it_needs() -> None:
    # one task at 1: its aggregate bound over m tasks is 0.025^(1/m) ≥ 0.5 from m = 6
    assert tasks_for_bound(1.0, Fraction(1, 2), 0.95) == 6
    assert 0.025 ** (1 / 5) < 0.5 <= 0.025 ** (1 / 6)
    plan = plan_suite_gate([1.0], 0.6, Fraction(1, 2), level=0.95, **ODDS)
    assert plan.gate == "lower-bound"
    assert plan.trials is None
    assert plan.reason == "its lower bound needs ≥ 6 tasks at the mean rate 1"
    assert tasks_for_bound(0.5, Fraction(1, 2), 0.95) is None  # at passScore: never


def test_suite_minimum_is_the_graders_threshold() -> None:
    # the RFC gate: 2 tasks × 5 trials at passScore 0.7 need 7 passes in all
    assert suite_minimum(2, 5, Fraction(7, 10), None) == 7
    # lower-bound: the smallest total whose task-clustered bound meets 0.7, and not below 7
    found = suite_minimum(20, 5, Fraction(7, 10), 0.95)
    bound = task_clopper_pearson_of_sum
    assert 70 < found <= 100  # above the RFC gate's 70 passes of 100
    assert bound(Fraction(found, 5), 20, 0.95).low_exact >= Fraction(7, 10)
    assert bound(Fraction(found - 1, 5), 20, 0.95).low_exact < Fraction(7, 10)
    # 8 tasks: even 8 of 8 bounds at 0.025^(1/8) = 0.631 < 0.7: no total does
    assert suite_minimum(8, 5, Fraction(7, 10), 0.95) == 41
    assert suite_minimum(1, 3, Fraction(1, 2), 0.95) == 4  # one task never certifies 0.5


def test_lower_bound_suite_plan_is_decided_by_the_graders_bound() -> None:
    rates = [1.0] * 12
    plan = plan_suite_gate(rates, 0.5, Fraction(1, 2), level=0.95, **ODDS)
    assert plan.trials is not None
    total = suite_minimum(12, plan.trials, Fraction(1, 2), 0.95)
    law = total_law([0.5] * 12, plan.trials)
    assert plan.pass_at_lowered == pytest.approx(float(law[total:].sum()))


@pytest.mark.parametrize(
    ("alpha", "power", "named"),
    [
        (0.0, 0.8, "alpha"),
        (1.0, 0.8, "alpha"),
        (0.05, 0.05, "power"),
        (0.05, 1.0, "power"),
        (0.5, 0.3, "power"),
    ],
)
def test_error_rates_no_plan_can_meet_are_refused(alpha: float, power: float, named: str) -> None:
    with pytest.raises(ValueError, match=f"^{named} must lie strictly between"):
        check_errors(alpha, power)
    with pytest.raises(ValueError, match=named):
        plan_task_gate(0.9, 0.1, "all", Fraction(1), alpha=alpha, power=power)
    with pytest.raises(ValueError, match=named):
        plan_suite_gate([0.9], 0.1, Fraction(1), alpha=alpha, power=power)


@pytest.mark.parametrize("m", [1, 5, 20])
@pytest.mark.parametrize("n", [1, 3, 7])
@pytest.mark.parametrize(("score", "level"), [("0.3", 0.95), ("0.5", 0.9), ("0.7", 0.95),
                                              ("0.8", 0.8)])  # fmt: skip
def test_the_float_candidate_is_the_settled_threshold(
    m: int, n: int, score: str, level: float
) -> None:
    s = Fraction(score)
    top = m * n
    walk = next(
        (t for t in range(1, top + 1)
         if task_clopper_pearson_of_sum(Fraction(t, n), m, level).low_exact >= s),
        top + 1,
    )  # fmt: skip
    assert _aggregate_candidate(m, n, s, level) == walk
    assert suite_minimum(m, n, s, level) == max(walk, math.ceil(s * top))


@pytest.mark.parametrize("score", ["0", "0.001", "0.3", "0.5", "0.9", "1"])
@pytest.mark.parametrize("level", [0.8, 0.95])
def test_bound_candidates_are_the_graders_counts(score: str, level: float) -> None:
    import numpy as np

    ns = np.arange(1, 41)
    found = _bound_candidates(ns, Fraction(score), level)
    assert list(found) == [bound_minimum(int(n), Fraction(score), level) for n in ns]


def _walk_tasks(mean: float, score: Fraction, level: float) -> int:
    exact = Fraction(mean).limit_denominator(10**9)
    return next(
        m for m in range(1, 400)
        if task_clopper_pearson_of_sum(exact * m, m, level).low_exact >= score
    )  # fmt: skip


@pytest.mark.parametrize(
    ("mean", "score", "level"),
    [
        (1.0, "0.35", 0.95),
        (1.0, "0.01", 0.95),
        (0.9237, "0.8", 0.9),
        (0.95, "0.6", 0.8),
        (1.0, "0.9", 0.95),
        (0.7, "0.5", 0.95),
    ],
)
def test_tasks_for_bound_is_the_first_task_count_that_certifies(
    mean: float, score: str, level: float
) -> None:
    assert tasks_for_bound(mean, Fraction(score), level) == _walk_tasks(
        mean, Fraction(score), level
    )


def test_tasks_for_bound_hand_worked() -> None:
    # one perfect task per unit: 0.025^(1/m) ≥ 0.35 from m = 4 (0.025^(1/3) = 0.292)
    assert tasks_for_bound(1.0, Fraction(35, 100), 0.95) == 4
    assert tasks_for_bound(1.0, Fraction(1, 100), 0.95) == 1  # 0.025 ≥ 0.01 at once


def test_mean_rule_at_exactly_pass_score_is_not_called_below_it() -> None:
    # rate 0.5 = passScore 1/2: P(Binomial(n, 1/2) ≥ n/2) stays near 1/2 < 0.8 for every n, so
    # no count decides; the rate meets passScore, so the reason is the search's, not "below"
    plan = plan_task_gate(0.5, 0.2, "mean", Fraction(1, 2), **ODDS)
    assert plan.trials is None
    assert plan.reason == f"no trial count up to {MAX_TASK_TRIALS} passes 'mean' as asked"


def test_lower_bound_suite_with_exactly_the_tasks_it_needs_says_the_search_failed() -> None:
    # 8 tasks at 0.9 are exactly what the bound needs at passScore 0.5 (needed = m, not more),
    # but the total only hovers at the bound's edge: no n ≤ 200 reaches power 0.99
    assert tasks_for_bound(0.9, Fraction(1, 2), 0.95) == 8
    plan = plan_suite_gate([0.9] * 8, 0.45, Fraction(1, 2), alpha=0.05, power=0.99, level=0.95)
    assert (plan.gate, plan.trials) == ("lower-bound", None)
    searched = f"no trial count up to {MAX_SUITE_TRIALS} per task"
    assert plan.reason == f"{searched} decides it with 8 tasks"


def test_lower_bound_suite_that_no_task_count_certifies_says_so() -> None:
    # a mean at passScore never lifts the bound to it (tasks_for_bound is None)
    plan = plan_suite_gate([0.5], 0.2, Fraction(1, 2), level=0.95, **ODDS)
    assert (plan.gate, plan.trials) == ("lower-bound", None)
    assert plan.reason == "no number of tasks up to 100000 lifts its lower bound to passScore"


def test_suite_gate_decides_at_exactly_the_error_rates() -> None:
    # one task at 1 against 1/2 with passScore 1: the lowered suite passes with 0.5^n, exactly
    # 1/32 at n = 5 (a power of two, so the float law is exact): alpha = 1/32 accepts n = 5
    tie = plan_suite_gate([1.0], 0.5, Fraction(1), alpha=1 / 32, power=0.8)
    assert (tie.trials, tie.pass_at_lowered) == (5, 1 / 32)
    # two tasks at 1/2 against 0, passScore 1/2: one pass of two trials is enough at n = 1,
    # 1 − 1/4 = 0.75 exactly, the power asked (n = 2 needs 2 of 4: 11/16 < 0.75)
    at_power = plan_suite_gate([0.5, 0.5], 0.5, Fraction(1, 2), alpha=0.05, power=0.75)
    assert (at_power.trials, at_power.pass_at_rate, at_power.pass_at_lowered) == (1, 0.75, 0.0)


@pytest.mark.parametrize(("mde", "trials"), [(0.1581, 199), (0.158, None)])
def test_suite_gate_searches_exactly_up_to_max_suite_trials(mde: float, trials: int | None) -> None:
    # one task at 0.6 against passScore 1/2, c ≥ ⌈n/2⌉: at mde 0.1581 the first n with
    # P(pass | 0.6) ≥ 0.8 and P(pass | 0.4419) ≤ 0.05 is 199; at mde 0.158 it is 201, past the
    # limit of 200 (found by scipy.stats.binom.sf over n ≤ 202)
    assert MAX_SUITE_TRIALS == 200
    plan = plan_suite_gate([0.6], mde, Fraction(1, 2), **ODDS)
    assert plan.trials == trials


def test_suite_minimum_at_pass_score_zero_is_no_pass_at_all() -> None:
    # passScore 0: the bound (≥ 0) meets it at a total of 0, with or without the lower bound
    assert suite_minimum(3, 2, Fraction(0), 0.95) == 0
    assert suite_minimum(3, 2, Fraction(0), None) == 0


def test_a_pass_score_exactly_at_the_bound_is_met() -> None:
    # the grader compares low_exact ≥ passScore: a passScore equal to the bound of 6 of 6
    # tasks is met by 6 tasks (and by a total of 6 over 6 tasks × 1 trial), not 7
    at = task_clopper_pearson_of_sum(Fraction(6), 6, 0.95).low_exact
    assert tasks_for_bound(1.0, at, 0.95) == 6
    assert suite_minimum(6, 1, at, 0.95) == 6


def test_tasks_for_bound_reads_the_mean_to_nine_digits() -> None:
    # 0.999 is not 1: over 6 tasks the bound of 5.994 falls below 0.54 (that of 6 is
    # 0.025^(1/6) = 0.5407), so it takes 7
    assert tasks_for_bound(0.999, Fraction(54, 100), 0.95) == 7
    assert tasks_for_bound(1.0, Fraction(54, 100), 0.95) == 6


def test_0244_B_task_gate_search_starts_at_one_trial() -> None:
    # rate 1 falling to 0.04: one trial decides ('all' passes with 1 ≥ 0.8, and with 0.04 ≤ 0.05)
    plan = plan_task_gate(1.0, 0.96, "all", Fraction(1), **ODDS)
    assert plan.trials == 1
    assert plan.pass_at_lowered == pytest.approx(0.04)


def test_0244_B_task_gate_search_ends_at_exactly_max_task_trials() -> None:
    # 'all' from rate 1 needs (1 − mde)^n ≤ 0.05: n ≥ ln 0.05 / ln(1 − mde).
    # mde 0.002993: 999.41 → 1000 = MAX_TASK_TRIALS, the last count searched (0.997007^999 =
    # 0.05006 > 0.05, ^1000 = 0.04991); mde 0.00299: 1000.42 → 1001, one past it: none
    assert MAX_TASK_TRIALS == 1000
    last = plan_task_gate(1.0, 0.002993, "all", Fraction(1), **ODDS)
    assert last.trials == 1000
    assert last.pass_at_lowered == pytest.approx(0.997007**1000, rel=1e-9)
    past = plan_task_gate(1.0, 0.00299, "all", Fraction(1), **ODDS)
    assert past.trials is None
    assert past.reason == "no trial count up to 1000 passes 'all' as asked"
