"""A trial's reasons name the real cause, all of them, most decisive first (on both stores)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.engine.helpers import Ran, run_suite
from tests.grading.reason_cases import EXPECTED, SCRIPTED, SUITE
from wopeval.events.store import EventStore
from wopeval.grading.detail import run_detail
from wopeval.grading.reasons import Verdict, explain, reason_line, reason_texts
from wopeval.grading.summary import GradingOptions, build_summary
from wopeval.grading.trajectory import ObservedCall
from wopeval.grading.trial import trajectory_of
from wopeval.grading.views import TrialView, collect_trials
from wopeval.service.runs import regrade
from wopeval.suite import parse_suite
from wopeval.suite.models import Task
from wopeval.wire.events import FailureReason, RunEvent, TrialFailed
from wopeval.wire.vocab import TRIAL_FAILED


async def _ran(store: EventStore) -> Ran:
    return await run_suite(store, parse_suite(SUITE))


def _recorded(ran: Ran) -> dict[str, TrialFailed]:
    found = (TrialFailed.model_validate(e.payload) for e in ran.of_type(TRIAL_FAILED))
    return {reason.taskId: reason for reason in found}


async def test_0244_A_each_trial_records_every_reason_most_decisive_first(
    store: EventStore,
) -> None:
    recorded = _recorded(await _ran(store))
    assert {task: reason_texts(reason) for task, reason in recorded.items()} == {
        task: texts for task, (_, texts) in EXPECTED.items()
    }


async def test_0244_A_a_forbidden_call_comes_before_the_fixture_miss_it_caused(
    store: EventStore,
) -> None:
    reason = _recorded(await _ran(store))["forbidden-miss"]
    # The kind still classifies the trial (it failed closed) …
    assert reason.kind == "fixture-miss"
    assert reason.message.startswith("fixture miss (onMiss: fail)")
    # … while the list leads with the forbidden call.
    first = reason.every_reason[0]
    assert (first.kind, first.message) == ("trajectory", "forbidden tool billing:refund-all")
    assert reason.every_reason[0].details == {"forbiddenTool": "billing:refund-all", "calls": 1}
    diff = reason.details["trajectory"]
    assert [c["status"] for c in diff["observed"]] == ["matched", "forbidden"]


async def test_0244_A_wrong_arguments_name_the_key_paths_from_the_maximum_matching(
    store: EventStore,
) -> None:
    reason = _recorded(await _ran(store))["wrong-args"]
    assert reason.kind == "trajectory"
    assert reason.reasons is None  # one reason: the payload has no list
    assert reason.details["differences"] == [
        {"path": "amountMinor", "expected": 4200, "observed": "4200"},
        {"path": "refund.reason.code", "expected": "dup", "observed": "dupe"},
        {"path": "note", "observed": "x"},
    ]
    diff = reason.details["trajectory"]
    assert [c["status"] for c in diff["expected"]] == ["missing"]
    assert [c["status"] for c in diff["observed"]] == ["unexpected"]


async def test_0244_B_an_output_mismatch_is_reported_beside_a_failed_trajectory(
    store: EventStore,
) -> None:
    reason = _recorded(await _ran(store))["both"]
    assert reason.kind == "trajectory"
    assert [r.kind for r in reason.every_reason] == ["trajectory", "output-mismatch"]
    assert reason.every_reason[1].details == {
        "strategy": "exact", "expected": "ok", "output": "nope"
    }  # fmt: skip


async def test_0244_D_a_miss_names_the_entries_unconsumed_at_the_moment_of_the_call(
    store: EventStore,
) -> None:
    reason = _recorded(await _ran(store))["mid-miss"]
    assert reason.kind == "fixture-miss"
    # The entry of the missed tool says where the call's arguments differ from it.
    differences = [{"path": "id", "expected": "A", "observed": "B"}]
    assert reason.details["misses"] == [
        {"tool": "crm:lookup", "left": [
            {"index": 0, "tool": "crm:lookup", "differences": differences},
            {"index": 1, "tool": "billing:refund"}]},
    ]  # fmt: skip
    # At the end of the trial the second entry was served: only the first is left.
    assert reason.details["fixturesServed"] == [1]
    assert reason.details["fixturesLeft"] == [{"index": 0, "tool": "crm:lookup"}]


async def test_0244_H_the_plainest_trial_writes_the_one_reason_payload_unchanged(
    store: EventStore,
) -> None:
    ran = await _ran(store)
    payload = next(e.payload for e in ran.of_type(TRIAL_FAILED) if e.payload["taskId"] == "plain")
    assert set(payload) == {"taskId", "trialIndex", "kind", "message", "details"}
    assert "reasons" in next(
        e.payload for e in ran.of_type(TRIAL_FAILED) if e.payload["taskId"] == "both"
    )


async def test_0244_H_regrade_explains_the_same_and_reproduces_the_summary(
    store: EventStore,
) -> None:
    ran = await _ran(store)
    recorded = _recorded(ran)
    suite = parse_suite(SUITE)
    views = collect_trials(ran.events)
    for task in suite.tasks:
        view = views[(task.taskId, 0)]
        assert view.scored is not None
        block = trajectory_of(task, view, SCRIPTED)
        verdict = Verdict(False, view.scored.score, view.scored.scoreLabel,
                          block.matched if block else None, 1.0)  # fmt: skip
        assert explain(task, view, verdict, target_agent_id=SCRIPTED) == recorded[task.taskId]
    # A log without the reason events (an import) gets the same detail from the same function.
    bare = [e for e in ran.events if e.type != TRIAL_FAILED]
    options = GradingOptions(target_agent_id=SCRIPTED)
    detail = run_detail(suite, bare, options)
    again = {t.task_id: (t.cells[0].status, reason_texts(t.cells[0].reason)) for t in detail.tasks}
    assert again == EXPECTED
    assert (await regrade(store, ran.run_id)).reproduces_stored


def test_0244_H_an_old_one_reason_event_still_reads() -> None:
    stored = {
        "taskId": "t",
        "trialIndex": 0,
        "kind": "fixture-miss",
        "message": "fixture miss (onMiss: fail): no unconsumed fixture matches a; "
        "every fixture entry was already consumed",
        "details": {"missedTools": ["a"], "fixturesServed": [], "fixturesLeft": []},
    }
    reason = TrialFailed.model_validate(stored)
    assert reason.every_reason == [
        FailureReason(kind="fixture-miss", message=stored["message"], details=stored["details"])
    ]
    assert reason_texts(reason) == [stored["message"]]
    assert reason.to_wire() == stored


def test_reasons_refuse_a_list_of_one_and_unknown_members() -> None:
    one = {"kind": "trajectory", "message": "m"}
    base = {"taskId": "t", "trialIndex": 0, "kind": "trajectory", "message": "m"}
    with pytest.raises(ValueError, match="reasons"):
        TrialFailed.model_validate({**base, "reasons": [one]})
    with pytest.raises(ValueError, match="extra"):
        TrialFailed.model_validate({**base, "reasons": [one, {**one, "why": "x"}]})


def test_a_trial_without_a_reason_says_what_its_status_says() -> None:
    assert reason_texts(None, "missing") == ["planned but not in this log"]
    assert reason_texts(None, "fail") == ["no reason recorded"]
    two = TrialFailed(taskId="t", trialIndex=0, kind="trajectory", message="a",
                      reasons=[FailureReason(kind="trajectory", message="a"),
                               FailureReason(kind="output-mismatch", message="b")])  # fmt: skip
    assert reason_line(two) == "a · b"
    assert json.loads(json.dumps(two.to_wire()))["reasons"][1] == {
        "kind": "output-mismatch", "message": "b", "details": {}
    }  # fmt: skip


def test_0244_A_calls_wrong_the_same_way_are_one_reason_with_their_count() -> None:
    task = Task.model_validate(
        {"taskId": "t", "input": {}, "expected": {"kind": "trajectory", "trajectory": {
            "match": "any-order",
            "calls": [{"tool": "a", "args": {"n": 1}, "argsMatch": "exact"}] * 2}}}
    )  # fmt: skip
    view = TrialView(task_id="t", trial_index=0, root_event_id="e")
    view.calls = [ObservedCall("a", {"n": "1"}, SCRIPTED)] * 2
    verdict = Verdict(False, 0.0, "trajectory-unmatched", False, 1.0)
    failed = explain(task, view, verdict, target_agent_id=SCRIPTED)
    assert reason_texts(failed) == [
        'called a with different arguments: n: expected 1, got "1" (2 calls)'
    ]


def test_0244_A_many_forbidden_tools_are_named_in_a_bounded_list() -> None:
    tools = [f"t{i}" for i in range(8)]
    task = Task.model_validate(
        {"taskId": "t", "input": {}, "expected": {"kind": "trajectory", "trajectory": {
            "match": "subset", "calls": [], "forbidden": tools}}}
    )  # fmt: skip
    view = TrialView(task_id="t", trial_index=0, root_event_id="e")
    view.calls = [ObservedCall(tool, {}, SCRIPTED) for tool in [*tools, "t0"]]
    verdict = Verdict(False, 0.0, "trajectory-unmatched", False, 1.0)
    texts = reason_texts(explain(task, view, verdict, target_agent_id=SCRIPTED))
    assert texts[:2] == ["forbidden tool t0 (called 2 times)", "forbidden tool t1"]
    assert texts[5] == "and 3 more forbidden tools: t5, t6, t7"
    assert len(texts) == 6


GOLDEN = Path(__file__).with_name("golden") / "reasons_one_each.json"


def test_0244_H_a_log_of_one_reason_each_grades_and_reads_as_before() -> None:
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    suite = parse_suite(golden["suite"])
    events = [RunEvent.model_validate(event) for event in golden["events"]]
    options = GradingOptions(target_agent_id=SCRIPTED)
    assert build_summary(suite, events, options).to_json() == golden["summary"]  # byte for byte
    detail = run_detail(suite, events, options)
    recorded = {e.payload["taskId"]: e.payload["message"] for e in events if e.type == TRIAL_FAILED}
    # Each stored reason is shown as it was recorded, the only one; the statuses are unchanged.
    assert {t.task_id: reason_texts(t.cells[0].reason) for t in detail.tasks} == {
        task: [message] for task, message in recorded.items()
    }
    assert {t.task_id: t.cells[0].status for t in detail.tasks} == {
        task: status for task, (status, _) in EXPECTED.items()
    }
