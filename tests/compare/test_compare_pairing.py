"""Pairing by ``taskId`` (RFC 0244 §F): only shared tasks, candidate order, trials-aware means."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.compare.helpers import summary, task, trial_task
from wopeval.compare.pairing import pair_tasks
from wopeval.wire.summary import TaskSummary, TrialsBlock


def test_0244_F_pairs_only_shared_tasks_in_candidate_order() -> None:
    baseline = summary([task("a", 0.1), task("b", 0.2), task("c", 0.3), task("d", 0.4)])
    candidate = summary([task("e", 0.9), task("d", 0.8), task("b", 0.7), task("a", 0.6)])
    paired = pair_tasks(baseline, candidate)
    assert [p.task_id for p in paired] == ["d", "b", "a"]
    assert [(p.baseline_mean, p.candidate_mean) for p in paired] == [
        (0.4, 0.8),
        (0.2, 0.7),
        (0.1, 0.6),
    ]


def test_0244_F_disjoint_runs_pair_nothing() -> None:
    assert pair_tasks(summary([task("a", 1.0)]), summary([task("b", 1.0)])) == []


def test_0244_F_trials_block_supplies_mean_and_pass_rate() -> None:
    # Baseline ran 5 trials, 3 passed: meanScore 3/5 = 0.6, pass rate 0.6, passed (all) = False.
    # Candidate ran once and passed with score 1.0: pass rate 1.0.
    baseline = summary([trial_task("a", 5, 3)])
    candidate = summary([task("a", 1.0, passed=True)])
    (pair,) = pair_tasks(baseline, candidate)
    assert pair.baseline_mean == pytest.approx(0.6)
    assert pair.baseline_pass_rate == pytest.approx(0.6)
    assert pair.baseline_passed is False
    assert (pair.candidate_mean, pair.candidate_pass_rate, pair.candidate_passed) == (
        1.0,
        1.0,
        True,
    )
    assert pair.difference == pytest.approx(0.4)


def test_0244_F_trials_mean_score_wins_over_task_score() -> None:
    # A host may report a task score other than meanScore (RFC 0246 gating score); pairing
    # reads trials.meanScore whenever a trials block exists.
    trials = TrialsBlock(n=4, passedCount=1, meanScore=0.25, passAtK=0.25, passHatK=0.0)
    odd = TaskSummary(taskId="a", score=0.9, passed=False, trials=trials)
    (pair,) = pair_tasks(summary([odd]), summary([task("a", 0.0, passed=False)]))
    assert pair.baseline_mean == 0.25
    assert pair.baseline_pass_rate == 0.25


def test_pass_rate_without_trials_follows_passed() -> None:
    (pair,) = pair_tasks(summary([task("a", 0.4, passed=True)]), summary([task("a", 0.4, False)]))
    assert (pair.baseline_pass_rate, pair.candidate_pass_rate) == (1.0, 0.0)


@pytest.mark.parametrize("side", ["baseline", "candidate"])
def test_duplicate_task_id_is_refused(side: str) -> None:
    twice = summary([task("a", 0.5), task("a", 0.6)])
    once = summary([task("a", 0.5)])
    baseline, candidate = (twice, once) if side == "baseline" else (once, twice)
    with pytest.raises(ValueError, match=rf"{side} summary lists taskId 'a' more than once"):
        pair_tasks(baseline, candidate)


_IDS = st.lists(st.sampled_from([f"t{i}" for i in range(12)]), unique=True, max_size=12)


@given(base_ids=_IDS, cand_ids=_IDS)
def test_0244_F_paired_count_is_the_shared_task_count(
    base_ids: list[str], cand_ids: list[str]
) -> None:
    baseline = summary([task(i, 0.5) for i in base_ids])
    candidate = summary([task(i, 0.5) for i in cand_ids])
    paired = pair_tasks(baseline, candidate)
    assert len(paired) == len(set(base_ids) & set(cand_ids))
    assert [p.task_id for p in paired] == [i for i in cand_ids if i in set(base_ids)]
