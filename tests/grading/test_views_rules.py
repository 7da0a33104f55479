"""The log reader over hand-built logs (store-free): what each event adds to its trial's view,
which bracket a trial keeps, attribution by position, and when a collector hands a view over."""

from __future__ import annotations

from typing import Any

from tests.grading.hand_logs import AGENT, Log
from wopeval.grading.trajectory import ObservedCall
from wopeval.grading.views import TrialCollector, TrialView, closed, collect_trials
from wopeval.wire.vocab import (
    DECIDED,
    EVAL_SCORED,
    INVOCATION_COMPLETED,
    INVOCATION_STARTED,
    PROVIDER_USAGE,
    TOOL_CALLED,
    TOOL_RETURNED,
    TRIAL_FAILED,
    X_REPLAYED_LATENCY,
    X_TASK_ID,
)

HELPER = "core.acme.helper"


def _start(log: Log, task: str | None, index: int = 0, inv: str = "inv-1", at: int = 0) -> str:
    payload: dict[str, Any] = {"invocationId": inv, "agentId": AGENT, "source": "run-api"}
    if task is not None:
        payload |= {X_TASK_ID: task, "x-wopeval-trialIndex": index}
    return log.add(INVOCATION_STARTED, payload, at, None)


def _done(
    log: Log,
    root: str | None,
    inv: str = "inv-1",
    at: int = 0,
    outcome: str = "completed",
    marks: dict[str, Any] | None = None,
) -> str:
    payload = {"invocationId": inv, "agentId": AGENT, "outcome": outcome, **(marks or {})}
    return log.add(INVOCATION_COMPLETED, payload, at, root)


def _scored(log: Log, task: str, index: int | None = 0, passed: bool = True) -> None:
    payload: dict[str, Any] = {"taskId": task, "score": float(passed), "passed": passed}
    if index is not None:
        payload["trialIndex"] = index
    log.add(EVAL_SCORED, payload, 0, None)


def _failed(log: Log, task: str, index: int = 0) -> None:
    payload = {"taskId": task, "trialIndex": index, "kind": "output-mismatch", "message": "no"}
    log.add(TRIAL_FAILED, payload, 0, None)


def _call(log: Log, root: str | None, call: str, tool: str = "lookup", **inputs: Any) -> None:
    payload = {"agentId": AGENT, "toolName": tool, "callId": call, "inputs": inputs}
    log.add(TOOL_CALLED, payload, 0, root)


def _returned(
    log: Log, root: str | None, call: str, tool: str = "lookup", fixture: str = "", at: int = -1
) -> None:
    payload: dict[str, Any] = {"agentId": AGENT, "toolName": tool, "callId": call, "status": "ok"}
    if fixture:
        payload["x-wopeval-fixture"] = fixture
    if at >= 0:
        payload["x-wopeval-fixtureIndex"] = at
    log.add(TOOL_RETURNED, payload, 0, root)


def _usage(log: Log, root: str | None, tokens: tuple[int, int], cost: float | None) -> None:
    payload: dict[str, Any] = {"provider": "p", "model": "m"}
    payload |= {"inputTokens": tokens[0], "outputTokens": tokens[1]}
    if cost is not None:
        payload["costEstimateUsd"] = cost
    log.add(PROVIDER_USAGE, payload, 0, root)


def test_0244_B_the_plainest_trial_is_one_view_with_its_bracket_and_score() -> None:
    log = Log()
    log.trial("t0", latency_ms=1234)
    ((key, view),) = collect_trials(log.events).items()
    assert key == ("t0", 0)
    assert (view.task_id, view.trial_index) == ("t0", 0)
    assert view.ran
    assert view.root_event_id == log.events[0].eventId
    assert (view.root_agent_id, view.root_invocation_id) == (AGENT, "inv-t0-0-0")
    assert view.started_at == "2026-12-01T09:00:00.000Z"
    assert view.completed_at == "2026-12-01T09:00:01.234Z"
    assert view.latency_ms == 1234
    assert view.outcome == "completed"
    assert view.scored is not None
    assert view.scored.passed
    assert (view.calls, view.model_call_count, view.cost_usd, view.has_output) == ([], 0, 0, False)
    assert closed(view)


def test_0244_B_latency_is_floored_to_the_millisecond_and_never_negative() -> None:
    view = TrialView(task_id="t", trial_index=0, started_at="2026-12-01T09:00:00.0009Z")
    assert view.latency_ms is None
    view.completed_at = "2026-12-01T09:00:00.0027+00:00"
    assert view.latency_ms == 1  # 1.8 ms
    view.completed_at = "2026-12-01T08:59:59Z"
    assert view.latency_ms == 0
    assert (
        TrialView(task_id="t", trial_index=0, completed_at="2026-12-01T09:00:00Z").latency_ms
        is None
    )


def test_a_replayed_trial_reports_the_latency_it_was_recorded_with() -> None:
    """The bracket of a trial replayed from a model cassette carries the latency it was recorded
    with; the view reads it (0 included) instead of the replay's own bracket time."""
    for recorded in (1234, 0):
        log = Log()
        root = _start(log, "t0")
        _done(log, root, at=7, marks={X_REPLAYED_LATENCY: recorded})
        view = collect_trials(log.events)[("t0", 0)]
        assert view.replayed_latency_ms == recorded
        assert view.latency_ms == recorded
    plain = Log()
    _done(plain, _start(plain, "t0"), at=7)
    assert collect_trials(plain.events)[("t0", 0)].latency_ms == 7


def test_0244_B_each_event_of_a_trial_adds_to_its_view() -> None:
    """Calls in order with their inputs and agent; a miss per missed tool with the entries
    served before it and its call's position; usage summed; the root agent's decision."""
    log = Log()
    root = _start(log, "t0")
    _call(log, root, "c1", n=1)
    _returned(log, root, "c1", fixture="served", at=2)
    _call(log, root, "c2", tool="book", n=2)
    _returned(log, root, "c2", tool="book", fixture="miss-live")
    _returned(log, root, "c-unseen", tool="pay", fixture="miss-failed")
    _call(log, root, "c3", tool="open")
    _usage(log, root, (10, 3), 0.25)
    _usage(log, root, (5, 1), None)
    log.add(DECIDED, {"agentId": HELPER, "decision": "not mine"}, 0, root)
    log.add(DECIDED, {"agentId": AGENT, "decision": None}, 0, root)
    _done(log, root, at=5)
    view = collect_trials(log.events)[("t0", 0)]
    assert view.calls == [
        ObservedCall("lookup", {"n": 1}, AGENT),
        ObservedCall("book", {"n": 2}, AGENT),
        ObservedCall("open", {}, AGENT),
    ]
    assert view.open_calls == {"c3": 2}
    assert view.fixture_indexes == [2]
    assert view.fixtures_served == 1
    assert view.fixture_misses == 2
    assert view.missed_tools == ["book", "pay"]
    assert view.miss_served == [1, 1]
    assert view.miss_calls == [1, None]
    assert view.failed_closed
    assert (view.model_call_count, view.input_tokens, view.output_tokens) == (2, 15, 4)
    assert view.cost_usd == 0.25
    assert view.has_output
    assert view.output is None
    assert view.latency_ms == 5


def test_0244_B_a_live_miss_alone_does_not_fail_closed_and_served_is_no_miss() -> None:
    log = Log()
    root = _start(log, "t0")
    _returned(log, root, "c1", fixture="served", at=0)
    _returned(log, root, "c2", fixture="live")
    _returned(log, root, "c3", fixture="miss-live")
    view = collect_trials(log.events)[("t0", 0)]
    assert (view.fixture_misses, view.missed_tools, view.failed_closed) == (1, ["lookup"], False)
    assert view.fixture_indexes == [0]


def test_0244_B_only_the_root_invocation_completes_the_trial() -> None:
    """A nested invocation's completion (another invocationId) leaves the bracket open."""
    log = Log()
    root = _start(log, "t0")
    failure = {"exceptionType": "ValueError", "message": "boom"}
    _done(log, root, inv="inv-nested", at=1, outcome="failed")
    view = collect_trials(log.events)[("t0", 0)]
    assert (view.outcome, view.completed_at) == (None, None)
    retry = {"attempt": 1, "cause": "other"}
    marks = {
        "x-wopeval-error": "agent-error",
        "x-wopeval-failure": failure,
        "x-wopeval-retry": retry,
    }
    _done(log, root, at=2, outcome="failed", marks=marks)
    view = collect_trials(log.events)[("t0", 0)]
    assert view.outcome == "failed"
    assert view.error_label == "agent-error"
    assert view.failure is not None
    assert view.failure.message == "boom"
    assert view.retry is not None
    assert view.retry.cause == "other"
    assert view.completed_at == "2026-12-01T09:00:00.002Z"


def test_0244_B_a_score_without_a_bracket_is_a_view_that_did_not_run() -> None:
    log = Log()
    _scored(log, "t0", index=None, passed=False)
    _failed(log, "t0")
    view = collect_trials(log.events)[("t0", 0)]
    assert not view.ran
    assert view.reason is not None
    assert view.reason.message == "no"
    assert view.latency_ms is None
    assert closed(view)


def test_0244_B_a_rerun_supersedes_an_unscored_bracket_and_keeps_the_retry_causes() -> None:
    """Attempts 1 and 2 end with retry marks and no score; attempt 3 is scored. A bracket after
    the score is read into the scored view (its score and causes kept), not a new one."""
    log = Log()
    for attempt, cause in ((1, "model-server"), (2, "mcp-server")):
        inv = f"inv-{attempt}"
        root = _start(log, "t0", inv=inv)
        _call(log, root, f"c{attempt}")
        _done(log, root, inv=inv, outcome="failed",
              marks={"x-wopeval-retry": {"attempt": attempt, "cause": cause}})  # fmt: skip
    root = _start(log, "t0", inv="inv-3")
    _done(log, root, inv="inv-3")
    _scored(log, "t0")
    views = collect_trials(log.events)
    view = views[("t0", 0)]
    assert view.root_invocation_id == "inv-3"
    assert view.retries == ("model-server", "mcp-server")
    assert view.retry is None
    assert view.calls == []
    assert view.outcome == "completed"
    again = _start(log, "t0", inv="inv-4")
    _call(log, again, "c4")
    after = collect_trials(log.events)[("t0", 0)]
    assert after.root_invocation_id == "inv-4"
    assert after.scored is not None
    assert [c.tool for c in after.calls] == ["lookup"]
    assert after.retries == ("model-server", "mcp-server")


def test_0244_B_a_first_attempt_without_a_retry_mark_passes_on_no_cause() -> None:
    log = Log()
    _start(log, "t0", inv="inv-1")
    root = _start(log, "t0", inv="inv-2")
    _done(log, root, inv="inv-2")
    _scored(log, "t0")
    assert collect_trials(log.events)[("t0", 0)].retries == ()


def test_0244_B_interleaved_trials_are_told_apart_by_their_root() -> None:
    log = Log()
    first = _start(log, "t0", 0, inv="inv-a")
    second = _start(log, "t0", 1, inv="inv-b")
    _call(log, second, "c1", tool="two")
    _call(log, first, "c1", tool="one")
    _done(log, second, inv="inv-b", at=7)
    _done(log, first, inv="inv-a", at=3)
    _scored(log, "t0", 1)
    _scored(log, "t0", 0)
    views = collect_trials(log.events)
    assert list(views) == [("t0", 0), ("t0", 1)]
    assert [c.tool for c in views[("t0", 0)].calls] == ["one"]
    assert [c.tool for c in views[("t0", 1)].calls] == ["two"]
    assert (views[("t0", 0)].latency_ms, views[("t0", 1)].latency_ms) == (3, 7)


def test_0244_B_a_log_without_markers_is_read_by_position() -> None:
    """Each top-level bracket owns the events until its own completion (a nested one does not
    close it) and goes to the next ``eval.scored`` that has no view; events before any bracket
    are dropped."""
    log = Log()
    _call(log, None, "c0", tool="stray")
    _start(log, None, inv="inv-a")
    _call(log, None, "c1", tool="one")
    _done(log, None, inv="inv-nested")
    _call(log, None, "c2", tool="still-one")
    _done(log, None, inv="inv-a", at=4)
    _start(log, None, inv="inv-b")
    _call(log, None, "c3", tool="two")
    _done(log, None, inv="inv-b")
    _scored(log, "x", None)
    _scored(log, "y", 0)
    _scored(log, "z", 0)
    views = collect_trials(log.events)
    assert list(views) == [("x", 0), ("y", 0), ("z", 0)]
    x, y, z = views.values()
    assert (x.task_id, x.trial_index, x.root_invocation_id) == ("x", 0, "inv-a")
    assert [c.tool for c in x.calls] == ["one", "still-one"]
    assert x.latency_ms == 4
    assert (y.task_id, y.trial_index, y.root_invocation_id) == ("y", 0, "inv-b")
    assert [c.tool for c in y.calls] == ["two"]
    assert not z.ran


def test_0244_B_a_positional_bracket_does_not_take_a_score_that_has_a_view() -> None:
    log = Log()
    root = _start(log, "t0")
    _done(log, root)
    _start(log, None, inv="inv-b")
    _done(log, None, inv="inv-b")
    _scored(log, "t0")
    _scored(log, "t1")
    views = collect_trials(log.events)
    assert views[("t0", 0)].root_invocation_id == "inv-1"
    assert views[("t1", 0)].root_invocation_id == "inv-b"


def test_0244_B_a_view_is_closed_once_scored_complete_and_explained() -> None:
    view = TrialView(task_id="t", trial_index=0)
    assert not closed(view)
    log = Log()
    _scored(log, "t", passed=False)
    _scored(log, "t", passed=True)
    failed, passed = (e.typed for e in log.events)
    view.scored = failed  # type: ignore[assignment]
    assert not closed(view)  # no reason yet
    view.scored = passed  # type: ignore[assignment]
    assert closed(view)  # never ran: no bracket to wait for
    view.root_event_id = "evt-root"
    assert not closed(view)  # ran, not complete
    view.completed_at = "2026-12-01T09:00:00Z"
    assert closed(view)
    view.scored = failed  # type: ignore[assignment]
    assert not closed(view)
    log2 = Log()
    _failed(log2, "t")
    view.reason = log2.events[0].typed  # type: ignore[assignment]
    assert closed(view)


def _collector(log: Log, planned: dict[str, int] | None = None) -> tuple[TrialCollector, list[Any]]:
    handed: list[Any] = []
    collector = TrialCollector(lambda v: handed.append((v.task_id, v.trial_index)), planned)
    for event in log.events:
        collector.feed(event)
    return collector, handed


def _two_trials() -> Log:
    log = Log()
    first = _start(log, "t0", 0, inv="inv-a")
    second = _start(log, "t0", 1, inv="inv-b")
    _done(log, second, inv="inv-b")
    _scored(log, "t0", 1, passed=False)
    _done(log, first, inv="inv-a")
    _scored(log, "t0", 0)
    _failed(log, "t0", 1)
    return log


def test_0244_B_a_collector_hands_each_view_over_once_it_is_closed() -> None:
    """t0/0 passes and closes at its score; t0/1 failed and closes at its reason."""
    for planned in (None, {"t0": 2}, {"t0": 1}):
        collector, handed = _collector(_two_trials(), planned)
        assert handed == [("t0", 0), ("t0", 1)]
        assert collector.views == {}
        assert collector.anomaly is None
        collector.finish()
        assert handed == [("t0", 0), ("t0", 1)]


def test_0244_B_finish_hands_over_the_views_still_open() -> None:
    log = Log()
    root = _start(log, "t0")
    _done(log, root)
    _scored(log, "t0", passed=False)  # no reason recorded
    _start(log, "t1")
    collector, handed = _collector(log)
    assert handed == []
    assert list(collector.views) == [("t0", 0), ("t1", 0)]
    collector.finish()
    assert handed == [("t0", 0), ("t1", 0)]
    assert collector.views == {}
    kept = TrialCollector()
    for event in log.events:
        kept.feed(event)
    kept.finish()
    assert list(kept.views) == [("t0", 0), ("t1", 0)]


def test_0244_B_without_closing_every_view_waits_for_finish() -> None:
    handed: list[Any] = []
    collector = TrialCollector(lambda v: handed.append(v.trial_index), closing=False)
    log = _two_trials()
    log.trial("t0", 0)  # a second bracket and score for a key already closed
    for event in log.events:
        collector.feed(event)
    assert handed == []
    assert collector.anomaly is None
    collector.finish()
    assert handed == [0, 1]


def test_0244_B_an_event_for_a_closed_trial_is_an_anomaly_naming_the_first() -> None:
    for planned in (None, {"t0": 2}):
        log = _two_trials()
        _scored(log, "t0", 0)
        _failed(log, "t0", 1)
        collector, _ = _collector(log, planned)
        assert collector.anomaly == "event 7: eval.scored for the closed trial ('t0', 0)"
    log = _two_trials()
    log.trial("t0", 1)
    collector, _ = _collector(log, {"t0": 2})
    assert collector.anomaly == "event 7: agent.invocation-started for the closed trial ('t0', 1)"


def test_0244_B_an_event_caused_by_a_closed_root_is_an_anomaly() -> None:
    log = _two_trials()
    _call(log, log.events[0].eventId, "late")
    collector, handed = _collector(log)
    assert collector.anomaly == "event 7: an event caused by no open trial"
    assert handed == [("t0", 0), ("t0", 1)]
    plain, _ = _collector(Log())
    assert plain.anomaly is None
    kept = TrialCollector()
    for event in log.events:
        kept.feed(event)
    assert kept.anomaly is None


def test_0244_B_a_closed_key_outside_the_plan_is_remembered_apart() -> None:
    """Planned ``t0`` has one trial: ``t0``/1 and every key of ``t1`` are outside the plan and
    still known as closed; a second score for ``t1`` is flagged (and handed over again)."""
    log = Log()
    log.trial("t1")
    log.trial("t0", 1)
    log.trial("t0", 0)
    _scored(log, "t1")
    collector, handed = _collector(log, {"t0": 1})
    assert handed == [("t1", 0), ("t0", 1), ("t0", 0), ("t1", 0)]
    assert collector.anomaly == "event 9: eval.scored for the closed trial ('t1', 0)"


def test_0244_B_a_reason_alone_is_a_view_under_its_own_key() -> None:
    log = Log()
    _failed(log, "t0", 2)
    view = collect_trials(log.events)[("t0", 2)]
    assert (view.task_id, view.trial_index, view.ran, view.scored) == ("t0", 2, False, None)
    assert view.reason is not None


def test_0244_B_a_null_task_marker_keys_the_trial_by_the_empty_id() -> None:
    """Hostile: the marker present but null (no suite task has the empty id)."""
    log = Log()
    payload = {"invocationId": "inv-1", "agentId": AGENT, "source": "run-api", X_TASK_ID: None}
    root = log.add(INVOCATION_STARTED, payload, 0, None)
    _done(log, root)
    assert list(collect_trials(log.events)) == [("", 0)]


def test_0244_B_a_score_before_its_bracket_completes_closes_at_the_completion() -> None:
    """An imported log may score a trial before its bracket ends: the view is handed over at
    the root's completion, not held until :meth:`TrialCollector.finish`."""
    log = Log()
    root = _start(log, "t0")
    _scored(log, "t0")
    _call(log, root, "c1")
    collector, handed = _collector(log)
    assert handed == []
    _done(log, root)
    collector.feed(log.events[-1])
    assert handed == [("t0", 0)]
    assert collector.views == {}


def test_a_keyed_root_caused_by_an_open_trial_starts_its_own_trial() -> None:
    # A root started event carrying x-wopeval-taskId opens its trial even when its causationId
    # names another open trial's root: it is not an event of that trial.
    log = Log()
    first = _start(log, "t", 0, inv="inv-1")
    second = log.add(
        INVOCATION_STARTED,
        {"invocationId": "inv-2", "agentId": AGENT, "source": "run-api", X_TASK_ID: "t",
         "x-wopeval-trialIndex": 1},
        0,
        first,
    )  # fmt: skip
    _call(log, second, "c-2", q=2)
    _call(log, first, "c-1", q=1)
    views = collect_trials(log.events)
    assert sorted(views) == [("t", 0), ("t", 1)]
    assert [c.inputs for c in views[("t", 0)].calls] == [{"q": 1}]
    assert [c.inputs for c in views[("t", 1)].calls] == [{"q": 2}]
    assert views[("t", 1)].root_invocation_id == "inv-2"


def test_0244_B_a_score_and_reason_caused_by_their_open_root_close_the_trial() -> None:
    # wopeval records a trial's eval.scored and trial-failed with causationId = its root: an
    # event of an open trial, yet keyed, so it must reach the keyed reading (the fast path
    # for an open trial's events hands on only the types a view reads).
    log = Log()
    first = _start(log, "t0", 0, inv="inv-a")
    second = _start(log, "t0", 1, inv="inv-b")
    _done(log, first, inv="inv-a")
    _done(log, second, inv="inv-b")
    log.add(EVAL_SCORED, {"taskId": "t0", "score": 1.0, "passed": True, "trialIndex": 0}, 0, first)
    log.add(
        EVAL_SCORED, {"taskId": "t0", "score": 0.0, "passed": False, "trialIndex": 1}, 0, second
    )
    reason = {"taskId": "t0", "trialIndex": 1, "kind": "output-mismatch", "message": "no"}
    log.add(TRIAL_FAILED, reason, 0, second)
    collector, handed = _collector(log, {"t0": 2})
    assert handed == [("t0", 0), ("t0", 1)]
    assert collector.views == {}
    assert collector.anomaly is None
