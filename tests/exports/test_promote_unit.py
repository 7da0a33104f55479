"""``promote_trial`` over hand-made logs (pure): what each member of the promoted suite is made of,
and each refusal, named. The stored-run tests are in ``test_promote*.py``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest

from wopeval.exports.promote import PromoteError, PromoteOptions, promote_trial
from wopeval.wire.events import RunEvent

AGENT = "core.test.agents.a"
OK = ("ok",)


@dataclass
class Call:
    tool: str
    args: Any = None
    answer: tuple[Any, ...] | None = OK  # ("ok", outcome) / ("error", code) / ("miss",) / None
    agent: str = AGENT


@dataclass
class Trial:
    task: str = "t"
    index: int = 0
    calls: list[Call] = field(default_factory=list)
    output: tuple[Any] | None = ("done",)
    passed: bool | None = True  # None: no eval.scored
    kind: str = "output-mismatch"
    ran: bool = True
    completed: bool = True
    incomplete: int | None = None


class Log:
    def __init__(self) -> None:
        self.events: list[RunEvent] = []

    def add(self, type_: str, payload: dict[str, Any], cause: str | None = None) -> str:
        seq = len(self.events)
        event_id = f"ev_{seq:026d}"
        self.events.append(
            RunEvent(
                eventId=event_id, runId="local/r", timestamp=f"2026-01-01T00:00:{seq % 60:02d}Z",
                sequence=seq, type=type_, payload=payload, causationId=cause,
            )
        )  # fmt: skip
        return event_id

    def trial(self, trial: Trial) -> Log:
        started: dict[str, Any] = {
            "invocationId": f"i{len(self.events)}", "agentId": AGENT, "source": "run-api",
            "x-wopeval-taskId": trial.task, "x-wopeval-trialIndex": trial.index,
        }  # fmt: skip
        if trial.incomplete is not None:
            started["x-wopeval-traceIncomplete"] = trial.incomplete
        root = self.add("agent.invocation-started", started) if trial.ran else None
        for n, call in enumerate(trial.calls):
            base = {"agentId": call.agent, "toolName": call.tool, "callId": f"c{n}"}
            self.add("agent.tool-called", {**base, "inputs": call.args}, root)
            self._answer(base, call.answer, root)
        if trial.ran and trial.output is not None:
            self.add("agent.decided", {"agentId": AGENT, "decision": trial.output[0]}, root)
        if trial.ran and trial.completed:
            done = {"invocationId": started["invocationId"], "agentId": AGENT}
            self.add("agent.invocation-completed", {**done, "outcome": "completed"}, root)
        if trial.passed is not None:
            scored = {"taskId": trial.task, "trialIndex": trial.index, "passed": trial.passed,
                      "score": 1.0 if trial.passed else 0.0}  # fmt: skip
            self.add("eval.scored", scored, root)
            if not trial.passed:
                failed = {"taskId": trial.task, "trialIndex": trial.index, "kind": trial.kind,
                          "message": "m"}  # fmt: skip
                self.add("wopeval.trial-failed", failed, root)
        return self

    def _answer(self, base: dict[str, Any], answer: tuple[Any, ...] | None, root: Any) -> None:
        if answer is None:
            return
        if answer[0] == "ok":
            outcome = answer[1] if len(answer) > 1 else {"ok": True}
            self.add("agent.tool-returned", {**base, "status": "ok", "outcome": outcome}, root)
        elif answer[0] == "error":
            error = {"code": answer[1], "message": "no such order"}
            self.add("agent.tool-returned", {**base, "status": "error", "error": error}, root)
        else:
            miss = {"status": "error", "error": {"code": "wopeval.fixture_miss", "message": "m"},
                    "x-wopeval-fixture": "miss-failed"}  # fmt: skip
            self.add("agent.tool-returned", {**base, **miss}, root)


def _doc(**task: Any) -> dict[str, Any]:
    original = {
        "taskId": "t",
        "input": {"q": 1},
        "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "done"}},
        **task,
    }
    return {
        "suiteId": "acme.evals.support",
        "version": "1.2.3",
        "targetAgentId": "someone.else",
        "modes": ["golden"],
        "allowedModels": ["frontier"],
        "thresholds": {"passScore": 0.5, "maxCostUsd": 1.0, "maxP95LatencyMs": 10},
        "trials": {"count": 3},
        "tasks": [{"taskId": "other", "input": None, "expected": {}}, original],
    }


def _opts(**kw: Any) -> PromoteOptions:
    base: dict[str, Any] = {"run_id": "local/r", "task_id": "t", "trial_index": 0,
                            "target_agent_id": AGENT}  # fmt: skip
    return PromoteOptions(**{**base, **kw})


def _promote(trials: list[Trial], document: dict[str, Any] | None = None, **kw: Any) -> Any:
    log = Log()
    for trial in trials:
        log.trial(trial)
    return promote_trial(document or _doc(), log.events, _opts(**kw))


def _refused(trials: list[Trial], message: str, document: Any = None, **kw: Any) -> None:
    with pytest.raises(PromoteError) as caught:
        _promote(trials, document, **kw)
    assert str(caught.value) == message


LOOKUP = Call("crm:lookup", {"id": "A"}, ("ok", {"status": "late"}))
FAILED_TOOL = Call("crm:fail", {"id": "B"}, ("error", "tool.failed"))
MISSED = Call("crm:missed", {"id": "C"}, ("miss",))
NO_ARGS = Call("crm:ping", None, ("ok", None))
DELEGATED = Call("crm:sub", {"x": 1}, ("ok", 2), agent="helper.agent")


def test_a_passing_trial_becomes_a_plain_suite_of_one_task() -> None:
    doc = _doc(fixtures={"memorySeed": [{"k": 1}], "onMiss": "live", "toolResponses": []})
    made = _promote([Trial(calls=[LOOKUP, FAILED_TOOL, MISSED, NO_ARGS])], doc)
    assert made.document == {
        "suiteId": "acme.evals.support-promoted",
        "version": "1.2.3",
        "targetAgentId": AGENT,
        "modes": ["golden"],
        "allowedModels": ["frontier"],
        "thresholds": {"passScore": 0.5},
        "tasks": [
            {
                "taskId": "t-trial-0",
                "input": {"q": 1},
                "expected": {
                    "kind": "golden",
                    "match": {"strategy": "exact", "value": "done"},
                    "trajectory": {
                        "match": "exact",
                        "calls": [
                            {"tool": "crm:lookup", "args": {"id": "A"}, "argsMatch": "exact"},
                            {"tool": "crm:fail", "args": {"id": "B"}, "argsMatch": "exact"},
                            {"tool": "crm:missed", "args": {"id": "C"}, "argsMatch": "exact"},
                            {"tool": "crm:ping"},
                        ],
                    },
                },
                "fixtures": {
                    "memorySeed": [{"k": 1}],
                    "onMiss": "fail",
                    "toolResponses": [
                        {"tool": "crm:lookup", "args": {"id": "A"}, "argsMatch": "exact",
                         "response": {"status": "late"}},
                        {"tool": "crm:fail", "args": {"id": "B"}, "argsMatch": "exact",
                         "response": {"x-wopeval-toolError": {"code": "tool.failed",
                                                              "message": "no such order"}}},
                        {"tool": "crm:ping", "response": None},
                    ],
                },
            }
        ],
    }  # fmt: skip
    assert (made.task_id, made.passed, made.failure_kind) == ("t-trial-0", True, None)
    assert (made.calls, made.fixtures, made.tool_errors, made.forbidden) == (4, 3, 1, None)
    assert made.provenance == (
        "Promoted by wopeval from run local/r, task t, trial 0 (passed).",
        "Fixtures: 3 recorded tool result(s), 1 of them error(s), onMiss: fail.",
        "Expected path: the trial's 4 call(s) in order (match: exact).",
    )


def test_the_plainest_suite_keeps_only_what_it_has() -> None:
    document = {"suiteId": "a.evals.b", "version": "1.0.0", "modes": ["golden"],
                "tasks": [{"taskId": "t", "input": "hi",
                           "expected": {"kind": "rubric", "rubric": [{"criterion": "c",
                                                                      "weight": 1}]}}]}  # fmt: skip
    made = _promote([Trial()], document, new_task_id="n", suite_id="x.evals.y")
    assert made.document == {
        "suiteId": "x.evals.y", "version": "1.0.0", "targetAgentId": AGENT, "modes": ["golden"],
        "tasks": [{"taskId": "n", "input": "hi",
                   "expected": {"kind": "trajectory",
                                "trajectory": {"match": "exact", "calls": []}},
                   "fixtures": {"onMiss": "fail", "toolResponses": []}}],
    }  # fmt: skip
    assert made.task_id == "n"


def test_thresholds_without_pass_score_are_left_out() -> None:
    document = _doc()
    document["thresholds"] = {"maxCostUsd": 2.0}
    assert "thresholds" not in _promote([Trial()], document).document


def test_a_delegate_call_includes_delegates() -> None:
    made = _promote([Trial(calls=[LOOKUP, DELEGATED])])
    trajectory = made.document["tasks"][0]["expected"]["trajectory"]
    assert trajectory["includeDelegates"] is True
    assert [c["tool"] for c in trajectory["calls"]] == ["crm:lookup", "crm:sub"]
    own = _promote([Trial(calls=[LOOKUP])]).document["tasks"][0]["expected"]["trajectory"]
    assert "includeDelegates" not in own


def test_expect_output_expects_the_observed_output_even_null() -> None:
    for output in ("said", None, {"a": [1]}):
        made = _promote([Trial(output=(output,))], expect_output=True)
        assert made.document["tasks"][0]["expected"]["match"] == {
            "strategy": "exact",
            "value": output,
        }
    _refused(
        [Trial(output=None)],
        "--expect-output: trial 0 of task 't' recorded no output",
        expect_output=True,
    )


def test_forbid_call_forbids_that_call_s_tool_and_expects_the_others() -> None:
    calls = [LOOKUP, FAILED_TOOL, NO_ARGS]
    made = _promote([Trial(calls=calls, passed=False, kind="trajectory")], forbid_call=2)
    expected = made.document["tasks"][0]["expected"]
    assert expected["trajectory"] == {
        "match": "exact",
        "calls": [
            {"tool": "crm:lookup", "args": {"id": "A"}, "argsMatch": "exact"},
            {"tool": "crm:fail", "args": {"id": "B"}, "argsMatch": "exact"},
        ],
        "forbidden": ["crm:ping"],
    }
    assert made.forbidden == "crm:ping"
    assert made.failure_kind == "trajectory"
    assert made.provenance[0].endswith("trial 0 (failed: trajectory).")
    assert made.provenance[-1] == 'Forbidden: "crm:ping" (call 2).'
    first = _promote([Trial(calls=calls)], forbid_call=0)
    assert first.forbidden == "crm:lookup"


def test_forbid_call_is_refused_past_the_calls_and_for_a_repeated_tool() -> None:
    calls = [LOOKUP, FAILED_TOOL]
    message = "--forbid-call {}: the trial made 2 call(s) (indexes: 0-1)"
    _refused([Trial(calls=calls)], message.format(2), forbid_call=2)
    _refused([Trial(calls=calls)], message.format(-1), forbid_call=-1)
    _refused([Trial()], "--forbid-call 0: the trial made 0 call(s) (indexes: none)", forbid_call=0)
    twice = [LOOKUP, FAILED_TOOL, LOOKUP, LOOKUP]
    _refused(
        [Trial(calls=twice)],
        '--forbid-call 2: its tool "crm:lookup" is also called at 0, 3; forbidding it would '
        "forbid those calls too",
        forbid_call=2,
    )


def test_as_failure_keeps_the_original_expectation() -> None:
    original = {"kind": "trajectory",
                "trajectory": {"match": "in-order", "calls": [{"tool": "crm:lookup"}]}}  # fmt: skip
    made = _promote(
        [Trial(calls=[LOOKUP], passed=False, kind="trajectory")],
        _doc(expected=original),
        as_failure=True,
    )
    assert made.document["tasks"][0]["expected"] == original
    assert made.provenance[2] == "Expected: the original task's expectation (--as-failure)."
    assert len(made.provenance) == 3
    _refused(
        [Trial(passed=True)],
        "--as-failure: trial 0 of task 't' passed; there is no failure to keep (promote it "
        "without --as-failure)",
        as_failure=True,
    )
    _refused([Trial()], "--as-failure and --forbid-call: give one (both set the expectation)",
             as_failure=True, forbid_call=0)  # fmt: skip
    _refused([Trial()], "--as-failure and --expect-output: give one (both set the expectation)",
             as_failure=True, expect_output=True)  # fmt: skip


def test_what_is_not_in_the_log_is_refused_by_name() -> None:
    _refused([Trial()], "--task: the run's suite has no task 'u' (its tasks: 'other', 't')",
             task_id="u")  # fmt: skip
    many = {"tasks": [*({"taskId": f"k{i}"} for i in range(12)), "junk"]}
    _refused([Trial()], "--task: the run's suite has no task 't' (its tasks: "
             + ", ".join(f"'k{i}'" for i in range(10)) + ")", many)  # fmt: skip
    _refused(
        [Trial(index=1), Trial(index=3), Trial(task="other", index=5)],
        "--trial: trial 0 of task 't' is not in run local/r (its trials in the log: 1, 3)",
    )
    _refused([], "--trial: trial 0 of task 't' is not in run local/r (its trials in the log: "
             "none)")  # fmt: skip


def test_a_trial_that_did_not_finish_or_never_ran_is_refused() -> None:
    _refused([Trial(passed=None)], "--trial: trial 0 of task 't' did not finish: the log has no "
             "eval.scored for it (the run was stopped or is still running)")  # fmt: skip
    _refused([Trial(completed=False)], "--trial: trial 0 of task 't' did not finish: its "
             "agent.invocation-completed is missing")  # fmt: skip
    _refused([Trial(ran=False, passed=False, kind="skipped-budget")],
             "--trial: trial 0 of task 't' never ran (skipped-budget): there is nothing to "
             "promote")  # fmt: skip


def test_a_trial_that_never_ran_without_a_reason_says_not_run() -> None:
    log = Log()
    log.add("eval.scored", {"taskId": "t", "trialIndex": 0, "passed": True, "score": 1.0})
    with pytest.raises(PromoteError, match=r"never ran \(not-run\)"):
        promote_trial(_doc(), log.events, _opts())


def test_a_result_missing_from_the_log_is_refused() -> None:
    _refused(
        [Trial(calls=[LOOKUP, Call("crm:gone", {"a": 1}, None)])],
        'call 1 ("crm:gone"): its result was not recorded (no agent.tool-returned)',
    )


def test_an_imported_trial_needs_its_arguments_and_results() -> None:
    capture = "turn content capture on in the instrumentation"
    _refused([Trial(calls=[LOOKUP, NO_ARGS])], 'call 1 ("crm:ping"): its arguments were not '
             f"captured (none in the trace; {capture})", imported=True)  # fmt: skip
    bare = Call("crm:bare", "A-1", ("ok", 1))
    _refused([Trial(calls=[bare])], 'call 0 ("crm:bare"): its arguments were not captured (a '
             f"bare value in the trace; {capture})", imported=True)  # fmt: skip
    blank = Call("crm:blank", {"a": 1}, ("ok", None))
    _refused([Trial(calls=[blank])], 'call 0 ("crm:blank"): its result was not captured (none '
             f"in the trace; {capture})", imported=True)  # fmt: skip
    issued = Call("crm:issued", {"a": 1}, None)
    _refused([Trial(calls=[issued])], 'call 0 ("crm:issued"): its result was not captured (a '
             "model span issued it and no tool span in the trace answered it)",
             imported=True)  # fmt: skip
    # a tool error carries no result: it is promoted as that error
    made = _promote([Trial(calls=[FAILED_TOOL])], imported=True)
    assert made.tool_errors == 1
    # a run of wopeval's own records what it was given: null arguments, a null result
    assert _promote([Trial(calls=[NO_ARGS, blank])]).fixtures == 2


def test_a_trace_cut_short_is_refused() -> None:
    _refused([Trial(calls=[LOOKUP], incomplete=3)], "the trace was cut short: 3 span(s) of this "
             "trial name a parent span the trace does not hold (an unfinished span is never "
             "exported)")  # fmt: skip
    assert _promote([Trial(incomplete=0)]).calls == 0


def test_the_last_attempt_of_a_retried_trial_is_promoted() -> None:
    log = Log()
    first = Trial(calls=[LOOKUP], passed=None, completed=False)
    log.trial(first).trial(Trial(calls=[FAILED_TOOL]))
    made = promote_trial(_doc(), log.events, _opts())
    assert [c["tool"] for c in made.document["tasks"][0]["expected"]["trajectory"]["calls"]] == [
        "crm:fail"
    ]


def test_a_log_that_touches_a_closed_trial_again_is_read_whole() -> None:
    """The anomaly path: a second eval.scored for a closed trial (never written by wopeval)."""
    log = Log().trial(Trial(calls=[LOOKUP])).trial(Trial(task="other"))
    log.add("eval.scored", {"taskId": "t", "trialIndex": 0, "passed": False, "score": 0.0})
    made = promote_trial(_doc(), log.events, _opts())
    assert made.passed is False
    assert made.calls == 1


def test_tool_names_are_quoted_as_written_in_refusals_and_escaped_in_the_comment() -> None:
    cafe = Call("crm:café", {"a": 1}, None)
    _refused([Trial(calls=[cafe])], 'call 0 ("crm:café"): its result was not recorded (no '
             "agent.tool-returned)")  # fmt: skip
    twice = [Call("crm:café", {"a": 1}), Call("crm:café", {"a": 2})]
    _refused([Trial(calls=twice)], '--forbid-call 0: its tool "crm:café" is also called at 1; '
             "forbidding it would forbid those calls too", forbid_call=0)  # fmt: skip
    made = _promote([Trial(calls=[Call("crm:café\n#x", {"a": 1})])], forbid_call=0)
    assert made.forbidden == "crm:café\n#x"
    assert made.provenance[-1] == 'Forbidden: "crm:caf\\u00e9\\n#x" (call 0).'


def test_a_failed_trial_without_a_recorded_reason_says_unknown() -> None:
    log = Log()
    log.trial(Trial(passed=None))
    log.add("eval.scored", {"taskId": "t", "trialIndex": 0, "passed": False, "score": 0.0},
            log.events[0].eventId)  # fmt: skip
    made = promote_trial(_doc(), log.events, _opts())
    assert made.failure_kind is None
    assert made.provenance[0] == (
        "Promoted by wopeval from run local/r, task t, trial 0 (failed: unknown)."
    )
