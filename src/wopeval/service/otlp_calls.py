"""What a trial's spans say about its tool calls beyond its tool spans (pure).

Third-party instrumentation often records a tool call only where the model issued it: a plain
``openai`` loop under ``opentelemetry-instrumentation-openai-v2`` or OpenInference has no tool
span at all, the call lives in the chat span's output messages (GenAI
``gen_ai.output.messages``, OpenInference ``llm.output_messages.*.message.tool_calls.*``).
This module reads those calls (:func:`issued_calls`), keeps the ones no tool span stands for
(:func:`uncovered`: matched by call id, then by name), and says when a model span reports tool
calls (its finish reason) without saying which (content capture off): such a trial cannot be
graded on its path, never graded on an empty one.

It also reads a tool span's arguments honestly (:func:`tool_arguments`): a hidden input
(``__REDACTED__``) is *not captured*, and a bare value (OpenInference LangChain records a
one-argument tool's input as ``"A-100"``) becomes the argument object through the tool's schema
when the trace carries one, else is marked not comparable. And it names a trial's target agent
(:func:`target_spans`): an agent span that names no agent above named ones (the OpenAI Agents
SDK's "Agent workflow" root under OpenInference) stands for the one agent below it.
"""

from __future__ import annotations

import json
import re
from bisect import bisect_right
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from wopeval.service.otlp_read import OtlpSpan
from wopeval.wire.vocab import OTEL_SUPERSEDED

Kind = Literal["agent", "tool", "model", "other"]

REDACTED = "__REDACTED__"  # OpenInference's hidden inputs and outputs
_AGENT_NAMES = ("gen_ai.agent.name", "agent.name", "agent_name", "gen_ai.agent.id")
_CALL_ID = ("gen_ai.tool.call.id", "tool_call.id")
_TOOL_FINISH = frozenset({"tool_calls", "tool_call", "function_call", "tool_use"})
_OI_CALL = re.compile(
    r"llm\.output_messages\.(\d+)\.message\.tool_calls\.(\d+)\.tool_call\."
    r"(id|function\.name|function\.arguments)"
)
_OI_TOOL_SCHEMA = re.compile(r"llm\.tools\.\d+\.tool\.json_schema")
_MODEL_OPERATIONS = frozenset({"chat", "text_completion", "generate_content"})

__all__ = [
    "REDACTED",
    "Arguments",
    "Coverage",
    "IssuedCall",
    "agent_name",
    "call_id",
    "classify",
    "in_issue_order",
    "is_model",
    "issued_calls",
    "json_or_text",
    "targets_of",
    "tool_arguments",
    "tool_schemas",
    "uncovered",
]


@dataclass(frozen=True)
class IssuedCall:
    """A tool call a model span says the model issued (``captured``: its arguments are known)."""

    name: str
    call_id: str | None
    args: Any
    captured: bool


@dataclass(frozen=True)
class Issued:
    calls: list[IssuedCall]
    blind: bool  # the span reports tool calls (its finish reason) but carries none of them


def is_model(span: OtlpSpan) -> bool:
    attrs = span.attributes
    kind = str(attrs.get("openinference.span.kind", "")).upper()
    return kind == "LLM" or attrs.get("gen_ai.operation.name") in _MODEL_OPERATIONS


def agent_name(span: OtlpSpan) -> str | None:
    """The agent a span names in its own attributes (``invoke_agent NAME`` counts)."""
    for key in _AGENT_NAMES:
        value = span.attributes.get(key)
        if value not in (None, ""):
            return str(value)
    prefix = "invoke_agent "
    if span.name.startswith(prefix) and span.name[len(prefix) :].strip():
        return span.name[len(prefix) :].strip()
    return None


def call_id(span: OtlpSpan) -> str | None:
    for key in _CALL_ID:
        value = span.attributes.get(key)
        if value not in (None, ""):
            return str(value)
    return None


def json_or_text(value: Any) -> Any:
    """An attribute's JSON text parsed, or the value as it is (not a string, or not JSON)."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError:
            return value
    return value


def _arguments(raw: Any, present: bool) -> tuple[Any, bool]:
    """A call's arguments as issued: JSON text or an object; absent or hidden: not captured."""
    if not present or raw is None or raw == REDACTED:
        return None, False
    return json_or_text(raw), True


def issued_calls(span: OtlpSpan) -> Issued:
    """The tool calls a model span's output says were issued, in the model's order."""
    attrs = span.attributes
    calls = _genai_calls(attrs.get("gen_ai.output.messages")) + _openinference_calls(attrs)
    finish = attrs.get("gen_ai.response.finish_reasons", attrs.get("llm.finish_reason"))
    reasons = finish if isinstance(finish, list) else [finish]
    says = any(str(reason).lower() in _TOOL_FINISH for reason in reasons if reason is not None)
    return Issued(calls, blind=says and not calls)


def _genai_calls(messages: Any) -> list[IssuedCall]:
    messages = json_or_text(messages)
    calls: list[IssuedCall] = []
    for message in messages if isinstance(messages, list) else ():
        parts = message.get("parts") if isinstance(message, dict) else None
        for part in parts if isinstance(parts, list) else ():
            if not isinstance(part, dict) or part.get("type") != "tool_call":
                continue
            name = part.get("name")
            if not isinstance(name, str) or not name:
                continue
            args, captured = _arguments(part.get("arguments"), "arguments" in part)
            raw_id = part.get("id")
            calls.append(IssuedCall(name, str(raw_id) if raw_id else None, args, captured))
    return calls


def _openinference_calls(attrs: Mapping[str, Any]) -> list[IssuedCall]:
    found: dict[tuple[int, int], dict[str, Any]] = {}
    for key, value in attrs.items():
        if key.startswith("llm.output_messages.") and (match := _OI_CALL.fullmatch(key)):
            slot = found.setdefault((int(match[1]), int(match[2])), {})
            slot[match[3]] = value
    calls: list[IssuedCall] = []
    for _, slot in sorted(found.items()):
        name = slot.get("function.name")
        if not isinstance(name, str) or not name:
            continue
        args, captured = _arguments(slot.get("function.arguments"), "function.arguments" in slot)
        raw_id = slot.get("id")
        calls.append(IssuedCall(name, str(raw_id) if raw_id else None, args, captured))
    return calls


@dataclass
class Coverage:
    """How a trial's tool spans stand for the calls its model spans issued."""

    left: dict[int, list[IssuedCall]]  # by model span (its index): calls no tool span ran
    blind: list[OtlpSpan]  # model spans that report tool calls they do not name
    issued_as: dict[int, tuple[int, int]]  # tool span (its index) → (model span, call)
    unordered: int = 0  # tool spans run in parallel after a model span that names no call


def uncovered(
    spans: Sequence[OtlpSpan], tools: Sequence[OtlpSpan], tool_names: Sequence[str]
) -> Coverage:
    """The issued calls no tool span stands for, by model span (``spans`` are in start order),
    the *blind* model spans (they report tool calls without naming them, and no tool span
    starts between them and the next model span), and which issued call each tool span ran.

    A tool span stands for the issued call with its call id and name, else for the first
    issued call of its name that no other tool span stands for (a name match can only lose a
    duplicate, never the call: its name is still in the trajectory). A call issued again with
    its id and name (a model call two instrumentations recorded, nested) is one call.
    """
    issued = [(i, issued_calls(s)) for i, s in enumerate(spans) if is_model(s)]
    named = list(zip(tools, tool_names, strict=True))
    by_id = {(call_id(tool), name): n for n, (tool, name) in enumerate(named)}
    issued_ids = {(c.call_id, c.name) for _, found in issued for c in found.calls if c.call_id}
    pool: dict[str, list[int]] = {}
    for n, (tool, name) in enumerate(named):
        if (call_id(tool), name) not in issued_ids:
            pool.setdefault(name, []).append(n)
    coverage = Coverage({}, [], {})
    repeated: set[tuple[str | None, str]] = set()
    starts = sorted(tool.start_ns for tool in tools)
    models = sorted(spans[i].start_ns for i, _ in issued)
    for number, (index, found) in enumerate(issued):
        if found.blind:
            until = models[number + 1] if number + 1 < len(models) else None
            start = spans[index].start_ns
            if not any(start <= s and (until is None or s < until) for s in starts):
                coverage.blind.append(spans[index])
        for serial, issued_call in enumerate(found.calls):
            said = (issued_call.call_id, issued_call.name)
            if said in repeated:  # two instrumentations of one model call
                continue
            if issued_call.call_id:
                repeated.add(said)
            ran = by_id.get(said) if issued_call.call_id else None
            if ran is None and pool.get(issued_call.name):
                ran = pool[issued_call.name].pop(0)
            if ran is None:
                coverage.left.setdefault(index, []).append(issued_call)
            else:
                coverage.issued_as.setdefault(ran, (index, serial))
    coverage.unordered = _unordered(tools, models, coverage.issued_as)
    return coverage


def _unordered(
    tools: Sequence[OtlpSpan], models: Sequence[int], issued_as: Mapping[int, tuple[int, int]]
) -> int:
    """How many tool spans overlap another of the same model turn where the model span names
    neither: parallel calls, whose start order is not the order the model issued them in."""
    turns: dict[int, list[OtlpSpan]] = {}
    for n, tool in enumerate(tools):
        turn = bisect_right(models, tool.start_ns) - 1
        if n not in issued_as and turn >= 0:
            turns.setdefault(turn, []).append(tool)
    count = 0
    for members in turns.values():
        members.sort(key=lambda tool: tool.start_ns)
        overlapping: set[int] = set()
        latest = None
        for tool in members:
            if latest is not None and tool.start_ns < latest.end_ns:
                overlapping.update((id(latest), id(tool)))
            if latest is None or tool.end_ns > latest.end_ns:
                latest = tool
        count += len(overlapping)
    return count


def in_issue_order(
    spans: Sequence[OtlpSpan], tools: Sequence[OtlpSpan], coverage: Coverage
) -> list[OtlpSpan]:
    """``spans`` with the tool spans of one model turn in the order the model issued their
    calls (parallel calls start in any order), each turn's spans in the places they took."""
    turns: dict[int, list[int]] = {}
    for n, (model, _) in coverage.issued_as.items():
        turns.setdefault(model, []).append(n)
    position = {id(span): p for p, span in enumerate(spans)}
    ordered = list(spans)
    for members in turns.values():
        places = sorted(position[id(tools[n])] for n in members)
        members.sort(key=lambda n: coverage.issued_as[n])
        for place, n in zip(places, members, strict=True):
            ordered[place] = tools[n]
    return ordered


def tool_schemas(spans: Iterable[OtlpSpan]) -> dict[str, dict[str, Any]]:
    """Each tool's argument schema (its ``properties``), where the trace carries one: a tool
    span's ``tool.parameters`` (OpenInference), a model span's ``llm.tools.*`` (OpenInference)
    or ``model_request_parameters.function_tools`` (pydantic-ai)."""
    schemas: dict[str, dict[str, Any]] = {}
    for span in spans:
        attrs = span.attributes
        name = attrs.get("tool.name")
        if isinstance(name, str) and "tool.parameters" in attrs:
            _keep(schemas, name, json_or_text(attrs["tool.parameters"]))
        if not is_model(span):
            continue
        for key, value in attrs.items():
            if key.startswith("llm.tools.") and _OI_TOOL_SCHEMA.fullmatch(key):
                doc = json_or_text(value)
                function = doc.get("function") if isinstance(doc, dict) else None
                if isinstance(function, dict) and isinstance(function.get("name"), str):
                    _keep(schemas, function["name"], function.get("parameters"))
        params = json_or_text(attrs.get("model_request_parameters"))
        tools = params.get("function_tools") if isinstance(params, dict) else None
        for tool in tools if isinstance(tools, list) else ():
            if isinstance(tool, dict) and isinstance(tool.get("name"), str):
                _keep(schemas, tool["name"], tool.get("parameters_json_schema"))
    return schemas


def _keep(schemas: dict[str, dict[str, Any]], name: str, schema: Any) -> None:
    properties = schema.get("properties") if isinstance(schema, dict) else None
    if isinstance(properties, dict):
        schemas.setdefault(name, properties)


@dataclass(frozen=True)
class Arguments:
    """A tool span's arguments: ``value``, whether the trace captured them, and whether they
    can be compared (a bare value no schema maps to an argument object cannot)."""

    value: Any
    captured: bool
    comparable: bool = True


def tool_arguments(
    raw: Any, present: bool, mime: Any, schema_of: Callable[[], Mapping[str, Any] | None]
) -> Arguments:
    """A tool span's recorded input as the tool's argument object (see the module notes);
    ``schema_of()`` is the tool's schema, looked up only for a bare value."""
    if not present or raw is None or raw == REDACTED:
        return Arguments(None, captured=False)
    value = json_or_text(raw)
    if value is None or isinstance(value, dict):
        return Arguments(value, captured=True)
    schema = schema_of()
    if schema is not None and len(schema) == 1:
        ((name, spec),) = schema.items()
        is_text = isinstance(spec, dict) and spec.get("type") == "string"
        if is_text and isinstance(raw, str) and mime != "application/json":
            value = raw  # the tool took the text itself, "123" as "123"
        return Arguments({name: value}, captured=True)
    return Arguments(value, captured=True, comparable=False)


def classify(span: OtlpSpan) -> Kind:
    """Which dialect role a span plays (see the module table). An attempt wopeval's export
    marks superseded (a resumed run ran the trial again) is no agent: no trial is read from it
    (only its model usage, which is the run's cost: :func:`import_spans`).
    """
    attrs = span.attributes
    if attrs.get(OTEL_SUPERSEDED) is True:
        return "other"
    operation = attrs.get("gen_ai.operation.name")
    kind = str(attrs.get("openinference.span.kind", "")).upper()
    name = span.name
    if operation == "invoke_agent" or kind == "AGENT" or name == "agent run":
        return "agent"
    if name.startswith("invoke_agent") and operation is None:
        return "agent"
    if operation == "execute_tool" or kind == "TOOL" or name.startswith("running tool"):
        return "tool"
    usage = ("gen_ai.usage.input_tokens", "llm.token_count.prompt")
    if any(key in attrs for key in usage) and kind != "AGENT":
        return "model"
    return "other"


def targets_of(root: OtlpSpan, spans: Sequence[OtlpSpan]) -> tuple[set[int], list[str]]:
    """The spans (their ``id()``) that are the target agent: the root, and, when the root names
    no agent and calls no tool or model itself (a workflow span such as the OpenAI Agents
    SDK's under OpenInference), the outermost named agent spans below it if they name one.
    If they name several, none is the target: their names come back, as trajectory rules
    cannot tell whose calls to grade."""
    targets = {id(root)}
    if agent_name(root) is not None:
        return targets, []
    by_id = {s.span_id: s for s in spans}
    below = [
        span
        for span in spans
        if span is not root and classify(span) == "agent" and _under(span, by_id, root)
    ]
    names = {agent_name(span) for span in below}
    if not below or None in names:
        return targets, []
    own = (s for s in spans if classify(s) == "tool" or is_model(s))
    if any(_under(span, by_id, root) for span in own):  # it works itself: an agent
        return targets, []
    if len(names) > 1:
        return targets, sorted(str(name) for name in names)
    return targets | {id(span) for span in below}, []


def _under(span: OtlpSpan, by_id: Mapping[str, OtlpSpan], root: OtlpSpan) -> bool:
    """Whether ``root`` is the nearest agent span above ``span``."""
    current = by_id.get(span.parent_span_id or "")
    seen: set[int] = set()  # a chain that loops (repeated ids) ends where it meets itself
    while current is not None and id(current) not in seen:
        if current is root:
            return True
        if classify(current) == "agent":
            return False
        seen.add(id(current))
        current = by_id.get(current.parent_span_id or "")
    return False
