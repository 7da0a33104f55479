"""RFC 0244 §E: eval.scored maps onto OpenTelemetry ``gen_ai.evaluation.result`` (log-based
events), trials onto ``invoke_agent`` spans with an error status unless they passed; the export
is OTLP/JSON that the OpenTelemetry SDK's own OTLP JSON codec reads back; content-free."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.proto_json.collector.logs.v1.logs_service import ExportLogsServiceRequest
from opentelemetry.proto_json.collector.trace.v1.trace_service import ExportTraceServiceRequest
from opentelemetry.trace import StatusCode

from tests.engine.helpers import Ran, make_suite, run_suite, scripted_task
from wopeval.events.store import EventStore
from wopeval.exports.otel import (
    EVALUATION_EVENT,
    otlp_json_lines,
    run_telemetry,
    write_otlp_json_lines,
)
from wopeval.wire.events import RunEvent

SECRET = "ARG-MARKER-91"


async def _ran(store: EventStore) -> tuple[Ran, str]:
    script = {
        "calls": [{"tool": "crm:lookup", "args": {"q": SECRET}}],
        "output": "ok",
        "usage": [{"provider": "mock", "model": "m", "inputTokens": 7, "outputTokens": 3}],
        "trials": {"1": {"output": "no"}},
    }
    golden = {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}}
    suite = make_suite([scripted_task("t", script, golden)], trials={"count": 2})
    return await run_suite(store, suite), suite.suiteId


async def test_0244_E_each_scored_trial_becomes_a_log_based_evaluation_event(
    store: EventStore,
) -> None:
    ran, suite_id = await _ran(store)
    spans, records = run_telemetry(suite_id, ran.run_id, ran.events)
    assert sorted(s.name for s in spans) == [
        "evaluate core.test.evals.engine",
        "execute_tool crm:lookup",
        "execute_tool crm:lookup",
        "invoke_agent core.conformance.agents.scripted",
        "invoke_agent core.conformance.agents.scripted",
    ]
    trials = {dict(s.attributes or {})["openwop.eval.trial_index"]: s for s in spans
              if s.name.startswith("invoke_agent")}  # fmt: skip
    assert all(not s.events for s in spans)  # no span events: log-based events only
    assert [r.log_record.event_name for r in records] == [EVALUATION_EVENT] * 2
    by_index = {r.log_record.attributes["openwop.eval.trial_index"]: r.log_record for r in records}  # type: ignore[index]
    for index, record in by_index.items():
        assert record.span_id == trials[index].context.span_id  # in the trial span's context
        assert record.trace_id == trials[index].context.trace_id
    first, second = (dict(by_index[i].attributes or {}) for i in (0, 1))
    assert first["gen_ai.evaluation.score.value"] == 1.0
    assert first["gen_ai.evaluation.score.label"] == "pass"
    assert second["gen_ai.evaluation.score.label"] == "fail"
    assert second["gen_ai.evaluation.name"] == "core.test.evals.engine/t"
    assert second["gen_ai.evaluation.evaluator.type"] == "deterministic"
    # the failed trial's span carries an error status; the passed one does not
    assert trials[1].status.status_code is StatusCode.ERROR
    assert trials[0].status.status_code is StatusCode.UNSET
    assert all(dict(s.attributes or {})["gen_ai.usage.input_tokens"] == 7 for s in trials.values())
    root = next(s for s in spans if s.name.startswith("evaluate"))
    assert all(s.parent is not None and s.parent.span_id == root.context.span_id
               for s in trials.values())  # fmt: skip


async def test_otlp_json_lines_round_trip_through_the_sdk_codec(store: EventStore) -> None:
    ran, suite_id = await _ran(store)
    text = otlp_json_lines(suite_id, ran.run_id, ran.events)
    assert SECRET not in text
    traces_line, logs_line = (json.loads(line) for line in text.splitlines())
    traces = ExportTraceServiceRequest.from_dict(traces_line)
    logs = ExportLogsServiceRequest.from_dict(logs_line)
    assert traces.to_dict() == traces_line  # the SDK's codec reads back exactly what we wrote
    assert logs.to_dict() == logs_line
    spans = [s for rs in traces.resource_spans for ss in rs.scope_spans for s in ss.spans]
    failed = [s for s in spans if s.status is not None and s.status.code == 2]  # STATUS_CODE_ERROR
    # trial 1 did not pass; both trials' lookups found no live tool (a tool error)
    assert sorted(str(s.name) for s in failed) == [
        "execute_tool crm:lookup",
        "execute_tool crm:lookup",
        "invoke_agent core.conformance.agents.scripted",
    ]
    records = [r for rl in logs.resource_logs for sl in rl.scope_logs for r in sl.log_records]
    assert [r.event_name for r in records] == [EVALUATION_EVENT] * 2
    span_ids = {s.span_id for s in spans}
    assert all(r.span_id in span_ids for r in records)
    # OTLP/JSON spelling: hex ids, camelCase keys, string int64 timestamps
    raw_span: dict[str, Any] = traces_line["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    assert len(raw_span["traceId"]) == 32
    assert int(raw_span["traceId"], 16) >= 0
    assert isinstance(raw_span["startTimeUnixNano"], str)


async def test_the_otel_export_streams_a_line_as_it_fills(
    store: EventStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 13 §2: the export reads the log once and writes each line as it fills, so no
    line waits for the whole log (a long run's spans are never all held). Lines hold at most
    LINE_ITEMS items (two here); together they are the spans and events of the run."""
    monkeypatch.setattr("wopeval.exports.otel.LINE_ITEMS", 2)
    ran, suite_id = await _ran(store)
    out = io.StringIO()
    written_when: list[int] = []  # what had been written when each event was handed over

    def log() -> Iterator[RunEvent]:
        for event in ran.events:
            written_when.append(len(out.getvalue()))
            yield event

    write_otlp_json_lines(suite_id, ran.run_id, log(), out)
    assert written_when[-1] > 0  # lines were out before the last event was read
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    spans = [s for line in lines for rs in line.get("resourceSpans", ())
             for ss in rs["scopeSpans"] for s in ss["spans"]]  # fmt: skip
    records = [r for line in lines for rl in line.get("resourceLogs", ())
               for sl in rl["scopeLogs"] for r in sl["logRecords"]]  # fmt: skip
    assert all(
        len([*(s for rs in line.get("resourceSpans", ()) for ss in rs["scopeSpans"]
               for s in ss["spans"]),
             *(r for rl in line.get("resourceLogs", ()) for sl in rl["scopeLogs"]
               for r in sl["logRecords"])]) <= 2
        for line in lines
    )  # fmt: skip
    whole_spans, whole_records = run_telemetry(suite_id, ran.run_id, ran.events)
    assert sorted(s["name"] for s in spans) == sorted(s.name for s in whole_spans)
    assert len(records) == len(whole_records) == 2
