"""Power and sample size of the paired regression verdict (``wopeval.compare.power``):
hand-worked exact laws, the critical counts read from the methods themselves, the simulation
through the very same methods, and bad designs."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from wopeval.compare.power import (
    MAX_TASKS,
    CriticalUps,
    Design,
    MethodPlan,
    discordance,
    exact_powers,
    normal_guess,
    plan_exact,
    plan_methods,
    plan_simulated,
    reach_needs,
    regressed_on_counts,
    simulated_regressed,
)


def _design(rates: tuple[float, ...] = (1.0,), **kw: object) -> Design:
    base: dict[str, object] = {
        "rates": rates, "trials": 1, "pass_rule": "all", "pass_score": Fraction(1),
        "mde": 0.5, "alpha": 0.05, "power": 0.8, "resamples": 1000,
    }  # fmt: skip
    base.update(kw)
    return Design(**base)  # type: ignore[arg-type]


@pytest.mark.parametrize("method", ["sign-test", "mcnemar"])
def test_0244_F_critical_counts_are_the_exact_binomial_tests(method: str) -> None:
    # all N discordant tasks down: two-sided p = 2/2^N < 0.05 from N = 6 (1/32); one up of N:
    # 2·(1 + N)/2^N < 0.05 from N = 9 (20/512 = 0.039; N = 8 gives 18/256 = 0.070)
    assert CriticalUps(method, _design()).upto(10) == [-1, -1, -1, -1, -1, -1, 0, 0, 0, 1, 1]
    assert regressed_on_counts(method, 0, 6, _design())
    assert not regressed_on_counts(method, 0, 5, _design())
    assert not regressed_on_counts(method, 6, 0, _design())  # improved, not regressed


def test_discordance_hand_worked() -> None:
    # one trial: up = the baseline fails and the candidate passes, down the reverse
    up, down = discordance("sign-test", _design(), 0.7, 0.5)
    assert up == pytest.approx(0.3 * 0.5)
    assert down == pytest.approx(0.7 * 0.5)
    # two trials at 0.5 both: P(c′ > c) = P(c′ < c) = (1 − P(tie)) / 2 = (1 − 6/16) / 2
    up, down = discordance("sign-test", _design(trials=2), 0.5, 0.5)
    assert up == down == pytest.approx(5 / 16)
    # mcnemar with 'all' over two trials: passes with p², so up = (1 − 0.49)·0.25
    up, down = discordance("mcnemar", _design(trials=2), 0.7, 0.5)
    assert up == pytest.approx(0.51 * 0.25)
    assert down == pytest.approx(0.49 * 0.75)


@pytest.mark.parametrize("method", ["sign-test", "mcnemar"])
def test_0244_F_exact_power_hand_worked(method: str) -> None:
    # every task at 1 falling to 0.5 on one trial: a task goes down with 1/2, never up, so the
    # verdict is 'regressed' when at least 6 of m go down: P(Binomial(m, 1/2) ≥ 6).
    # m = 14: 1 − 3473/16384 = 0.788; m = 15: 1 − 4944/32768 = 0.849 ≥ 0.8
    plan = plan_exact(method, _design())
    assert plan.tasks == 15
    assert plan.power == pytest.approx(1 - 4944 / 32768)
    assert plan.false_regression == 0.0  # nothing can go either way at rate 1
    assert plan.how == "exact"
    step = exact_powers(method, _design(), CriticalUps(method, _design()))
    powers = [step()[1] for _ in range(14)]
    assert powers[:5] == [0.0] * 5  # below six tasks no exact test reaches 0.05
    assert powers[5] == pytest.approx(1 / 64)
    assert powers[13] == pytest.approx(1 - 3473 / 16384)


def test_exact_false_regression_is_below_alpha_and_positive_when_tasks_can_move() -> None:
    plan = plan_exact("sign-test", _design(rates=(0.6, 0.8), trials=3, mde=0.3))
    assert plan.tasks is not None
    assert plan.false_regression is not None
    assert 0.0 < plan.false_regression < 0.05 / 2 + 1e-12  # one side of a two-sided test


def test_exact_power_agrees_with_simulating_the_method_itself() -> None:
    design = _design(rates=(0.9, 0.7), trials=3, mde=0.3)
    plan = plan_exact("sign-test", design)
    assert plan.tasks is not None
    assert plan.power is not None
    simulated = simulated_regressed("sign-test", design, plan.tasks, simulations=400, seed=7)
    # 400 draws: a standard error of √(0.8·0.2/400) = 0.02; four of them
    assert abs(simulated - plan.power) < 0.08


def test_normal_guess_hand_worked() -> None:
    # rate 0.5 falling to 0 on one trial: μ = −0.5, σ² = 0.25 + 0 (one rate): σ = 0.5;
    # ((1.95996 + 0.84162)·0.5/0.5)² = 7.849 → 8
    assert normal_guess(_design(rates=(0.5,))) == 8
    assert normal_guess(_design(rates=(0.0,))) is None  # nothing can fall


def test_simulated_plan_is_the_smallest_size_its_simulation_accepts() -> None:
    design = _design(rates=(0.9,), trials=5, mde=0.4)
    plan = plan_simulated("paired-t", design, simulations=200, seed=3)
    assert plan.tasks is not None
    assert plan.how == "simulated"
    assert (plan.simulations, plan.seed) == (200, 3)
    at = simulated_regressed("paired-t", design, plan.tasks, simulations=200, seed=3)
    assert at == plan.power
    assert at >= 0.8
    if plan.tasks > 2:
        below = simulated_regressed("paired-t", design, plan.tasks - 1, simulations=200, seed=3)
        assert below < 0.8
    assert plan.false_regression is not None
    assert plan.false_regression <= 0.1


def test_a_simulated_plan_says_when_nothing_can_fall() -> None:
    plan = plan_simulated("paired-t", _design(rates=(0.0,)), simulations=20)
    assert plan.tasks is None
    assert plan.reason == "no task's rate can fall by the mde"


def test_plain_design_one_task_one_trial_plans_every_method() -> None:
    plans = plan_methods(_design(rates=(0.8,), mde=0.6), simulations=50)
    assert [p.method for p in plans] == ["sign-test", "mcnemar", "paired-t", "paired-bootstrap"]
    assert [p.how for p in plans] == ["exact", "exact", "simulated", "simulated"]
    for plan in plans:
        assert plan.tasks is not None, plan
        assert plan.to_json()["tasks"] == plan.tasks


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"rates": ()}, "rates"),
        ({"rates": (1.2,)}, "rates"),
        ({"trials": 0}, "trials"),
        ({"mde": 0.0}, "mde"),
        ({"mde": 1.0}, "mde"),
        ({"power": 0.05}, "power"),
        ({"alpha": 0.0}, "alpha"),
    ],
)
def test_bad_designs_are_refused_naming_the_field(change: dict[str, Any], named: str) -> None:
    with pytest.raises(ValueError, match=named):
        _design(**change)


def test_unknown_method_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown regression method 'z-test'"):
        plan_methods(_design(), ["z-test"])


def test_plan_methods_passes_simulations_and_seed_to_the_simulation() -> None:
    (plan,) = plan_methods(_design(rates=(0.8,), mde=0.6), ["paired-t"], simulations=40, seed=5)
    assert (plan.simulations, plan.seed) == (40, 5)
    assert plan.power == simulated_regressed(
        "paired-t", _design(rates=(0.8,), mde=0.6), plan.tasks or 0, simulations=40, seed=5
    )


def test_unknown_method_refusal_lists_the_registered_methods() -> None:
    known = "sign-test, mcnemar, paired-t, paired-bootstrap"
    with pytest.raises(ValueError, match=f"registered methods: {known}$"):
        plan_methods(_design(), ["z-test"])


def test_method_plan_json_names_every_field() -> None:
    plan = plan_simulated("paired-t", _design(rates=(0.9,), trials=5, mde=0.4), simulations=30)
    assert plan.to_json() == {
        "method": "paired-t",
        "tasks": plan.tasks,
        "trialsPerTask": 5,
        "power": plan.power,
        "falseRegression": plan.false_regression,
        "how": "simulated",
        "simulations": 30,
        "seed": 0,
        "reason": None,
    }
    none = plan_simulated("paired-t", _design(rates=(0.0,)), simulations=20).to_json()
    assert (none["tasks"], none["power"], none["falseRegression"]) == (None, None, None)
    assert none["reason"] == "no task's rate can fall by the mde"


def test_critical_counts_far_from_the_tie_and_after_a_longer_search() -> None:
    # N = 50: P(Binomial(50, 1/2) ≤ 17) = 0.0164, doubled 0.033 < 0.05; ≤ 18: 0.0325, doubled
    # 0.065: the most ups still 'regressed' is 17, well below N/3
    critical = CriticalUps("sign-test", _design())
    assert critical.upto(50)[50] == 17
    # N = 18: P(≤ 4) = 4048/2^18 = 0.0154, doubled 0.031; P(≤ 5) = 12616/2^18, doubled 0.096
    assert critical.upto(50)[18] == 4
    assert len(critical.upto(5)) == 6  # one entry per N ≤ most, however far it searched


def test_exact_plan_at_exactly_the_power_asked() -> None:
    # every task at 1 falling to 1/2 (one trial): power at m tasks is P(Binomial(m, 1/2) ≥ 6);
    # m = 7: 8/128 = 0.0625 (m = 6: 1/64, m = 8: 37/256); asked for exactly the power the law
    # gives at 7 tasks, the plan is 7 tasks
    step = exact_powers("sign-test", _design(), CriticalUps("sign-test", _design()))
    at_seven = [step()[1] for _ in range(7)][6]
    assert at_seven == pytest.approx(8 / 128)
    plan = plan_exact("sign-test", _design(power=at_seven))
    assert (plan.tasks, plan.power) == (7, at_seven)


def test_exact_powers_take_the_rates_in_turn() -> None:
    # rates 1, 0, 0 in turn, one trial, mde 0.5: only tasks 0, 3, 6, … can move (down with
    # 1/2); 16 tasks hold six of them (0 … 15): P(all six down) = 1/64; 15 tasks hold five: 0
    design = _design(rates=(1.0, 0.0, 0.0))
    step = exact_powers("sign-test", design, CriticalUps("sign-test", design))
    powers = [step()[1] for _ in range(16)]
    assert powers[14] == 0.0
    assert powers[15] == pytest.approx(1 / 64)


def test_exact_plan_says_when_no_task_count_up_to_most_is_enough() -> None:
    plan = plan_exact("mcnemar", _design(trials=3), most=5)
    assert plan == MethodPlan(
        "mcnemar", None, 3, None, None, "exact", "no number of tasks up to 5 reaches power 0.8"
    )
    found = plan_exact("mcnemar", _design(trials=3))
    assert (found.method, found.trials) == ("mcnemar", 3)


def test_simulated_plan_without_a_plan_keeps_its_design_and_draws() -> None:
    nothing = plan_simulated("paired-t", _design(rates=(0.0,), trials=2), simulations=20, seed=4)
    assert nothing == MethodPlan(
        "paired-t", None, 2, None, None, "simulated", "no task's rate can fall by the mde", 20, 4
    )
    short = plan_simulated("paired-t", _design(rates=(0.9,), trials=5, mde=0.4), simulations=20,
                           seed=4, most=2)  # fmt: skip
    assert short == MethodPlan(
        "paired-t", None, 5, None, None, "simulated",
        "no number of tasks up to 2 reaches power 0.8", 20, 4,
    )  # fmt: skip


def test_simulated_plan_searches_down_from_a_guess_too_high() -> None:
    # rates 1, 0, 0 in turn: two tasks in three never move, so the normal guess (24, from the
    # spread of the rates) overshoots; the plan is still the first size its draws accept
    design = _design(rates=(1.0, 0.0, 0.0), trials=2, mde=0.6)
    assert normal_guess(design) == 24
    plan = plan_simulated("paired-t", design, simulations=16, seed=1)
    assert plan.tasks is not None
    assert plan.tasks < 24
    assert simulated_regressed("paired-t", design, plan.tasks, simulations=16, seed=1) >= 0.8
    below = simulated_regressed("paired-t", design, plan.tasks - 1, simulations=16, seed=1)
    assert below < 0.8


def test_normal_guess_hand_worked_over_rates_in_turn() -> None:
    # rates 1 and 0.2, two trials, mde 0.5: lowered 0.5 and 0 (floored): drops −0.5, −0.2,
    # μ = −0.35; within a task (1·0 + 0.5·0.5)/2 = 0.125 and (0.2·0.8 + 0)/2 = 0.08, mean 0.1025;
    # between tasks ((−0.15)² + 0.15²)/2 = 0.0225: σ² = 0.125;
    # (2.80159·√0.125/0.35)² = 8.009 → 9
    assert normal_guess(_design(rates=(1.0, 0.2), trials=2, mde=0.5)) == 9
    # 1 falling to 0.1: (2.80159·0.3/0.9)² = 0.87 → 1, but never fewer than 2 tasks
    assert normal_guess(_design(rates=(1.0,), mde=0.9)) == 2


def test_signs_are_the_ups_and_downs_each_method_reads() -> None:
    from wopeval.compare.power import _signs

    # sign test: c′ > c is up, c′ < c down, ties neither
    assert _signs("sign-test", [1, 2, 3, 0], [2, 2, 1, 0], 2) == (1, 1)
    # McNemar with 2 of n to pass: fail→pass up, pass→fail down, 3→4 and 0→1 neither
    assert _signs("mcnemar", [1, 2, 3, 0, 3], [2, 1, 4, 1, 2], 2) == (1, 1)
    assert _signs("mcnemar", [1, 1, 2], [2, 3, 1], 2) == (2, 1)
    assert _signs("paired-t", [1], [0], 1) is None


@pytest.mark.parametrize("method", ["sign-test", "mcnemar", "paired-t"])
def test_nothing_regresses_in_a_draw_where_no_task_can_move(method: str) -> None:
    # every task at 1, unshifted: every draw is all passes on both sides, never 'regressed'
    assert simulated_regressed(method, _design(), 8, shifted=False, simulations=10) == 0.0


@pytest.mark.parametrize(
    ("rates", "trials", "mde"),
    [((1.0, 0.0, 0.0), 2, 0.6), ((0.6, 0.9), 1, 0.5), ((1.0, 0.0, 0.0, 0.0, 0.0, 0.0), 1, 0.99)],
)
def test_simulated_plan_is_the_first_size_a_scan_of_its_draws_accepts(
    rates: tuple[float, ...], trials: int, mde: float
) -> None:
    # the normal guess overshoots the first design (24), undershoots the second (11) and is
    # twice the plan and more in the third (40; one task in six moves): the search halves or
    # doubles, then bisects, and lands where a scan from one task does; the
    # false-regression rate is the same draws' share with nothing lowered (the search is the
    # same for both simulated methods; the bootstrap's draws are checked in test_power_rows)
    method = "paired-t"
    design = _design(rates, trials=trials, mde=mde)
    plan = plan_simulated(method, design, simulations=60, seed=2)
    assert plan.tasks is not None
    scan = [simulated_regressed(method, design, m, simulations=60, seed=2)
            for m in range(1, plan.tasks + 1)]  # fmt: skip
    assert scan[-1] == plan.power
    assert scan[-1] >= 0.8
    assert max(scan[:-1]) < 0.8
    null = simulated_regressed(method, design, plan.tasks, shifted=False, simulations=60, seed=2)
    assert plan.false_regression == null


def test_simulated_mcnemar_reads_the_pass_decisions() -> None:
    # McNemar over 'mean' at 2 of 3 trials: the simulated share of regressed verdicts through
    # the method itself agrees with the exact law of the changed pass decisions
    design = _design(rates=(0.9, 0.7), trials=3, mde=0.3, pass_rule="mean",
                     pass_score=Fraction(2, 3))  # fmt: skip
    plan = plan_exact("mcnemar", design)
    assert plan.tasks is not None
    assert plan.power is not None
    simulated = simulated_regressed("mcnemar", design, plan.tasks, simulations=3000, seed=9)
    # 3000 draws: a standard error of √(0.8·0.2/3000) = 0.0073; four of them
    assert abs(simulated - plan.power) < 0.03


@pytest.mark.parametrize(
    ("rates", "trials", "mde", "seed"),
    [((0.6, 0.9), 1, 0.5, 4), ((0.9,), 5, 0.4, 0), ((1.0, 0.0, 0.0), 2, 0.6, 3)],
)
def test_a_simulated_share_exactly_at_the_power_asked_is_enough(
    rates: tuple[float, ...], trials: int, mde: float, seed: int
) -> None:
    # five draws: shares are fifths, so 4/5 = 0.8 meets power 0.8 exactly, and the search
    # must take it wherever it meets it. Hand-read from the draws: the first design's guess 11
    # and its half 5 both have 4/5 (the plan is 5: 2 to 4 tasks have 2/5 or 3/5); the second
    # doubles its guess 4 (2/5) to 8, exactly 4/5, after 7 at 3/5; the third's first 4/5 is 13
    design = _design(rates, trials=trials, mde=mde)
    plan = plan_simulated("paired-t", design, simulations=5, seed=seed)
    assert plan.tasks is not None
    scan = [simulated_regressed("paired-t", design, m, simulations=5, seed=seed)
            for m in range(1, plan.tasks + 1)]  # fmt: skip
    assert plan.power == scan[-1] == 0.8
    assert max(scan[:-1]) < 0.8


def test_reach_needs_reads_the_designs_bootstrap_resamples() -> None:
    # alpha 0.0005: the bootstrap's floor max(2/2^n, 1/(B + 1)) is 1/1001 > alpha with B = 1,000
    # on any number of tasks (none decides: the sentinel MAX_TASKS + 1); with B = 10,000 it is
    # 2/2^12 = 0.000488 < alpha from 12 tasks (2/2^11 = 0.00098 at 11)
    few = _design(alpha=0.0005, resamples=1000)
    many = _design(alpha=0.0005, resamples=10_000)
    assert reach_needs("paired-bootstrap", few) == MAX_TASKS + 1
    assert reach_needs("paired-bootstrap", many) == 12


def test_simulated_false_regression_uses_the_plans_own_seed() -> None:
    # rate 0.5 falling to 0 on one trial, 200 draws from seed 5: paired-t needs 10 tasks; its
    # false-regression share is seed 5's (11/200), not another seed's (seed 0: 8/200)
    design = _design(rates=(0.5,))
    plan = plan_simulated("paired-t", design, simulations=200, seed=5)
    assert plan.tasks == 10
    assert plan.false_regression == 0.055
    assert plan.false_regression == simulated_regressed(
        "paired-t", design, 10, shifted=False, simulations=200, seed=5
    )
