"""``CompareReport`` (wopeval.compare.report), store-free: every output of ``wopeval compare``
(text parts, ``--json``, Markdown) rendered from one comparison, with each note's rule."""

from __future__ import annotations

from dataclasses import replace

from tests.compare.helpers import RUN_ID, pairs, summary, task
from wopeval.compare.methods import MethodResult
from wopeval.compare.report import CompareReport, RunSide
from wopeval.compare.verdict import Comparison, Reach, compare_summaries
from wopeval.wire.summary import RegressionBlock

NO_DIGESTS = (
    "task definitions could not be checked (a run stored no digests): "
    "tasks are paired by taskId only"
)


def _comparison(
    *,
    reach: Reach | None,
    chosen: str | None = None,
    changed: tuple[str, ...] = (),
    checked: bool = True,
    p_value: float | None = 0.03125,
) -> Comparison:
    """Six sign-test pairs, each candidate 0.5 above its baseline (a hand-built comparison)."""
    table = tuple(pairs([0.0, 0.25, 0.5, 0.0, 0.25, 0.5], [0.5, 0.75, 1.0, 0.5, 0.75, 1.0]))
    return Comparison(
        pairs=table,
        result=MethodResult("sign", 6.0, p_value, 0.25, 0.75, 6),
        regression=RegressionBlock(
            baselineRunId=RUN_ID,
            scoreDelta=0.5,
            verdict="improved",
            method="sign-test",
            alpha=0.05,
            pairedTaskCount=6,
        ),
        equivalent=None,
        reach=reach,
        chosen=chosen,
        changed=changed,
        definitions_checked=checked,
    )


# sign-test on 6 pairs: the smallest p is 2 / 2^6 = 0.03125 < 0.05, so it can decide.
DECIDES = Reach("sign-test", 0.05, 6, 0.03125, 6, ("paired-t", "paired-bootstrap"))


def test_0244_F_plainest_one_task_no_digests_cannot_decide() -> None:
    """One task in each run, paired-t named: its floor on 1 pair is 1, so not decidable; the
    sentence comes first, then the unchecked definitions."""
    comparison = compare_summaries(
        summary([task("a", 1.0)]), summary([task("a", 0.0)]), RUN_ID, method="paired-t"
    )
    report = CompareReport(RunSide("r1", "core.acme.a"), RunSide("r2", None), comparison)
    assert report.decidable is False
    cannot = (
        "paired-t cannot reach alpha 0.05 with 1 paired task (its smallest p is 1); "
        "needs ≥ 2 paired tasks"
    )
    assert report.notes() == [f"cannot decide: {cannot}", NO_DIGESTS]
    assert report.verdict_parts() == [
        "verdict inconclusive",
        "method paired-t",
        "alpha 0.05",
        "paired 1",
        "scoreDelta -1.0000",
        "p -",
        "smallest reachable p 1",
    ]
    assert report.agents_lines() == ["baseline r1 (agent core.acme.a)", "candidate r2 (agent -)"]
    doc = report.to_json()
    assert {k: doc[k] for k in ("decidable", "cannotDecide", "minReachablePValue")} == {
        "decidable": False,
        "cannotDecide": cannot,
        "minReachablePValue": 1.0,
    }
    assert (doc["needsPairedTasks"], doc["methodsThatCanDecide"]) == (2, [])
    assert (doc["methodChosenFrom"], doc["definitionsChecked"], doc["changedTasks"]) == (
        None,
        False,
        [],
    )
    assert (doc["pValue"], doc["ciLow"], doc["ciHigh"]) == (None, None, None)
    assert doc["baseline"] == {"runId": "r1", "agentId": "core.acme.a"}
    assert doc["candidate"] == {"runId": "r2", "agentId": None}
    assert doc["regression"] == {
        "baselineRunId": RUN_ID,
        "scoreDelta": -1.0,
        "verdict": "inconclusive",
        "method": "paired-t",
        "alpha": 0.05,
        "pairedTaskCount": 1,
    }
    assert doc["pairs"] == [
        {
            "taskId": "a",
            "baselineMean": 1.0,
            "candidateMean": 0.0,
            "baselinePassRate": 1.0,
            "candidatePassRate": 0.0,
            "baselinePassed": True,
            "candidatePassed": False,
        }
    ]


def test_a_decidable_comparison_notes_only_what_applies() -> None:
    """Decidable, method named, nothing changed, digests checked: no note at all."""
    report = CompareReport(RunSide("r1", "a"), RunSide("r2", "b"), _comparison(reach=DECIDES))
    assert report.decidable is True
    assert report.notes() == []
    assert report.verdict_parts() == [
        "verdict improved",
        "method sign-test",
        "alpha 0.05",
        "paired 6",
        "scoreDelta +0.5000",
        "p 0.03125",
        "smallest reachable p 0.03125",
    ]
    doc = report.to_json()
    assert (doc["decidable"], doc["cannotDecide"], doc["needsPairedTasks"]) == (True, None, 6)
    assert doc["methodsThatCanDecide"] == ["sign-test", "paired-t", "paired-bootstrap"]
    assert (doc["minReachablePValue"], doc["definitionsChecked"], doc["notes"]) == (
        0.03125,
        True,
        [],
    )
    assert (doc["statistic"], doc["estimate"], doc["pValue"]) == ("sign", 6.0, 0.03125)
    assert (doc["ciLow"], doc["ciHigh"]) == (0.25, 0.75)
    assert [p["taskId"] for p in doc["pairs"]] == [f"t{i}" for i in range(6)]
    assert doc["pairs"][1] == {
        "taskId": "t1",
        "baselineMean": 0.25,
        "candidateMean": 0.75,
        "baselinePassRate": 0.0,
        "candidatePassRate": 1.0,
        "baselinePassed": False,
        "candidatePassed": True,
    }


def test_without_a_reach_the_report_is_decidable_and_says_nothing_of_it() -> None:
    report = CompareReport(RunSide("r1", None), RunSide("r2", None), _comparison(reach=None))
    assert report.decidable is True
    assert report.notes() == []
    assert report.verdict_parts()[-1] == "p 0.03125"
    doc = report.to_json()
    assert [doc[k] for k in ("cannotDecide", "minReachablePValue", "needsPairedTasks")] == [
        None,
        None,
        None,
    ]
    assert doc["methodsThatCanDecide"] == []


def test_a_p_equal_to_the_floor_at_alpha_is_not_decidable() -> None:
    """A floor equal to alpha cannot decide (a p equal to alpha is not significant)."""
    at_alpha = Reach("sign-test", 0.03125, 6, 0.03125, 7, ())
    report = CompareReport(RunSide("r1", None), RunSide("r2", None), _comparison(reach=at_alpha))
    assert report.decidable is False
    assert report.notes()[0].startswith("cannot decide: sign-test cannot reach alpha 0.03125")


def test_every_note_in_order_and_the_changed_count() -> None:
    """Cannot decide, chosen from the data, one changed task (singular), no digests."""
    cannot = Reach("sign-test", 0.01, 6, 0.03125, 8, ())
    comparison = _comparison(
        reach=cannot, chosen="one pass/fail outcome per task", changed=("x",), checked=False
    )
    report = CompareReport(RunSide("r1", None), RunSide("r2", None), comparison)
    assert report.notes() == [
        "cannot decide: sign-test cannot reach alpha 0.01 with 6 paired tasks "
        "(its smallest p is 0.03125); needs ≥ 8 paired tasks",
        "method sign-test chosen from the data (one pass/fail outcome per task); "
        "--method names another",
        "1 task changed between the runs and left out: x",
        NO_DIGESTS,
    ]
    assert report.verdict_parts()[-2:] == ["smallest reachable p 0.03125", "changed 1"]
    doc = report.to_json()
    assert doc["methodChosenFrom"] == "one pass/fail outcome per task"
    assert (doc["changedTasks"], doc["definitionsChecked"]) == (["x"], False)
    assert doc["notes"] == report.notes()
    two = CompareReport(
        RunSide("r1", None), RunSide("r2", None), _comparison(reach=None, changed=("x", "y"))
    )
    assert two.notes() == ["2 tasks changed between the runs and left out: x, y"]
    assert two.verdict_parts()[-1] == "changed 2"


def test_markdown_escapes_pipes_backslashes_and_newlines_in_every_cell() -> None:
    """Hostile ids in a Markdown table: a pipe would open a column, a newline end the row."""
    comparison = _comparison(reach=DECIDES, changed=("x|y",))
    comparison = replace(comparison, pairs=(replace(comparison.pairs[0], task_id="a|b\\c\nd"),))
    report = CompareReport(RunSide("r|1", "ag\\ent"), RunSide("r2", None), comparison)
    assert report.to_markdown() == (
        "### compare: improved\n"
        "\n"
        "- baseline r\\|1 (agent ag\\\\ent)\n"
        "- candidate r2 (agent -)\n"
        "\n"
        "verdict improved · method sign-test · alpha 0.05 · paired 6 · scoreDelta +0.5000"
        " · p 0.03125 · smallest reachable p 0.03125 · changed 1\n"
        "\n"
        "- 1 task changed between the runs and left out: x\\|y\n"
        "\n"
        "| task | baseline mean | candidate mean | Δ mean |\n"
        "| --- | --- | --- | --- |\n"
        "| `a\\|b\\\\c d` | 0.000 | 0.500 | +0.500 |\n"
    )


def test_0244_F_methods_that_can_decide_name_the_chosen_one_only_when_it_can() -> None:
    cannot = Reach("mcnemar", 0.05, 3, 0.25, 6, ("paired-t",))
    assert cannot.deciders == ("paired-t",)
    assert DECIDES.deciders == ("sign-test", "paired-t", "paired-bootstrap")
    alone = Reach("mcnemar", 0.05, 6, 0.03125, 6, ())
    assert alone.deciders == ("mcnemar",)
    doc = CompareReport(RunSide("r1", "a"), RunSide("r2", "b"), _comparison(reach=alone)).to_json()
    assert doc["methodsThatCanDecide"] == ["mcnemar"]
