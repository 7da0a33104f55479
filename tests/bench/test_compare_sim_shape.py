"""``bench/compare_sim.py``'s JSON: every method (and the chosen one) for every task count and
shape, with the decidability the verdict's reach rule gives; a tiny seeded run, no timing."""

from __future__ import annotations

from bench import compare_sim


def test_compare_sim_reports_every_cell_and_who_can_decide() -> None:
    report = compare_sim.simulate(reps=4, resamples=50, task_counts=(3, 10))
    assert set(report["shapes"]) == {"oneTrial", "fiveTrials"}
    for shape in report["shapes"].values():
        assert set(shape) == {"paired-bootstrap", "mcnemar", "sign-test", "paired-t", "auto"}
        for name, by_count in shape.items():
            assert set(by_count) == {"3", "10"}
            # 3 tasks: only paired-t can reach 0.05 (2 / 2^3 = 0.25 for the others)
            assert by_count["3"]["decidable"] is (by_count["3"]["method"] == "paired-t"), name
            assert by_count["10"]["decidable"] is True
            if not by_count["3"]["decidable"]:  # a method that cannot decide never regresses
                assert by_count["3"]["power50"] == by_count["3"]["falseRegression"] == 0.0
    assert report["shapes"]["oneTrial"]["auto"]["3"]["method"] == "mcnemar"
    assert report["shapes"]["fiveTrials"]["auto"]["3"]["method"] == "paired-bootstrap"
