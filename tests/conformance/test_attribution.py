"""Splitting a wire log into trials (wopeval.conformance.attribution)."""

from __future__ import annotations

from typing import Any

from wopeval.conformance.attribution import attribute

AGENT = "core.conformance.agents.scripted"


class Log:
    """Build a wire log by hand."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def add(self, type_: str, payload: dict[str, Any], cause: str | None = None) -> str:
        event_id = f"event-{len(self.events):011d}"
        event: dict[str, Any] = {"eventId": event_id, "type": type_, "payload": payload}
        event["sequence"] = len(self.events)
        if cause is not None:
            event["causationId"] = cause
        self.events.append(event)
        return event_id

    def root(self, inv: str, marks: dict[str, Any] | None = None, agent: str = AGENT) -> str:
        payload = {"invocationId": inv, "agentId": agent, "source": "run-api", **(marks or {})}
        return self.add("agent.invocation-started", payload)

    def call(self, tool: str, cause: str | None = None, agent: str = AGENT) -> str:
        payload = {"agentId": agent, "toolName": tool, "callId": tool, "inputs": {"t": tool}}
        return self.add("agent.tool-called", payload, cause)

    def done(self, inv: str, cause: str | None = None, agent: str = AGENT) -> str:
        payload = {"invocationId": inv, "agentId": agent, "outcome": "completed"}
        return self.add("agent.invocation-completed", payload, cause)

    def scored(self, task: str, index: int | None, cause: str | None = None) -> str:
        payload: dict[str, Any] = {"taskId": task, "score": 1, "passed": True}
        if index is not None:
            payload["trialIndex"] = index
        return self.add("eval.scored", payload, cause)


def _marks(task: str, index: int) -> dict[str, Any]:
    return {"x-wopeval-taskId": task, "x-wopeval-trialIndex": index}


def test_markers_follow_causation_chains_through_interleaved_trials() -> None:
    log = Log()
    a = log.root("i1", _marks("t-a", 0))
    b = log.root("i2", _marks("t-a", 1))
    first = log.call("x:one", a)
    log.call("x:two", b)
    log.add("agent.tool-returned", {"agentId": AGENT, "toolName": "x:one", "callId": "c"}, first)
    nested = log.root("i3", agent=f"{AGENT}.helper")  # a delegate bracket inside trial a
    log.events[-1]["causationId"] = a
    log.call("x:three", nested, agent=f"{AGENT}.helper")  # reaches a through the chain
    log.done("i2", b)
    log.scored("t-a", 1, b)
    log.done("i1", a)
    log.scored("t-a", 0, a)
    found = attribute(reversed(log.events))  # order restored by sequence
    assert found.method == "markers"
    trial_0, trial_1 = found.trial("t-a", 0), found.trial("t-a", 1)
    assert trial_0 is not None
    assert trial_1 is not None
    assert [c.tool for c in trial_0.calls] == ["x:one", "x:three"]
    assert [c.agent_id for c in trial_0.calls] == [AGENT, f"{AGENT}.helper"]
    assert [c.tool for c in trial_1.calls] == ["x:two"]
    assert [s["trialIndex"] for s in trial_0.scored + trial_1.scored] == [0, 1]
    assert found.bracket_count == 2


def test_markers_without_trial_index_default_to_trial_zero() -> None:
    log = Log()
    root = log.root("i1", {"x-wopeval-taskId": "t-a"})
    log.call("x:one", root)
    log.scored("t-a", None)  # no causation: found by (taskId, 0)
    found = attribute(log.events)
    trial = found.trial("t-a", 0)
    assert trial is not None
    assert [c.tool for c in trial.calls] == ["x:one"]
    assert len(trial.scored) == 1


def test_causation_from_eval_scored_names_the_task() -> None:
    log = Log()
    a = log.root("i1")
    b = log.root("i2")
    log.call("x:b", b)
    log.call("x:a", a)
    log.scored("t-b", None, b)
    log.scored("t-a", None, a)
    found = attribute(log.events)
    assert found.method == "causation"
    assert [c.tool for c in found.of_task("t-a")[0].calls] == ["x:a"]
    assert [c.tool for c in found.of_task("t-b")[0].calls] == ["x:b"]


def test_position_fallback_brackets_in_log_order() -> None:
    log = Log()
    for task, tools in (("t-a", ["x:1", "x:2"]), ("t-b", ["x:3"]), ("t-a", ["x:4"])):
        log.root(f"i-{len(log.events)}")
        inv = log.events[-1]["payload"]["invocationId"]
        log.root("nested", agent=f"{AGENT}.helper")
        log.call("x:nested", agent=f"{AGENT}.helper")
        log.done("nested", agent=f"{AGENT}.helper")
        for tool in tools:
            log.call(tool)
        log.done(inv)
        log.scored(task, None)
    log.scored("t-c", None)  # scored without any bracket (e.g. a skipped trial)
    found = attribute(log.events)
    assert found.method == "position"
    assert found.bracket_count == 3
    a0, a1 = found.trial("t-a", 0), found.trial("t-a", 1)
    assert a0 is not None
    assert a1 is not None
    assert [c.tool for c in a0.calls] == ["x:nested", "x:1", "x:2"]
    assert [c.tool for c in a1.calls] == ["x:nested", "x:4"]
    assert found.of_task("t-c") == []  # not a bracket
    assert any(t.task_id == "t-c" and t.root_event_id is None for t in found.trials)
