"""``read_trial_calls`` over hand-made logs (pure): which calls are the trial's, how each is paired
with its answer, what the answer says, and which trials of the task the log holds."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from tests.grading import hand_logs
from tests.grading.hand_logs import AGENT
from wopeval.grading.trial_calls import TrialCall, read_trial_calls
from wopeval.wire.events import RunEvent


class Log(hand_logs.Log):
    def __init__(self) -> None:
        super().__init__()
        self.invocations: dict[str, str] = {}

    def put(self, type_: str, payload: dict[str, Any], cause: str | None = None) -> str:
        return self.add(type_, payload, 0, cause)

    def start(self, task: str | None = "t", index: int | None = 0, **extra: Any) -> str:
        started: dict[str, Any] = {"invocationId": f"i{len(self.events)}", "agentId": AGENT,
                                   "source": "run-api", **extra}  # fmt: skip
        if task is not None:
            started["x-wopeval-taskId"] = task
        if index is not None:
            started["x-wopeval-trialIndex"] = index
        root = self.put("agent.invocation-started", started)
        self.invocations[root] = started["invocationId"]
        return root

    def call(self, root: str, call_id: str, tool: str = "crm:lookup", args: Any = None) -> None:
        payload = {"agentId": AGENT, "toolName": tool, "callId": call_id, "inputs": args}
        self.put("agent.tool-called", payload, root)

    def ret(self, root: str, call_id: str, tool: str = "crm:lookup", **answer: Any) -> None:
        payload = {"agentId": AGENT, "toolName": tool, "callId": call_id, "status": "ok", **answer}
        self.put("agent.tool-returned", payload, root)

    def finish(self, root: str | None, task: str = "t", index: int = 0) -> None:
        if root is not None:
            done = {
                "invocationId": self.invocations[root],
                "agentId": AGENT,
                "outcome": "completed",
            }
            self.put("agent.invocation-completed", done, root)
        scored = {"taskId": task, "trialIndex": index, "passed": True, "score": 1.0}
        self.put("eval.scored", scored, root)


class Counted:
    """A log that counts how often it is read."""

    def __init__(self, events: list[RunEvent]) -> None:
        self.events = events
        self.passes = 0

    def __iter__(self) -> Iterator[RunEvent]:
        self.passes += 1
        return iter(self.events)


# A trace cut short (the OTLP import marks its root): ``**`` keeps the wire name.
CUT_4: Any = {"x-wopeval-traceIncomplete": 4}
CUT_3: Any = {"x-wopeval-traceIncomplete": 3}


def _facts(call: TrialCall) -> tuple[Any, ...]:
    return (
        call.index, call.tool, call.args, call.agent_id, call.answered, call.result_captured,
        call.ok, call.outcome, call.error_code, call.error_message, call.fixture,
        call.fixture_index, call.gateway,
    )  # fmt: skip


def test_one_task_one_trial_one_call_is_read_with_its_answer() -> None:
    log = Log()
    root = log.start()
    log.call(root, "c0", args={"id": 7})
    log.ret(root, "c0", outcome={"found": True})
    log.finish(root)
    trial = read_trial_calls(log.events, "t", 0)
    assert trial.view is not None
    assert trial.view.root_event_id == root
    assert [_facts(c) for c in trial.calls] == [
        (0, "crm:lookup", {"id": 7}, AGENT, True, True, True, {"found": True}, None, None, None,
         None, False)
    ]  # fmt: skip
    assert (trial.indexes, trial.ran, trial.incomplete) == ((0,), (0,), 0)


def test_each_kind_of_answer_says_what_the_log_holds() -> None:
    log = Log()
    root = log.start()
    for n in range(6):
        log.call(root, f"c{n}", args=n)
    log.ret(root, "c0", status="error", error={"code": "crm.no_order", "message": "no such"})
    log.ret(root, "c1", status="error")  # a tool error without its error: not captured
    log.ret(root, "c2")  # a success without its outcome (a content-free import)
    log.ret(root, "c3", outcome=None)  # a recorded null result
    served: Any = {"x-wopeval-fixture": "served", "x-wopeval-fixtureIndex": 2}
    log.ret(root, "c4", outcome=[1], **served)
    miss = {"code": "wopeval.fixture_miss", "message": "m"}
    log.ret(root, "c5", status="error", error=miss, **{"x-wopeval-fixture": "miss-failed"})
    log.finish(root)
    facts = [_facts(c)[4:] for c in read_trial_calls(log.events, "t", 0).calls]
    assert facts == [
        (True, True, False, None, "crm.no_order", "no such", None, None, False),
        (True, False, False, None, None, None, None, None, False),
        (True, False, True, None, None, None, None, None, False),
        (True, True, True, None, None, None, None, None, False),
        (True, True, True, [1], None, None, "served", 2, True),
        (True, True, False, None, "wopeval.fixture_miss", "m", "miss-failed", None, True),
    ]


def test_an_unanswered_call_has_no_answer() -> None:
    log = Log()
    root = log.start()
    log.call(root, "c0", args={"a": 1})
    log.finish(root)
    [call] = read_trial_calls(log.events, "t", 0).calls
    assert _facts(call)[4:] == (False, False, False, None, None, None, None, None, False)
    assert call.returned is None


def test_calls_are_paired_with_answers_as_grading_pairs_them() -> None:
    """A re-issued callId is a second call; an answer goes to the latest unanswered call of its
    callId, once; an answer before its call, or to no call, answers nothing."""
    log = Log()
    root = log.start()
    log.ret(root, "c0", outcome="early")
    log.call(root, "c0", tool="a")
    log.call(root, "c0", tool="b")
    log.ret(root, "c0", outcome="first")
    log.ret(root, "c0", outcome="second")
    log.ret(root, "zz", outcome="stray")
    log.call(root, "c1", tool="c")
    log.ret(root, "c1", outcome="third")
    log.finish(root)
    trial = read_trial_calls(log.events, "t", 0)
    got = [(c.index, c.tool, c.answered, c.outcome) for c in trial.calls]
    assert got == [(0, "a", False, None), (1, "b", True, "first"), (2, "c", True, "third")]
    assert trial.view is not None
    assert [c.tool for c in trial.view.calls] == [c.tool for c in trial.calls]


def test_only_the_chosen_trials_calls_are_read_from_an_interleaved_log() -> None:
    log = Log()
    mine = log.start("t", 1)
    other = log.start("u", 1)
    earlier = log.start("t", 0)
    log.call(other, "c0", tool="other")
    log.call(mine, "c0", tool="mine")
    log.call(earlier, "c0", tool="earlier")
    log.ret(other, "c0", outcome="theirs")
    log.ret(mine, "c0", outcome="ours")
    for root, task, index in ((other, "u", 1), (earlier, "t", 0), (mine, "t", 1)):
        log.finish(root, task, index)
    counted = Counted(log.events)
    trial = read_trial_calls(counted, "t", 1)
    assert counted.passes == 1  # the root found by its markers, its calls in the same pass
    assert [(c.tool, c.outcome) for c in trial.calls] == [("mine", "ours")]
    assert (trial.indexes, trial.ran) == ((0, 1), (0, 1))
    absent = read_trial_calls(log.events, "t", 2)
    assert (absent.view, absent.calls, absent.indexes, absent.incomplete) == (None, (), (0, 1), 0)
    assert read_trial_calls(log.events, "v", 0).indexes == ()


def test_a_trial_that_never_ran_is_listed_but_not_as_ran() -> None:
    log = Log()
    log.finish(log.start("t", 0), "t", 0)
    log.finish(None, "t", 1)  # a trial skipped by a cost ceiling: eval.scored, no bracket
    trial = read_trial_calls(log.events, "t", 1)
    assert trial.view is not None
    assert not trial.view.ran
    assert (trial.calls, trial.indexes, trial.ran) == ((), (0, 1), (0,))


def test_the_last_attempt_of_a_resumed_trial_is_read_with_its_own_cut_count() -> None:
    log = Log()
    first = log.start(**CUT_4)
    log.call(first, "c0", tool="first")
    log.ret(first, "c0", outcome=1)
    last = log.start()  # the resume re-runs the unscored trial
    log.call(last, "c0", tool="last")
    log.finish(last)
    trial = read_trial_calls(log.events, "t", 0)
    assert [(c.tool, c.answered) for c in trial.calls] == [("last", False)]
    assert trial.incomplete == 0
    cut = Log()
    root = cut.start(**CUT_3)
    cut.finish(root)
    assert read_trial_calls(cut.events, "t", 0).incomplete == 3


def test_a_root_without_a_trial_index_is_trial_zero() -> None:
    log = Log()
    root = log.start("t", None)
    log.call(root, "c0")
    log.finish(root)
    assert len(read_trial_calls(log.events, "t", 0).calls) == 1


def test_a_wopeval_log_is_read_once() -> None:
    log = Log()
    root = log.start()
    log.call(root, "c0")
    log.finish(root)
    counted = Counted(log.events)
    assert len(read_trial_calls(counted, "t", 0).calls) == 1
    assert counted.passes == 1


def test_a_log_that_touches_a_closed_trial_again_is_read_whole() -> None:
    log = Log()
    root = log.start()
    log.call(root, "c0")
    log.ret(root, "c0", outcome=1)
    log.finish(root)
    log.put("eval.scored", {"taskId": "t", "trialIndex": 0, "passed": False, "score": 0.0})
    counted = Counted(log.events)
    trial = read_trial_calls(counted, "t", 0)
    assert counted.passes == 2
    assert trial.view is not None
    assert trial.view.scored is not None
    assert trial.view.scored.passed is False
    assert [(c.outcome, c.result_captured) for c in trial.calls] == [(1, True)]
    assert (trial.indexes, trial.ran) == ((0,), (0,))


def test_a_trial_attributed_by_position_has_its_calls_read_again() -> None:
    """A log of another host: no trial markers on the root, the trial named by ``eval.scored``."""
    log = Log()
    root = log.start(None, None, **{"x-wopeval-traceIncomplete": 2})
    log.call(root, "c0", tool="crm:café\n", args=["hostile", None])
    log.ret(root, "c0", outcome="<b>")
    log.finish(root)
    second = log.start(None, None)
    log.call(second, "c0", tool="second")
    log.finish(second, "t", 1)
    counted = Counted(log.events)
    trial = read_trial_calls(counted, "t", 0)
    assert counted.passes == 3  # its views read whole (an anomaly to the closing reader), its calls
    assert trial.view is not None
    assert trial.view.root_event_id == root
    assert [(c.tool, c.args, c.outcome) for c in trial.calls] == [
        ("crm:café\n", ["hostile", None], "<b>")
    ]
    assert trial.incomplete == 2
    other = read_trial_calls(log.events, "t", 1)
    assert [c.tool for c in other.calls] == ["second"]
    assert other.incomplete == 0
