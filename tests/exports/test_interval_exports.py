"""Intervals in the CI exports (JUnit properties, Markdown), from hand-made summaries: the
plainest (one task, no trials) and one with trials."""

from __future__ import annotations

from xml.etree import ElementTree as ET

import pytest

from wopeval.exports.ci import junit_xml, markdown
from wopeval.wire.summary import EvalSummary, TaskSummary, TrialsBlock, TrialStats

RUN = "local/r" + "0" * 26


def _plainest() -> EvalSummary:
    return EvalSummary(
        suiteId="core.test.evals.ci", suiteVersion="1.0.0", aggregateScore=1.0, passed=True,
        taskCount=1, passedCount=1, tasks=[TaskSummary(taskId="only", score=1.0, passed=True)],
    )  # fmt: skip


def _with_trials() -> EvalSummary:
    # 4 of 5 and 5 of 5, k = 2: pass@2 = 1 − C(1,2)/C(5,2) = 1 and 1; pass^2 = C(4,2)/C(5,2) = 0.6
    # and 1
    tasks = [
        TaskSummary(taskId="four", score=0.8, passed=False,
                    trials=TrialsBlock(n=5, passedCount=4, meanScore=0.8, passAtK=1.0,
                                       passHatK=0.6)),
        TaskSummary(taskId="five", score=1.0, passed=True,
                    trials=TrialsBlock(n=5, passedCount=5, meanScore=1.0, passAtK=1.0,
                                       passHatK=1.0)),
    ]  # fmt: skip
    return EvalSummary(
        suiteId="core.test.evals.ci", suiteVersion="1.0.0", aggregateScore=0.9, passed=True,
        taskCount=2, passedCount=1, tasks=tasks,
        trialStats=TrialStats(k=2, passAtK=1.0, passHatK=0.8, scoreStderr=0.1),
    )  # fmt: skip


def _properties(element: ET.Element | None) -> dict[str, str]:
    assert element is not None
    return {p.get("name", ""): p.get("value", "") for p in element.iter("property")}


def test_plainest_junit_has_the_suite_interval_and_no_task_properties() -> None:
    suite = ET.fromstring(junit_xml(_plainest(), RUN))
    props = _properties(suite.find("properties"))
    # one task scoring 1: 1/1's interval, [0.025, 1]
    assert (props["ciLevel"], props["aggregateScore.low"]) == ("0.95", "0.025000")
    assert props["aggregateScore.high"] == "1.000000"
    assert "passAtK.low" not in props  # no trials, no pass@k
    case = suite.find("testcase")
    assert case is not None
    assert case.find("properties") is None


def test_junit_task_cases_carry_their_intervals() -> None:
    suite = ET.fromstring(junit_xml(_with_trials(), RUN, level=0.9))
    assert _properties(suite.find("properties"))["ciLevel"] == "0.9"
    four = next(c for c in suite.iter("testcase") if c.get("name") == "four")
    props = _properties(four.find("properties"))
    # 4 of 5 at 90 %: Clopper-Pearson [0.3426, 0.9898]
    assert float(props["passRate.low"]) == pytest.approx(0.3426, abs=1e-4)
    assert float(props["passRate.high"]) == pytest.approx(0.9898, abs=1e-4)
    # pass^2 = 0.6 lies in [0.3426², 0.9898²] = [0.1174, 0.9797]
    assert float(props["passHatK.low"]) == pytest.approx(0.3426**2, abs=1e-3)
    assert four.find("failure") is not None  # the verdict is unchanged


def test_markdown_shows_the_intervals_after_the_table() -> None:
    plain = markdown(_plainest(), RUN)
    assert "#### 95% intervals" in plain
    assert "Aggregate 1.000, [0.025, 1.000] (task-clopper-pearson" in plain
    assert "| task | pass rate |" not in plain  # no trials: no table of them
    rich = markdown(_with_trials(), RUN)
    # 4/5 at 95 %: [0.2836, 0.9949]; pass@2 low 1 − (1 − 0.2836)² = 0.487, pass^2 low
    # 0.2836² = 0.080, high 0.9949² = 0.990
    # its mean score 0.8 of 5 trials is 4 of 5: the same [0.28, 0.99]
    row = (
        "| `four` | 4/5 [0.28, 0.99] | 0.80 [0.28, 0.99] | 1.00 [0.49, 1.00] | 0.60 [0.08, 0.99] |"
    )
    assert row in rich
