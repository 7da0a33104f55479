"""A property of the OTLP import: no trace shape makes a ``forbidden`` task pass when the
forbidden tool's call is in the trace (RFC 0244 §A ``forbidden``; fail closed).

Traces are drawn as trees of the dialects' spans (GenAI, OpenInference, pydantic-ai's older
names): agent spans with and without a name, tool spans with or without call ids and
arguments (hidden, bare, malformed), model spans that name their calls in GenAI output messages
or OpenInference attributes, that report calls without naming them, or say nothing, and other
spans, in any nesting, with several roots. The forbidden call is placed somewhere as a tool
span or as a call a model span issued. The task grades every agent's calls
(``includeDelegates``): the call is the trace's, whoever made it. The import may refuse the
trace (which trial made a call is not said) or grade it unscored; it never passes it.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wopeval.service.otlp_read import OtlpError, OtlpSpan
from wopeval.service.otlp_trials import import_spans
from wopeval.suite import parse_suite

FORBIDDEN, OTHER_TOOL = "issue_refund", "lookup_order"
TRACE = "0af7651916cd43dd8448eb211c80319c"

SUITE = parse_suite(
    {
        "suiteId": "core.test.evals.forbidden-property",
        "version": "1.0.0",
        "modes": ["golden"],
        "targetAgentId": "support.agent",
        "tasks": [
            {
                "taskId": "t",
                "input": {},
                "expected": {
                    "kind": "trajectory",
                    "trajectory": {
                        "match": "in-order",
                        "calls": [],
                        "forbidden": [FORBIDDEN],
                        "includeDelegates": True,
                    },
                },
            }
        ],
    }
)

_ARGS = st.sampled_from(
    [None, '{"order_id": "A-100"}', "A-100", "__REDACTED__", "{not json", '"A-100"', "[1, 2]"]
)


@st.composite
def _agent(draw: st.DrawFn) -> tuple[str, dict[str, Any]]:
    name = draw(st.sampled_from([None, "support", "refunds"]))
    dialect = draw(st.sampled_from(["genai", "openinference", "pydantic"]))
    if dialect == "genai":
        attrs: dict[str, Any] = {"gen_ai.operation.name": "invoke_agent"}
        if name:
            attrs["gen_ai.agent.name"] = name
        return f"invoke_agent {name or ''}".strip(), attrs
    if dialect == "openinference":
        attrs = {"openinference.span.kind": "AGENT"}
        if name:
            attrs["agent.name"] = name
        return "Agent workflow" if name is None else name, attrs
    return "agent run", ({"agent_name": name} if name else {})


@st.composite
def _tool(draw: st.DrawFn, tool: str) -> tuple[str, dict[str, Any]]:
    args = draw(_ARGS)
    call_id = draw(st.sampled_from([None, "call_1", "call_2"]))
    dialect = draw(st.sampled_from(["genai", "openinference", "older"]))
    if dialect == "genai":
        attrs: dict[str, Any] = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool}
        if call_id:
            attrs["gen_ai.tool.call.id"] = call_id
        if args is not None:
            attrs["gen_ai.tool.call.arguments"] = args
        return f"execute_tool {tool}", attrs
    if dialect == "openinference":
        attrs = {"openinference.span.kind": "TOOL"}
        if draw(st.booleans()):
            attrs["tool.name"] = tool
        if args is not None:
            attrs["input.value"] = args
        return tool, attrs
    attrs = {} if args is None else {"tool_arguments": args}
    return f"running tool: {tool}", attrs


@st.composite
def _model(draw: st.DrawFn, tools: list[str]) -> tuple[str, dict[str, Any]]:
    dialect = draw(st.sampled_from(["genai", "openinference"]))
    calls = [
        (tool, draw(_ARGS), draw(st.sampled_from([None, "call_1", "call_2"]))) for tool in tools
    ]
    finish = "tool_calls" if draw(st.booleans()) else "stop"
    if dialect == "genai":
        attrs: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.usage.input_tokens": 1,
            "gen_ai.response.finish_reasons": [finish],
        }
        if calls:
            parts = []
            for tool, args, call_id in calls:
                part: dict[str, Any] = {"type": "tool_call", "name": tool}
                if args is not None:
                    part["arguments"] = args
                if call_id:
                    part["id"] = call_id
                parts.append(part)
            attrs["gen_ai.output.messages"] = json.dumps([{"role": "assistant", "parts": parts}])
        return "chat model", attrs
    attrs = {"openinference.span.kind": "LLM", "llm.finish_reason": finish}
    if draw(st.booleans()):
        attrs["llm.token_count.prompt"] = 1
    for j, (tool, args, call_id) in enumerate(calls):
        prefix = f"llm.output_messages.0.message.tool_calls.{j}.tool_call."
        attrs[prefix + "function.name"] = tool
        if args is not None:
            attrs[prefix + "function.arguments"] = args
        if call_id:
            attrs[prefix + "id"] = call_id
    return "ChatCompletion", attrs


@st.composite
def traces(draw: st.DrawFn) -> list[OtlpSpan]:
    """One trace, as a tree (several roots too), with the forbidden call somewhere in it."""
    count = draw(st.integers(min_value=1, max_value=9))
    where = draw(st.integers(min_value=0, max_value=count - 1))
    spans: list[OtlpSpan] = []
    for index in range(count):
        parent = draw(st.integers(min_value=-1, max_value=index - 1))
        if index == where:
            kind = draw(st.sampled_from(["tool", "model"]))
        else:
            kind = draw(st.sampled_from(["agent", "tool", "model", "other"]))
        if kind == "agent":
            name, attrs = draw(_agent())
        elif kind == "tool":
            tool = FORBIDDEN if index == where else draw(st.sampled_from([FORBIDDEN, OTHER_TOOL]))
            name, attrs = draw(_tool(tool))
        elif kind == "model":
            tools = draw(st.lists(st.sampled_from([FORBIDDEN, OTHER_TOOL]), max_size=3))
            if index == where:
                at = draw(st.integers(min_value=0, max_value=len(tools)))
                tools.insert(at, FORBIDDEN)
            name, attrs = draw(_model(tools))
        else:
            name, attrs = "http request", {}
        spans.append(
            OtlpSpan(
                trace_id=TRACE,
                span_id=f"{index + 1:016x}",
                parent_span_id=f"{parent + 1:016x}" if parent >= 0 else None,
                name=name,
                start_ns=1_000 + 10 * draw(st.integers(min_value=0, max_value=count)),
                end_ns=100_000,
                attributes=attrs,
                status_code=draw(st.sampled_from([0, 0, 2])),
            )
        )
    return draw(st.permutations(spans))  # exporters write a span when it ends: any order


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(traces())
def test_0244_A_no_trace_shape_passes_forbidden_when_the_call_is_in_it(
    spans: list[OtlpSpan],
) -> None:
    try:
        imported = import_spans(SUITE, spans, target_agent_id="support.agent", mapping={"*": "t"})
        events = list(imported.events)
    except OtlpError:
        return  # refused: not passed
    scored = [event.payload for event in events if event.type == "eval.scored"]
    assert scored, "the trace became no trial"
    assert not any(payload["passed"] for payload in scored), scored
