"""OTLP spans → a run's event log, graded by the same pure grader as stored runs.

Dialects, normalised span by span (:func:`classify`):

==================  ===========================================  =================================
                    agent (a trial, or a delegate when nested)   tool call
==================  ===========================================  =================================
OTel GenAI          ``gen_ai.operation.name = invoke_agent``     ``execute_tool``; ``gen_ai.tool.
                                                                 name``, ``gen_ai.tool.call.
                                                                 arguments`` / ``.result``
OpenInference       ``openinference.span.kind = AGENT``          ``TOOL``; ``tool.name``,
                                                                 ``input.value`` / ``output.value``
pydantic-ai/        ``agent run`` / ``invoke_agent …``           ``running tool`` with
Logfire             (``final_result`` is the output)             ``tool_arguments`` /
                                                                 ``tool_response`` (older
                                                                 releases); GenAI names (newer)
==================  ===========================================  =================================

One trial is one root agent span (an agent span with no agent ancestor), or a whole trace when
it has none. Its task id and trial index are the ``openwop.eval.task_id`` /
``openwop.eval.trial_index`` attributes (span, then resource: the names wopeval exports under),
else the ``mapping`` (trace id → task id; ``*`` for every other trace); trials without an index
are numbered per task in start order. A nested agent span is a delegate: its tool calls carry its
agent id (``includeDelegates``). A span with an error status is a tool error (or, on the root,
a failed invocation). Model-call spans with token usage become ``provider.usage``.

Calls the model issued that no tool span stands for (a plain ``openai`` loop has none) are read
from the model spans' output (:mod:`wopeval.service.otlp_calls`, which also names the target
under a workflow root and reads a tool span's arguments honestly).

**Fail closed on missing content.** Content capture is opt-in in these instrumentations. A trial
whose trace leaves out what its task grades (the calls a model span reports, the target agent,
arguments a task compares) is *unscored* (``scoreLabel: unscored``, score 0, with the reason:
:mod:`wopeval.service.otlp_score`), never passed on what is left out.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache, partial
from typing import Any, get_args

from wopeval.service.otlp_assign import UnusableTraces, assign, check_count
from wopeval.service.otlp_calls import (
    REDACTED,
    IssuedCall,
    agent_name,
    classify,
    in_issue_order,
    is_model,
    json_or_text,
    targets_of,
    tool_arguments,
    tool_schemas,
    uncovered,
)
from wopeval.service.otlp_plan import (
    AGENT,
    GRADED,
    OTHER,
    SET_ASIDE,
    Plan,
    SpanSource,
    merged,
    plan,
    trials_in_order,
)
from wopeval.service.otlp_read import OtlpSpan
from wopeval.service.otlp_score import Gaps, score_trial
from wopeval.service.otlp_turns import TurnsBack
from wopeval.suite.models import AgentEvalSuite
from wopeval.wire.events import (
    Decided,
    ErrorObject,
    InvocationCompleted,
    InvocationStarted,
    Payload,
    ProviderUsage,
    RunEvent,
    ToolCalled,
    ToolReturned,
)
from wopeval.wire.vocab import (
    ERROR_LABELS,
    OTEL_AGENT_ERROR,
    OTEL_COST_USD,
    OTEL_MODEL_CALLS,
    OTEL_SUPERSEDED,
    OTEL_TOOL_FIXTURE,
    OTEL_TOOL_FIXTURE_INDEX,
    OTEL_TOOL_WORLD_RULE,
    FixtureOutcome,
)

IMPORTED_RUN = "imported/otlp"
_ARGS = ("gen_ai.tool.call.arguments", "input.value", "tool_arguments")
_RESULT = ("gen_ai.tool.call.result", "output.value", "tool_response")
_TOOL_NAME = ("gen_ai.tool.name", "tool.name")
_UNSAFE = re.compile(r"[^A-Za-z0-9._~:-]+")

__all__ = [
    "IMPORTED_RUN",
    "Imported",
    "ImportedTrial",
    "SpanList",
    "UnusableTraces",
    "classify",
    "import_spans",
]


def _first(attrs: Mapping[str, Any], keys: Sequence[str]) -> tuple[bool, Any]:
    for key in keys:
        if key in attrs:
            return True, json_or_text(attrs[key])
    return False, None


@dataclass
class ImportedTrial:
    task_id: str | None
    trial_index: int | None
    root: OtlpSpan | None
    spans: list[OtlpSpan]
    gaps: Gaps = field(default_factory=Gaps)
    targets: set[int] = field(default_factory=set)  # id() of the spans that are the target


def _agent_of(span: OtlpSpan, target: str) -> str:
    return _UNSAFE.sub("-", f"{target}.{agent_name(span) or span.span_id}")[:128]


def _ts(ns: int) -> str:
    stamp = datetime.fromtimestamp(ns / 1e9, UTC).isoformat(timespec="milliseconds")
    return stamp.replace("+00:00", "Z")


class _Log:
    """Builds the event log: contiguous sequences, deterministic ids, span timestamps. It
    holds the events of the trial being converted (``events``), never the log's."""

    def __init__(self) -> None:
        self.events: list[RunEvent] = []
        self.next_sequence = 0

    def add(self, payload: Payload, ns: int, cause: str | None = None) -> str:
        sequence = self.next_sequence
        self.next_sequence += 1
        event_id = f"ev_otlp_{sequence:016d}"
        self.events.append(
            RunEvent(
                eventId=event_id,
                runId=IMPORTED_RUN,
                type=payload.event_type,
                payload=payload.to_wire(),
                timestamp=_ts(ns),
                sequence=sequence,
                causationId=cause,
            )
        )
        return event_id


def _emit_trial(log: _Log, trial: ImportedTrial, target: str) -> None:
    assert trial.task_id is not None
    assert trial.trial_index is not None
    first = trial.root or trial.spans[0]
    invocation = f"otlp-{first.trace_id}-{first.span_id}"
    start = min(s.start_ns for s in trial.spans)
    root = log.add(
        InvocationStarted(
            invocationId=invocation,
            agentId=target,
            source="run-api",
            task_id=trial.task_id,
            trial_index=trial.trial_index,
            trace_incomplete=_dangling(trial.spans) or None,
        ),
        start,
    )
    if trial.root is not None:
        trial.targets, trial.gaps.unidentified = targets_of(trial.root, trial.spans)
    kinds = {id(span): classify(span) for span in trial.spans}
    tools = [span for span in trial.spans if kinds[id(span)] == "tool"]
    names = [_tool_name(span) for span in tools]
    coverage = uncovered(trial.spans, tools, names)
    trial.gaps.blind_models = len(coverage.blind)
    trial.gaps.unordered_calls = coverage.unordered
    issued = coverage.left
    schemas = cache(partial(tool_schemas, trial.spans))  # only a bare argument needs them
    models = 0
    turns = TurnsBack(trial.root, target)
    add = partial(_add_caused, log, root)
    for number, span in enumerate(in_issue_order(trial.spans, tools, coverage)):
        kind = kinds[id(span)]
        turns.due(log.events, add)
        if kind == "tool":
            _emit_tool(log, trial, span, target, root, schemas)
        elif kind == "model":
            log.add(_usage(span), span.end_ns, root)
            models += 1
        for serial, call in enumerate(issued.get(number, ())):
            _emit_issued(log, trial, span, serial, call, (target, root))
    if not models and trial.root is not None:  # the usage added up on the agent span instead
        for usage in _agent_usage(trial.root):
            log.add(usage, trial.root.end_ns, root)
    found, output = _first(
        trial.root.attributes if trial.root else {}, ("final_result", "output.value")
    )
    end = max(s.end_ns for s in trial.spans)
    turns.due(log.events, add)
    turns.rest(add)
    if found:
        log.add(Decided(agentId=target, decision=output), end, root)
    failed = trial.root is not None and trial.root.failed
    label = trial.root.attributes.get(OTEL_AGENT_ERROR) if trial.root is not None else None
    completed = InvocationCompleted(
        invocationId=invocation,
        agentId=target,
        outcome="failed" if failed else "completed",
        error_label=(label if label in ERROR_LABELS else "agent-error") if failed else None,
    )
    log.add(completed, end, root)


def _add_caused(log: _Log, root: str, payload: Payload, ns: int) -> None:
    log.add(payload, ns, root)


def _dangling(spans: Sequence[OtlpSpan]) -> int:
    """How many of a trial's spans name a parent its trace does not hold: a trace cut short."""
    held = {(span.trace_id, span.span_id) for span in spans}
    return sum(
        1
        for span in spans
        if span.parent_span_id and (span.trace_id, span.parent_span_id) not in held
    )


def _tool_name(span: OtlpSpan) -> str:
    _, name = _first(span.attributes, _TOOL_NAME)
    return str(name or span.name.removeprefix("execute_tool ").removeprefix("running tool: "))


def _emit_issued(
    log: _Log, trial: ImportedTrial, span: OtlpSpan, serial: int, call: IssuedCall,
    where: tuple[str, str],
) -> None:  # fmt: skip
    """A call the model issued that no tool span stands for: called, with no known result."""
    target, root = where
    if not call.captured:
        trial.gaps.missing_args.append(call.name)
    agent = _delegate(trial, span, target) if trial.root is not None else target
    called = ToolCalled(
        agentId=agent, toolName=call.name, callId=f"otlp-{span.span_id}-{serial}",
        inputs=call.args,
    )  # fmt: skip
    log.add(called, span.end_ns, root)


def _emit_tool(
    log: _Log, trial: ImportedTrial, span: OtlpSpan, target: str, root: str,
    schemas: Callable[[], Mapping[str, Mapping[str, Any]]],
) -> None:  # fmt: skip
    tool = _tool_name(span)
    key = next((k for k in _ARGS if k in span.attributes), None)
    raw = span.attributes.get(key) if key is not None else None
    mime = span.attributes.get("input.mime_type")
    parsed = tool_arguments(raw, key is not None, mime, lambda: schemas().get(tool))
    args = parsed.value
    if not parsed.captured:
        trial.gaps.missing_args.append(tool)
    elif not parsed.comparable:
        trial.gaps.uncomparable_args.append(tool)
    agent = target
    if trial.root is not None:
        agent = _delegate(trial, span, target)
    base = {"agentId": agent, "toolName": tool, "callId": f"otlp-{span.span_id}"}
    log.add(ToolCalled(**base, inputs=args), span.start_ns, root)
    served = _served(span.attributes)
    if span.failed:
        error = ErrorObject(code="otlp.error", message=span.status_message)
        log.add(ToolReturned(**base, status="error", error=error, **served), span.end_ns, root)
    else:
        _, result = _first(span.attributes, _RESULT)
        result = None if result == REDACTED else result
        log.add(ToolReturned(**base, status="ok", outcome=result, **served), span.end_ns, root)


def _served(attrs: Mapping[str, Any]) -> dict[str, Any]:
    """How wopeval's export says the call was served (a fixture, a miss), if it says so."""
    served: dict[str, Any] = {}
    fixture = attrs.get(OTEL_TOOL_FIXTURE)
    if fixture in get_args(FixtureOutcome):
        served["fixture"] = fixture
    for name, key in ((OTEL_TOOL_FIXTURE_INDEX, "fixture_index"),
                      (OTEL_TOOL_WORLD_RULE, "world_rule")):  # fmt: skip
        index = attrs.get(name)
        if isinstance(index, int) and not isinstance(index, bool) and index >= 0:
            served[key] = index
    return served


def _delegate(trial: ImportedTrial, span: OtlpSpan, target: str) -> str:
    """The target agent, or a nested agent span's id: the nearest agent ancestor."""
    by_id = {s.span_id: s for s in trial.spans}
    current = by_id.get(span.parent_span_id or "")
    seen: set[int] = set()  # a chain that loops (repeated ids) ends where it meets itself
    while current is not None and id(current) not in trial.targets and id(current) not in seen:
        if classify(current) == "agent":
            return _agent_of(current, target)
        seen.add(id(current))
        current = by_id.get(current.parent_span_id or "")
    return target


def _agent_usage(span: OtlpSpan) -> list[ProviderUsage]:
    """The model usage an agent span adds up (``gen_ai.usage.*``; wopeval's export also says
    how many calls and their cost): the first call carries the totals, the others zeros, so
    the trial's tokens, cost and model calls read back as they were recorded."""
    attrs = span.attributes
    usage_keys = ("gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens", OTEL_COST_USD)
    if not any(key in attrs for key in usage_keys):
        return []
    first = _usage(span)
    calls = attrs.get(OTEL_MODEL_CALLS)
    count = calls if isinstance(calls, int) and 0 < calls <= 10_000 else 1
    rest = first.model_copy(update={"inputTokens": 0, "outputTokens": 0, "costEstimateUsd": None})
    return [first, *[rest] * (count - 1)]


def _usage(span: OtlpSpan) -> ProviderUsage:
    attrs = span.attributes
    inputs = attrs.get("gen_ai.usage.input_tokens", attrs.get("llm.token_count.prompt", 0))
    outputs = attrs.get("gen_ai.usage.output_tokens", attrs.get("llm.token_count.completion", 0))
    provider = attrs.get("gen_ai.provider.name") or attrs.get("gen_ai.system") or "unknown"
    model = attrs.get("gen_ai.response.model") or attrs.get("gen_ai.request.model")
    model = model or attrs.get("llm.model_name") or "unknown"
    cost = attrs.get(OTEL_COST_USD)
    return ProviderUsage(
        provider=str(provider),
        model=str(model),
        inputTokens=int(inputs or 0),
        outputTokens=int(outputs or 0),
        costEstimateUsd=float(cost) if cost is not None and _cost(cost) else None,
    )


def _cost(value: Any) -> bool:
    return isinstance(value, int | float) and math.isfinite(value) and value >= 0


class SpanList:
    """Spans in memory as a :class:`SpanSource` (one unit)."""

    def __init__(self, spans: Sequence[OtlpSpan]) -> None:
        self.spans = spans

    def units(self) -> Iterator[list[OtlpSpan]]:
        yield list(self.spans)


class _Events:
    """The converted log, made again on each pass over the source (re-iterable; a pass
    holds one trial's events and the trials read but not yet due)."""

    def __init__(
        self, suite: AgentEvalSuite, source: SpanSource, planned: Plan, wanted: list[int],
        target: str, superseded: list[tuple[int, ProviderUsage]],
    ) -> None:  # fmt: skip
        self._suite, self._source, self._plan = suite, source, planned
        self._wanted, self._target = wanted, target
        self._superseded = superseded

    def __iter__(self) -> Iterator[RunEvent]:
        log = _Log()
        for planned, root, spans in trials_in_order(self._source, self._plan, self._wanted):
            trial = ImportedTrial(planned.task_id, planned.trial_index, root, spans)
            _emit_trial(log, trial, self._target)
            key = (str(planned.task_id), int(planned.trial_index or 0))
            score_trial(log, self._suite, key, spans, trial.gaps, self._target)
            yield from log.events
            log.events = []
        # What superseded attempts spent: in no trial (as their trials are not graded), but
        # the run's total cost, as in the log they were exported from.
        for end_ns, usage in self._superseded:
            log.add(usage, end_ns)
        yield from log.events


@dataclass(frozen=True)
class Imported:
    events: _Events  # re-iterable: each pass converts the spans again
    trials: int  # the trials graded
    unattributed: int  # trials with no task id (no attribute, no mapping)
    unknown_tasks: list[str]  # task ids the suite does not have
    rejected_spans: int  # spans in no graded trial
    spans: int = 0  # every span read


def import_spans(
    suite: AgentEvalSuite,
    spans: SpanSource | Sequence[OtlpSpan],
    *,
    target_agent_id: str,
    mapping: Mapping[str, str] | None = None,
) -> Imported:
    """The event log of the trials in ``spans``, each scored (pure). A :class:`SpanSource`
    (an :class:`~wopeval.service.otlp_read.OtlpFile`) is read twice, a unit at a time: once
    to plan the trials, then on every pass over ``events``."""
    source = SpanList(spans) if isinstance(spans, Sequence) else spans
    superseded: list[tuple[int, ProviderUsage]] = []

    def role(span: OtlpSpan) -> int:
        kind = classify(span)
        if kind == "other" and span.attributes.get(OTEL_SUPERSEDED) is True:
            superseded.extend((span.end_ns, usage) for usage in _agent_usage(span))
            return SET_ASIDE
        if kind == "agent":
            return AGENT
        return GRADED if kind in ("tool", "model") or is_model(span) else OTHER

    planned = plan(source, role)
    planned = merged(planned, assign(planned.trials, mapping or {}))
    known = {task.taskId for task in suite.tasks}
    wanted = [i for i, t in enumerate(planned.trials) if t.task_id in known]
    trials = planned.trials
    check_count([trials[i] for i in wanted], suite.trial_plan.effective_count)
    unknown = sorted({str(t.task_id) for t in trials if t.task_id and t.task_id not in known})
    graded = sum(trials[i].spans for i in wanted)
    return Imported(
        events=_Events(suite, source, planned, wanted, target_agent_id, superseded),
        trials=len(wanted),
        unattributed=sum(1 for t in trials if t.task_id is None),
        unknown_tasks=unknown,
        rejected_spans=planned.span_count - graded,
        spans=planned.span_count,
    )
