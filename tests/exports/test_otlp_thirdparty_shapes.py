"""The shapes third-party traces take, each at its plainest: who the target agent is under a
workflow root, arguments recorded as a bare value, model spans that report calls without naming
them, and hostile output messages (RFC 0244 §A grading; fail closed)."""

from __future__ import annotations

import json
from typing import Any

from wopeval.service.otlp_read import OtlpSpan
from wopeval.service.otlp_trials import import_spans
from wopeval.suite import parse_suite
from wopeval.suite.models import AgentEvalSuite

TRACE = "0af7651916cd43dd8448eb211c80319c"
TARGET = "support.agent"


def _suite(trajectory: dict[str, Any]) -> AgentEvalSuite:
    task = {
        "taskId": "t",
        "input": {},
        "expected": {"kind": "trajectory", "trajectory": trajectory},
    }
    doc = {"suiteId": "core.test.evals.shapes", "version": "1.0.0", "modes": ["golden"],
           "targetAgentId": TARGET, "tasks": [task]}  # fmt: skip
    return parse_suite(doc)


def _span(n: int, parent: int | None, name: str, **attrs: Any) -> OtlpSpan:
    return OtlpSpan(
        trace_id=TRACE,
        span_id=f"{n:016x}",
        parent_span_id=f"{parent:016x}" if parent is not None else None,
        name=name,
        start_ns=1_000 + 10 * n,
        end_ns=10_000 - n,
        attributes=attrs,
    )


def _graded(suite: AgentEvalSuite, spans: list[OtlpSpan]) -> tuple[dict[str, Any], list[Any]]:
    """The one trial's ``eval.scored`` and the log's events."""
    events = list(import_spans(suite, spans, target_agent_id=TARGET, mapping={"*": "t"}).events)
    scored = [e.payload for e in events if e.type == "eval.scored"]
    assert len(scored) == 1
    return scored[0], events


def _reason(events: list[Any]) -> dict[str, Any]:
    failed = [e.payload for e in events if e.type == "wopeval.trial-failed"]
    assert len(failed) == 1
    payload: dict[str, Any] = failed[0]
    return payload


def _agents_sdk(*agents: str) -> list[OtlpSpan]:
    """OpenInference's Agents SDK shape: an unnamed "Agent workflow" AGENT root, the named
    agents below it (a handoff: a second one), the last one calling issue_refund."""
    spans = [_span(1, None, "Agent workflow", **{"openinference.span.kind": "AGENT"})]
    for n, name in enumerate(agents, start=2):
        spans.append(_span(n, 1, name, **{"openinference.span.kind": "AGENT", "agent.name": name}))
    tool = {"openinference.span.kind": "TOOL", "tool.name": "issue_refund"}
    spans.append(_span(9, len(agents) + 1, "issue_refund", **tool))
    return spans


def test_0244_A_the_agents_sdk_workflow_root_stands_for_its_one_agent() -> None:
    forbidden = {"match": "in-order", "calls": [], "forbidden": ["issue_refund"]}
    scored, events = _graded(_suite(forbidden), _agents_sdk("support"))
    assert scored["passed"] is False
    assert scored.get("scoreLabel") != "unscored"
    called = [e.payload for e in events if e.type == "agent.tool-called"]
    assert [c["agentId"] for c in called] == [TARGET]  # the agent's own call, not a delegate's


def test_0244_A_a_workflow_root_over_several_agents_is_unscored_not_zero_calls() -> None:
    forbidden = {"match": "in-order", "calls": [], "forbidden": ["issue_refund"]}
    scored, events = _graded(_suite(forbidden), _agents_sdk("support", "refunds"))
    assert scored["passed"] is False
    assert scored["scoreLabel"] == "unscored"
    reason = _reason(events)
    assert reason["details"] == {"agents": ["refunds", "support"]}
    assert "names no agent and holds several (refunds, support)" in reason["message"]
    # every agent's calls graded: no target needed, the forbidden call fails the task
    scored, _ = _graded(_suite({**forbidden, "includeDelegates": True}), _agents_sdk("a", "b"))
    assert scored["passed"] is False
    assert scored.get("scoreLabel") != "unscored"


def _bare(*, schema: dict[str, Any] | None, value: str = "A-100") -> list[OtlpSpan]:
    attrs: dict[str, Any] = {"openinference.span.kind": "TOOL", "tool.name": "lookup_order",
                             "input.value": value}  # fmt: skip
    if schema is not None:
        attrs["tool.parameters"] = json.dumps(schema)
    return [_span(1, None, "lookup_order", **attrs)]


def test_0244_A_a_bare_argument_is_mapped_by_the_tools_schema_or_unscored() -> None:
    call = {"tool": "lookup_order", "args": {"order_id": "A-100"}, "argsMatch": "exact"}
    suite = _suite({"match": "exact", "calls": [call]})
    one = {"type": "object", "properties": {"order_id": {"type": "string"}}}
    scored, _ = _graded(suite, _bare(schema=one))
    assert scored["passed"] is True
    # no schema in the trace: the value cannot be compared, and is not compared as a value
    scored, events = _graded(suite, _bare(schema=None))
    assert scored["scoreLabel"] == "unscored"
    assert _reason(events)["details"] == {"uncomparableArguments": ["lookup_order"]}
    two = {"properties": {"order_id": {"type": "string"}, "note": {"type": "string"}}}
    scored, _ = _graded(suite, _bare(schema=two))
    assert scored["scoreLabel"] == "unscored"
    # a string argument that reads as a number is the text the tool took
    numeric = _suite({"match": "exact", "calls": [{**call, "args": {"order_id": "100"}}]})
    scored, _ = _graded(numeric, _bare(schema=one, value="100"))
    assert scored["passed"] is True


def test_0244_A_a_hidden_argument_is_not_captured_never_a_value() -> None:
    call = {"tool": "lookup_order", "args": {"order_id": "A-100"}, "argsMatch": "exact"}
    scored, events = _graded(
        _suite({"match": "exact", "calls": [call]}), _bare(schema=None, value="__REDACTED__")
    )
    assert scored["scoreLabel"] == "unscored"
    assert _reason(events)["details"] == {"missingArguments": ["lookup_order"]}


def _chat(n: int, finish: str, messages: Any = None) -> OtlpSpan:
    attrs: dict[str, Any] = {"gen_ai.operation.name": "chat",
                             "gen_ai.response.finish_reasons": [finish]}  # fmt: skip
    if messages is not None:
        attrs["gen_ai.output.messages"] = messages
    return _span(n, None, "chat gpt", **attrs)


def test_0244_A_a_model_span_that_reports_unnamed_calls_is_unscored_unless_a_tool_ran() -> None:
    names = _suite({"match": "in-order", "calls": [], "forbidden": ["issue_refund"]})
    scored, events = _graded(names, [_chat(1, "tool_calls"), _chat(2, "stop")])
    assert scored["scoreLabel"] == "unscored"
    assert _reason(events)["details"] == {"blindModelSpans": 1}
    # a tool span after it (before the next model span) is what it issued: graded
    tool = _span(2, None, "execute_tool lookup_order", **{
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup_order"})  # fmt: skip
    scored, _ = _graded(names, [_chat(1, "tool_calls"), tool, _chat(3, "stop")])
    assert scored["passed"] is True
    # a tool span before it is not
    scored, _ = _graded(names, [tool, _chat(3, "tool_calls")])
    assert scored["scoreLabel"] == "unscored"
    # a task that grades no path is graded
    output = parse_suite({**json.loads(json.dumps(names.model_dump(exclude_none=True))),
        "tasks": [{"taskId": "t", "input": {}, "expected": {"kind": "golden",
                   "match": {"strategy": "contains", "value": "x"}}}]})  # fmt: skip
    scored, _ = _graded(output, [_chat(1, "tool_calls")])
    assert scored.get("scoreLabel") != "unscored"


def test_hostile_output_messages_are_no_calls_and_no_crash() -> None:
    suite = _suite({"match": "in-order", "calls": [], "forbidden": ["issue_refund"]})
    for messages in ("not json", '{"parts": 1}', "[1, null]", '[{"parts": [1, {"x": 2}]}]',
                     '[{"parts": [{"type": "tool_call"}]}]',
                     '[{"parts": [{"type": "tool_call", "name": ""}]}]'):  # fmt: skip
        scored, _ = _graded(suite, [_chat(1, "stop", messages)])
        assert scored["passed"] is True, messages
    named = '[{"parts": [{"type": "tool_call", "name": "issue_refund", "arguments": "{bad"}]}]'
    scored, events = _graded(suite, [_chat(1, "stop", named)])
    assert scored["passed"] is False
    called = [e.payload for e in events if e.type == "agent.tool-called"]
    assert [(c["toolName"], c["inputs"]) for c in called] == [("issue_refund", "{bad")]


def test_a_model_call_two_instrumentations_recorded_is_one_call() -> None:
    """pydantic-ai's chat span with the openai instrumentation's inside it: one call id, one
    call; without ids, both are kept (a duplicate can only fail a path, never pass one)."""
    part = {"type": "tool_call", "name": "lookup_order", "id": "call_1", "arguments": "{}"}
    messages = json.dumps([{"role": "assistant", "parts": [part]}])
    spans = [_chat(1, "tool_calls", messages), _chat(2, "tool_calls", messages)]
    exact = _suite({"match": "exact", "calls": [{"tool": "lookup_order"}]})
    scored, _ = _graded(exact, spans)
    assert scored["passed"] is True
    anonymous = json.dumps([{"role": "assistant", "parts": [{**part, "id": None}]}])
    scored, _ = _graded(exact, [_chat(1, "tool_calls", anonymous), _chat(2, "stop", anonymous)])
    assert scored["passed"] is False


def test_0244_A_a_tool_span_stands_only_for_the_call_of_its_id_and_name() -> None:
    """A tool span with the model's call id but another name (a hostile or broken trace) does
    not hide the issued call: the forbidden call is still graded."""
    forbidden = _suite({"match": "in-order", "calls": [], "forbidden": ["issue_refund"]})
    part = {"type": "tool_call", "name": "issue_refund", "id": "call_1"}
    messages = json.dumps([{"role": "assistant", "parts": [part]}])
    tool = _span(2, None, "execute_tool lookup_order", **{
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup_order",
        "gen_ai.tool.call.id": "call_1"})  # fmt: skip
    scored, events = _graded(forbidden, [_chat(1, "tool_calls", messages), tool])
    assert scored["passed"] is False
    called = [e.payload["toolName"] for e in events if e.type == "agent.tool-called"]
    assert called == ["issue_refund", "lookup_order"]


def _tool_at(n: int, tool: str, start: int, end: int) -> OtlpSpan:
    attrs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool}
    span = _span(n, None, f"execute_tool {tool}", **attrs)
    return OtlpSpan(**{**span.__dict__, "start_ns": start, "end_ns": end})


def test_0244_A_parallel_tool_spans_of_an_unnamed_turn_leave_the_order_unscored() -> None:
    both = [{"tool": "lookup_order"}, {"tool": "issue_refund"}]
    exact = _suite({"match": "exact", "calls": both})
    chat = _chat(1, "tool_calls")  # starts at 1,010
    lookup = _tool_at(2, "lookup_order", 2_000, 3_000)
    parallel = [chat, lookup, _tool_at(3, "issue_refund", 2_999, 4_000)]
    scored, events = _graded(exact, parallel)
    assert scored["scoreLabel"] == "unscored"
    assert _reason(events)["details"] == {"unorderedCalls": 2}
    # one after the other: the order is said
    in_turn = [chat, lookup, _tool_at(3, "issue_refund", 3_000, 4_000)]
    scored, _ = _graded(exact, in_turn)
    assert scored["passed"] is True
    # a path of one call has no order to grade; any-order neither
    orderless = ({"match": "in-order", "calls": both[:1]}, {"match": "any-order", "calls": both})
    for trajectory in orderless:
        scored, _ = _graded(_suite(trajectory), parallel)
        assert scored["passed"] is True, trajectory
    # the model span names its calls: their order is the model's, whatever the start order
    parts = [{"type": "tool_call", "name": name} for name in ("lookup_order", "issue_refund")]
    named = _chat(1, "tool_calls", json.dumps([{"role": "assistant", "parts": parts}]))
    refund_first = _tool_at(2, "issue_refund", 2_000, 3_000)
    reversed_start = [named, refund_first, _tool_at(3, "lookup_order", 2_500, 4_000)]
    scored, _ = _graded(exact, reversed_start)
    assert scored["passed"] is True
