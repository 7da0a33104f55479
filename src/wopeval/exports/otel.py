"""Export a stored run as OpenTelemetry traces and logs (mapping: docs/eval-otel-mapping.md).

One trace per run::

    evaluate <suiteId>                        (root; the whole run)
      invoke_agent <agentId>                  (one per trial bracket; ERROR status unless passed)
        execute_tool <toolName>               (tool-called → tool-returned; ERROR on a tool error)

and one log-based event ``gen_ai.evaluation.result`` per ``eval.scored`` (the GenAI semantic
conventions' evaluation event, an event-named log record in the trial span's context; span
events are being deprecated). The trial spans carry ``openwop.eval.task_id`` and
``openwop.eval.trial_index`` — the names ``wopeval import-otlp`` reads back.

:func:`otlp_json_lines` writes OTLP/JSON as the OpenTelemetry SDK encodes it (its
``otlp-json-common`` encoder): one ``ExportTraceServiceRequest`` line and one
``ExportLogsServiceRequest`` line, the file format a collector's ``otlpjsonfile`` receiver reads.

Content-free like the wire: tool names and ids only, never arguments, outputs or prompts.
Timestamps are the recorded event timestamps, so an export of a stored run is reproducible.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from opentelemetry import trace
from opentelemetry.exporter.otlp.json.common._log_encoder import encode_logs
from opentelemetry.exporter.otlp.json.common.trace_encoder import encode_spans
from opentelemetry.sdk._logs import LoggerProvider, ReadableLogRecord
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Span, Status, StatusCode

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
)

EVALUATION_EVENT = "gen_ai.evaluation.result"


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
    def __init__(self, tracer: trace.Tracer, suite_id: str, run_id: str) -> None:
        self.tracer = tracer
        self.suite_id = suite_id
        self.run_id = run_id
        self.trials: dict[str, Span] = {}
        self.tools: dict[str, Span] = {}
        self.invocations: dict[str, str] = {}
        self.ended: set[str] = set()
        # (timestamp, attributes, the span whose context the evaluation event carries)
        self.results: list[tuple[int, dict[str, Any], Span]] = []

    def run(self, events: Sequence[RunEvent]) -> None:
        root = self.tracer.start_span(
            f"evaluate {self.suite_id}",
            start_time=_ns(events[0].timestamp),
            attributes={
                "gen_ai.operation.name": "evaluate",
                "openwop.run.id": self.run_id,
                "openwop.eval.suite_id": self.suite_id,
            },
        )
        context = trace.set_span_in_context(root)
        for event in events:
            self._event(event, root, context)
        open_trials = [s for k, s in self.trials.items() if k not in self.ended]
        for span in [*self.tools.values(), *open_trials]:
            span.end(end_time=_ns(events[-1].timestamp))
        root.end(end_time=_ns(events[-1].timestamp))

    def _event(self, event: RunEvent, root: Span, context: Any) -> None:
        payload = event.payload if isinstance(event.payload, dict) else {}
        at = _ns(event.timestamp)
        parent = self.trials.get(event.causationId or "")
        if event.causationId in self.ended:
            parent = None
        if event.type == INVOCATION_STARTED and X_TASK_ID in payload:
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
        elif event.type == TOOL_CALLED and parent is not None:
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
            self.results.append((at, evaluation_attributes(self.suite_id, payload), target))
            if parent is not None and not payload.get("passed"):
                label = payload.get("scoreLabel") or "fail"
                parent.set_status(Status(StatusCode.ERROR, f"trial did not pass ({label})"))
            if parent is not None and event.causationId is not None:
                parent.end(end_time=at)  # a trial span covers its run and its scoring
                self.ended.add(event.causationId)

    def _returned(self, payload: dict[str, Any], at: int) -> None:
        tool = self.tools.pop(str(payload.get("callId")), None)
        if tool is None:
            return
        status = str(payload.get("status", "ok"))
        tool.set_attribute("openwop.tool.status", status)
        if status != "ok":
            code = (payload.get("error") or {}).get("code", status)
            tool.set_status(Status(StatusCode.ERROR, str(code)))
        tool.end(end_time=at)


def _add_usage(span: Span, payload: dict[str, Any]) -> None:
    attrs = getattr(span, "attributes", {}) or {}
    for key, field in (
        ("gen_ai.usage.input_tokens", "inputTokens"),
        ("gen_ai.usage.output_tokens", "outputTokens"),
    ):
        span.set_attribute(key, int(attrs.get(key, 0)) + int(payload.get(field, 0)))


def export_run(
    suite_id: str,
    run_id: str,
    events: Iterable[RunEvent],
    provider: TracerProvider,
    logs: LoggerProvider | None = None,
) -> None:
    """Emit a stored run's spans through ``provider`` and its evaluation events through
    ``logs`` (plug in any SpanExporter / LogRecordExporter)."""
    ordered = list(events)
    if not ordered:
        return
    exporter = _Exporter(provider.get_tracer("wopeval"), suite_id, run_id)
    exporter.run(ordered)
    if logs is None:
        return
    logger = logs.get_logger("wopeval")
    for at, attributes, span in exporter.results:
        logger.emit(
            timestamp=at,
            observed_timestamp=at,
            context=trace.set_span_in_context(span),
            event_name=EVALUATION_EVENT,
            attributes=attributes,
        )


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
    """OTLP/JSON lines (``wopeval export --format otel``): the traces, then the logs."""
    spans, records = run_telemetry(suite_id, run_id, events)
    lines = []
    if spans:
        lines.append(encode_spans(spans).to_dict())
    if records:
        lines.append(encode_logs(records).to_dict())
    return "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines)
