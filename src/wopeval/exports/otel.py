"""Export a stored run as OpenTelemetry traces and logs (mapping: docs/eval-otel-mapping.md).

One trace per run::

    evaluate <suiteId>                        (root; the whole run)
      invoke_agent <agentId>                  (one per trial bracket; ERROR status unless passed)
        execute_tool <toolName>               (tool-called → tool-returned; ERROR on a tool error)

and one log-based event ``gen_ai.evaluation.result`` per ``eval.scored`` (the GenAI semantic
conventions' evaluation event, an event-named log record in the trial span's context; span
events are being deprecated). The trial spans carry ``openwop.eval.task_id`` and
``openwop.eval.trial_index`` — the names ``wopeval import-otlp`` reads back. A trial's
simulated-user turns (``wopeval.user_turn``) and where its world's final state was recorded
(``wopeval.world_state``) are span events on its span, not log records: they are part of the
trace ``import-otlp`` rebuilds the log from, and travel with it through a traces-only pipeline.

:func:`write_otlp_json_lines` writes OTLP/JSON as the OpenTelemetry SDK encodes it (its
``otlp-json-common`` encoder): ``ExportTraceServiceRequest`` and ``ExportLogsServiceRequest``
lines of at most :data:`LINE_ITEMS` spans or records each (as they fill, so the two kinds may
interleave), the file format a collector's ``otlpjsonfile`` receiver reads. It streams: the log
is read once, in order, and a trial's spans are written and forgotten once it is scored, so
memory stays flat however long the run; :func:`otlp_json_lines` is the same text
as one string.

Content-free like the wire: tool names and ids only, never arguments, outputs or prompts.
Timestamps are the recorded event timestamps, so an export of a stored run is reproducible.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from itertools import chain
from typing import Any, TextIO, get_args

from opentelemetry import trace
from opentelemetry.exporter.otlp.json.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Span, Status, StatusCode

from wopeval.exports.otel_logs import (
    InMemoryLogRecordExporter,
    LoggerProvider,
    LogRecordExporter,
    LogRecordExportResult,
    ReadableLogRecord,
    SimpleLogRecordProcessor,
    encode_logs,
)
from wopeval.wire.events import (
    EVAL_SCORED,
    INVOCATION_COMPLETED,
    INVOCATION_STARTED,
    PROVIDER_USAGE,
    TOOL_CALLED,
    TOOL_RETURNED,
    X_TASK_ID,
    X_TRIAL_INDEX,
    RunEvent,
    UserErrorCause,
)
from wopeval.wire.vocab import (
    OTEL_AGENT_ERROR,
    OTEL_COST_USD,
    OTEL_MODEL_CALLS,
    OTEL_SUPERSEDED,
    OTEL_TOOL_FIXTURE,
    OTEL_TOOL_FIXTURE_INDEX,
    OTEL_TOOL_WORLD_RULE,
    OTEL_USER_CALLS_BEFORE,
    OTEL_USER_CAUSE,
    OTEL_USER_KIND,
    OTEL_USER_REPLY_INDEX,
    OTEL_USER_TURN,
    OTEL_USER_TURN_EVENT,
    OTEL_WORLD_STATE_EVENT,
    USER_TURN,
    WORLD_STATE,
    X_ERROR,
    X_FIXTURE,
    X_RETRY,
    X_WORLD_RULE,
)

EVALUATION_EVENT = "gen_ai.evaluation.result"
# Spans (or log records) per OTLP/JSON line of a streamed export.
LINE_ITEMS = 1000
# A user turn's cause is exported only as one of these labels (never a free text).
USER_ERROR_CAUSES = frozenset(get_args(UserErrorCause))


def _ns(timestamp: str) -> int:
    return int(datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp() * 1e9)


def evaluation_attributes(suite_id: str, payload: dict[str, Any]) -> dict[str, Any]:
    """``eval.scored`` → ``gen_ai.evaluation.result`` attributes (RFC 0244 §E)."""
    attrs: dict[str, Any] = {
        "gen_ai.evaluation.name": f"{suite_id}/{payload['taskId']}",
        "gen_ai.evaluation.score.value": float(payload["score"]),
        "openwop.eval.passed": bool(payload["passed"]),
    }
    if "scoreLabel" in payload:
        attrs["gen_ai.evaluation.score.label"] = payload["scoreLabel"]
    if "evaluatorType" in payload:
        attrs["gen_ai.evaluation.evaluator.type"] = payload["evaluatorType"]  # provisional
    if "trialIndex" in payload:
        attrs["openwop.eval.trial_index"] = int(payload["trialIndex"])
    return attrs


class _Exporter:
    """The spans of one run's log, fed in order; ``on_result`` gets each evaluation event."""

    def __init__(
        self,
        tracer: trace.Tracer,
        suite_id: str,
        run_id: str,
        on_result: Callable[[int, dict[str, Any], Span], None],
    ) -> None:
        self.tracer = tracer
        self.suite_id = suite_id
        self.run_id = run_id
        self.trials: dict[str, Span] = {}  # open trial spans, by their root event id
        self.tools: dict[str, Span] = {}
        self.invocations: dict[str, str] = {}
        self.attempts: dict[tuple[str, int], str] = {}  # unscored trial spans, by (task, index)
        self.retried: set[str] = set()  # root event ids of attempts a retry supersedes
        self.called: dict[str, int] = {}  # tool calls so far, by trial root event id
        self.on_result = on_result  # (timestamp, attributes, the span the event is in)

    def run(self, events: Iterable[RunEvent]) -> None:
        stream = iter(events)
        first = next(stream, None)
        if first is None:
            return
        root = self.tracer.start_span(
            f"evaluate {self.suite_id}",
            start_time=_ns(first.timestamp),
            attributes={
                "gen_ai.operation.name": "evaluate",
                "openwop.run.id": self.run_id,
                "openwop.eval.suite_id": self.suite_id,
            },
        )
        context = trace.set_span_in_context(root)
        last = first
        for event in chain((first,), stream):
            self._event(event, root, context)
            last = event
        for span in [*self.tools.values(), *self.trials.values()]:
            span.end(end_time=_ns(last.timestamp))
        root.end(end_time=_ns(last.timestamp))

    def _event(self, event: RunEvent, root: Span, context: Any) -> None:
        payload = event.payload if isinstance(event.payload, dict) else {}
        at = _ns(event.timestamp)
        parent = self.trials.get(event.causationId or "")
        if event.type == INVOCATION_STARTED and X_TASK_ID in payload:
            key = (str(payload[X_TASK_ID]), int(payload.get(X_TRIAL_INDEX, 0)))
            self._supersede(self.attempts.get(key), at)
            self.attempts[key] = event.eventId
            span = self.tracer.start_span(
                f"invoke_agent {payload['agentId']}",
                context=context,
                start_time=at,
                attributes={
                    "gen_ai.operation.name": "invoke_agent",
                    "gen_ai.agent.id": payload["agentId"],
                    "openwop.eval.task_id": payload[X_TASK_ID],
                    "openwop.eval.trial_index": int(payload.get(X_TRIAL_INDEX, 0)),
                },
            )
            self.trials[event.eventId] = span
            self.invocations[event.eventId] = str(payload["invocationId"])
        elif event.type == INVOCATION_COMPLETED and parent is not None:
            if payload.get("invocationId") == self.invocations.get(event.causationId or ""):
                parent.set_attribute("openwop.agent.outcome", str(payload.get("outcome")))
                if isinstance(payload.get(X_ERROR), str):
                    parent.set_attribute(OTEL_AGENT_ERROR, payload[X_ERROR])
                if isinstance(payload.get(X_RETRY), dict):  # a retry supersedes this attempt
                    self.retried.add(event.causationId or "")
        elif event.type == USER_TURN and parent is not None:
            before = self.called.get(event.causationId or "", 0)
            parent.add_event(OTEL_USER_TURN_EVENT, _turn(payload, before), timestamp=at)
        elif event.type == WORLD_STATE and parent is not None:
            parent.add_event(OTEL_WORLD_STATE_EVENT, timestamp=at)  # that it was, not what
        elif event.type == TOOL_CALLED and parent is not None:
            root_id = event.causationId or ""
            self.called[root_id] = self.called.get(root_id, 0) + 1
            self.tools[str(payload["callId"])] = self.tracer.start_span(
                f"execute_tool {payload['toolName']}",
                context=trace.set_span_in_context(parent),
                start_time=at,
                attributes={
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": payload["toolName"],
                    "gen_ai.tool.call.id": payload["callId"],
                },
            )
        elif event.type == TOOL_RETURNED:
            self._returned(payload, at)
        elif event.type == PROVIDER_USAGE and parent is not None:
            _add_usage(parent, payload)
        elif event.type == EVAL_SCORED:
            target = parent or root
            self.on_result(at, evaluation_attributes(self.suite_id, payload), target)
            if parent is not None and not payload.get("passed"):
                label = payload.get("scoreLabel") or "fail"
                parent.set_status(Status(StatusCode.ERROR, f"trial did not pass ({label})"))
            if parent is not None and event.causationId is not None:
                parent.end(end_time=at)  # a trial span covers its run and its scoring
                del self.trials[event.causationId]  # written; later events of it are ignored
                self.called.pop(event.causationId, None)
                self.invocations.pop(event.causationId, None)
                self.attempts.pop(
                    (str(payload.get("taskId")), payload.get("trialIndex") or 0), None
                )

    def _supersede(self, root_event_id: str | None, at: int) -> None:
        """An attempt left unscored (a run interrupted, then resumed, or an attempt retried
        after an infrastructure failure: the trial ran again) ends where the next one starts,
        marked so that ``import-otlp`` does not count it as a second claim on its trial (as
        grading ignores it in the log)."""
        span = self.trials.pop(root_event_id, None) if root_event_id is not None else None
        if span is None:
            return
        span.set_attribute(OTEL_SUPERSEDED, True)
        why = "retried" if root_event_id in self.retried else "the run was resumed"
        span.set_status(Status(StatusCode.ERROR, f"superseded: {why}"))
        span.end(end_time=at)
        self.invocations.pop(root_event_id or "", None)

    def _returned(self, payload: dict[str, Any], at: int) -> None:
        tool = self.tools.pop(str(payload.get("callId")), None)
        if tool is None:
            return
        status = str(payload.get("status", "ok"))
        tool.set_attribute("openwop.tool.status", status)
        if isinstance(payload.get(X_FIXTURE), str):
            tool.set_attribute(OTEL_TOOL_FIXTURE, payload[X_FIXTURE])
        for key, name in (("x-wopeval-fixtureIndex", OTEL_TOOL_FIXTURE_INDEX),
                          (X_WORLD_RULE, OTEL_TOOL_WORLD_RULE)):  # fmt: skip
            index = payload.get(key)
            if isinstance(index, int) and not isinstance(index, bool):
                tool.set_attribute(name, index)
        if status != "ok":
            code = (payload.get("error") or {}).get("code", status)
            tool.set_status(Status(StatusCode.ERROR, str(code)))
        tool.end(end_time=at)


def _turn(payload: dict[str, Any], calls_before: int) -> dict[str, Any]:
    """A user turn's span event attributes: content-free (never the message or the reply)."""
    attrs: dict[str, Any] = {
        OTEL_USER_TURN: int(payload.get("turn", 0)),
        OTEL_USER_KIND: str(payload.get("kind")),
        OTEL_USER_CALLS_BEFORE: calls_before,
    }
    if isinstance(payload.get("replyIndex"), int):
        attrs[OTEL_USER_REPLY_INDEX] = payload["replyIndex"]
    if payload.get("cause") in USER_ERROR_CAUSES:
        attrs[OTEL_USER_CAUSE] = payload["cause"]
    return attrs


def _add_usage(span: Span, payload: dict[str, Any]) -> None:
    attrs = getattr(span, "attributes", {}) or {}
    for key, field in (
        ("gen_ai.usage.input_tokens", "inputTokens"),
        ("gen_ai.usage.output_tokens", "outputTokens"),
    ):
        span.set_attribute(key, int(attrs.get(key, 0)) + int(payload.get(field, 0)))
    span.set_attribute(OTEL_MODEL_CALLS, int(attrs.get(OTEL_MODEL_CALLS, 0)) + 1)
    cost = payload.get("costEstimateUsd")
    if cost is not None:
        span.set_attribute(OTEL_COST_USD, float(attrs.get(OTEL_COST_USD, 0.0)) + float(cost))


def export_run(
    suite_id: str,
    run_id: str,
    events: Iterable[RunEvent],
    provider: TracerProvider,
    logs: LoggerProvider | None = None,
) -> None:
    """Emit a stored run's spans through ``provider`` and its evaluation events through
    ``logs`` (plug in any SpanExporter / LogRecordExporter). ``events`` is read once, in order;
    each span ends, and each evaluation event is emitted, as the log reaches it."""
    logger = logs.get_logger("wopeval") if logs is not None else None

    def result(at: int, attributes: dict[str, Any], span: Span) -> None:
        if logger is not None:
            logger.emit(
                timestamp=at,
                observed_timestamp=at,
                context=trace.set_span_in_context(span),
                event_name=EVALUATION_EVENT,
                attributes=attributes,
            )

    _Exporter(provider.get_tracer("wopeval"), suite_id, run_id, result).run(events)


class _LineWriter:
    """Encodes what the SDK hands over into OTLP/JSON lines of :data:`LINE_ITEMS` items."""

    def __init__(self, out: TextIO, encode: Any) -> None:
        self._out = out
        self._encode = encode
        self._held: list[Any] = []

    def add(self, items: Sequence[Any]) -> None:
        self._held.extend(items)
        if len(self._held) >= LINE_ITEMS:
            self.flush()

    def flush(self) -> None:
        if self._held:
            line = self._encode(self._held).to_dict()
            self._out.write(json.dumps(line, separators=(",", ":")) + "\n")
            self._held = []


class _SpanLines(SpanExporter):
    def __init__(self, lines: _LineWriter) -> None:
        self.lines = lines

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.lines.add(spans)
        return SpanExportResult.SUCCESS


class _LogLines(LogRecordExporter):
    def __init__(self, lines: _LineWriter) -> None:
        self.lines = lines

    def export(self, batch: Sequence[ReadableLogRecord]) -> LogRecordExportResult:
        self.lines.add(batch)
        return LogRecordExportResult.SUCCESS

    def shutdown(self) -> None:
        return None

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True


def write_otlp_json_lines(
    suite_id: str, run_id: str, events: Iterable[RunEvent], out: TextIO
) -> None:
    """Write the run's spans and evaluation events to ``out`` as OTLP/JSON lines, streaming:
    ``wopeval export --format otel``. Each line is written as it fills (a run of fewer than
    :data:`LINE_ITEMS` trials: one traces line, then one logs line); the SDK's encoder writes
    every line."""
    resource = Resource.create({"service.name": "wopeval", "openwop.run.id": run_id})
    traces = _LineWriter(out, encode_spans)
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(SimpleSpanProcessor(_SpanLines(traces)))
    records = _LineWriter(out, encode_logs)
    logs = LoggerProvider(resource=resource)
    logs.add_log_record_processor(SimpleLogRecordProcessor(_LogLines(records)))
    export_run(suite_id, run_id, events, provider, logs)
    provider.shutdown()
    logs.shutdown()
    traces.flush()
    records.flush()


def run_telemetry(
    suite_id: str, run_id: str, events: Iterable[RunEvent]
) -> tuple[list[ReadableSpan], list[ReadableLogRecord]]:
    """The run's spans and evaluation events, collected in memory."""
    resource = Resource.create({"service.name": "wopeval", "openwop.run.id": run_id})
    spans = InMemorySpanExporter()
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(SimpleSpanProcessor(spans))
    records = InMemoryLogRecordExporter()  # type: ignore[no-untyped-call]
    logs = LoggerProvider(resource=resource)
    logs.add_log_record_processor(SimpleLogRecordProcessor(records))
    export_run(suite_id, run_id, events, provider, logs)
    provider.shutdown()
    logs.shutdown()
    return list(spans.get_finished_spans()), list(records.get_finished_logs())


def run_spans(suite_id: str, run_id: str, events: Iterable[RunEvent]) -> list[ReadableSpan]:
    """The run's spans only."""
    return run_telemetry(suite_id, run_id, events)[0]


def otlp_json_lines(suite_id: str, run_id: str, events: Iterable[RunEvent]) -> str:
    """:func:`write_otlp_json_lines` as one string."""
    out = io.StringIO()
    write_otlp_json_lines(suite_id, run_id, events, out)
    return out.getvalue()
