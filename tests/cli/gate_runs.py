"""Suites for the gate tests: each task's trials pass or fail as scripted, so a run's outcome is
chosen by the test and graded by the real engine (the built-in scripted agent answers ``ok`` or
``no`` per trial; the task expects ``ok``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

from hypothesis import strategies as st

SCRIPTED = "core.conformance.agents.scripted"
PASS_RULES = ("all", "any", "mean")


def task_doc(task_id: str, outcomes: list[bool], cost_usd: float | None = None) -> dict[str, Any]:
    """A golden task whose trial ``i`` passes exactly when ``outcomes[i]``."""
    say = ["ok" if passed else "no" for passed in outcomes]
    scripted: dict[str, Any] = {"output": say[0]}
    if len(say) > 1:
        scripted["trials"] = {str(i): {"output": out} for i, out in enumerate(say) if i}
    if cost_usd is not None:
        scripted["usage"] = [{"provider": "mock", "model": "m", "inputTokens": 1,
                              "outputTokens": 1, "costEstimateUsd": cost_usd}]  # fmt: skip
    return {
        "taskId": task_id,
        "input": scripted,
        "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}},
    }


def suite_doc(
    outcomes: list[list[bool]],
    *,
    pass_rule: str | None = None,
    k: int | None = None,
    pass_score: float | None = None,
    max_cost_usd: float | None = None,
    cost_usd: float | None = None,
) -> dict[str, Any]:
    """A suite of one task per entry of ``outcomes``; a ``trials`` block only when a task has
    more than one trial or a pass rule is given (the plainest suite has none)."""
    count = len(outcomes[0])
    doc: dict[str, Any] = {
        "suiteId": "core.test.evals.gate",
        "version": "1.0.0",
        "modes": ["golden"],
        "targetAgentId": SCRIPTED,
        "tasks": [task_doc(f"task-{i}", o, cost_usd) for i, o in enumerate(outcomes)],
    }
    if count > 1 or pass_rule is not None:
        trials: dict[str, Any] = {"count": count}
        if k is not None:
            trials["k"] = k
        if pass_rule is not None:
            trials["passRule"] = pass_rule
        doc["trials"] = trials
    thresholds = {"passScore": pass_score, "maxCostUsd": max_cost_usd}
    if any(v is not None for v in thresholds.values()):
        doc["thresholds"] = {key: v for key, v in thresholds.items() if v is not None}
    return doc


@st.composite
def suites(draw: st.DrawFn, max_tasks: int = 4, max_trials: int = 4) -> dict[str, Any]:
    """Random runs: task outcomes, trials, pass rule, passScore, and sometimes a cost ceiling
    the run's spending may exceed."""
    tasks = draw(st.integers(1, max_tasks))
    count = draw(st.integers(1, max_trials))
    trials = st.lists(st.booleans(), min_size=count, max_size=count)
    same = st.sampled_from([True, True, False]).map(lambda passed: [passed] * count)  # outright
    outcomes = [draw(same | trials) for _ in range(tasks)]
    costly = draw(st.booleans())
    return suite_doc(
        outcomes,
        pass_rule=draw(st.none() | st.sampled_from(PASS_RULES)),
        k=draw(st.none() | st.integers(1, count)),
        pass_score=draw(st.none() | st.sampled_from([0.0, 0.5, 1.0]) | st.floats(0, 1)),
        max_cost_usd=draw(st.sampled_from([0.25, 1.0, 100.0])) if costly else None,
        cost_usd=0.125 if costly else None,
    )


def write_suite(directory: Path, doc: dict[str, Any]) -> Path:
    path = directory / "suite.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def junit_gate(xml: str | Path, gate: str) -> tuple[bool, ET.Element]:
    """Whether the JUnit file's gate case passed, and the case."""
    root = ET.parse(xml).getroot() if isinstance(xml, Path) else ET.fromstring(xml)
    cases = [c for c in root.iter("testcase") if c.get("name") == f"wopeval gate ({gate})"]
    assert len(cases) == 1, ET.tostring(root, encoding="unicode")
    case = cases[0]
    return case.find("failure") is None and case.find("error") is None, case


def markdown_passed(text: str, gate: str) -> bool:
    """What the Markdown summary's heading says, checking it names ``gate``."""
    heading = text.splitlines()[0]
    assert heading.endswith(f"(gate `{gate}`)"), heading
    assert ("✅ passed" in heading) != ("❌ failed" in heading), heading
    return "✅ passed" in heading
