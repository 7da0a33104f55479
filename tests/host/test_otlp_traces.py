"""``POST /v1/traces``: OTLP/HTTP (JSON and protobuf, as the SDK encodes them) into a stored,
graded eval run; behind the API keys; loopback clients only unless configured."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from opentelemetry.exporter.otlp.json.common.trace_encoder import encode_spans as json_spans
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans as pb_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.host.helpers import DEMO_REF, KEY_A, auth, host_config, running_host, segment
from tests.host.test_create_refusals import refused
from wopeval.errors import StoreError
from wopeval.host.create import load_suite_ref
from wopeval.service.otlp_read import read_otlp
from wopeval.service.otlp_trials import import_spans

TASK = "refund-approved"


def _spans() -> list[ReadableSpan]:
    """Two GenAI-convention traces (trials 0 and 1 of the demo suite's refund task)."""
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"openwop.eval.suite_ref": DEMO_REF}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("test")
    for trial in (0, 1):
        root = {"gen_ai.operation.name": "invoke_agent", "openwop.eval.task_id": TASK,
                "openwop.eval.trial_index": trial, "final_result": "refund approved"}  # fmt: skip
        with tracer.start_as_current_span("invoke_agent support", attributes=root):
            for tool, args in (("crm:lookup-order", {"orderId": "A-1"}),
                               ("billing:refund", {"amountMinor": 4200})):  # fmt: skip
                attrs = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool,
                         "gen_ai.tool.call.arguments": json.dumps(args)}  # fmt: skip
                with tracer.start_as_current_span(f"execute_tool {tool}", attributes=attrs):
                    pass
    with tracer.start_as_current_span("unrelated"):  # a trace naming no task
        pass
    provider.shutdown()
    return list(memory.get_finished_spans())


def _post(client: httpx.AsyncClient, body: bytes, media: str, **headers: str) -> Any:
    return client.post(
        "/v1/traces", content=body, headers={"Content-Type": media, **auth(KEY_A), **headers}
    )


async def test_otlp_traces_json_and_protobuf_become_graded_runs(store_url: str) -> None:
    spans = _spans()
    as_json = json.dumps(json_spans(spans).to_dict()).encode()
    as_pb = pb_spans(spans).SerializeToString()
    async with running_host(store_url) as host:
        answers = [
            await _post(host.client, as_json, "application/json"),
            await _post(host.client, as_pb, "application/x-protobuf"),
        ]
        summaries, stored_logs = [], []
        for answer in answers:
            assert answer.status_code == 200, answer.text
            run_id = answer.headers["OpenWOP-Run-Id"]
            assert run_id.startswith("acme/")
            got = await host.get(f"/runs/{segment(run_id)}/eval-summary")
            summaries.append(got.json())
            stored_logs.append(await host.state.store.events(run_id))
        demo = load_suite_ref(host.state, DEMO_REF)
    assert answers[0].json() == {
        "partialSuccess": {
            "rejectedSpans": "1",
            "errorMessage": "spans of traces that name no task of the suite were not graded",
        }
    }
    assert summaries[0] == summaries[1]
    # Stored as converted: the same events in the same order (the appends are queued together),
    # each pointing at its trial's first event by its stored id.
    agent = demo.targetAgentId or "imported.agent"
    converted = list(import_spans(demo, read_otlp(as_json), target_agent_id=agent).events)
    for stored in stored_logs:
        assert [(e.type, e.timestamp, e.payload) for e in stored] == [
            (e.type, e.timestamp, e.payload) for e in converted
        ]
    position = {e.eventId: i for i, e in enumerate(converted)}
    stored_position = {e.eventId: i for i, e in enumerate(stored_logs[0])}
    assert [stored_position.get(e.causationId or "") for e in stored_logs[0]] == [
        position.get(e.causationId or "") for e in converted
    ]
    task = next(t for t in summaries[0]["tasks"] if t["taskId"] == TASK)
    assert task["passed"] is True
    assert task["trials"]["n"] == 2
    assert task["trajectory"]["matched"] is True


async def test_otlp_traces_needs_a_key_a_suite_a_media_type_and_loopback(store_url: str) -> None:
    body = json.dumps(json_spans(_spans()[:3]).to_dict()).encode()
    async with running_host(store_url) as host:
        anonymous = await host.client.post(
            "/v1/traces", content=body, headers={"Content-Type": "application/json"}
        )
        media = await _post(host.client, body, "text/plain")
        headers = {"Content-Type": "application/json", **auth(KEY_A)}
        bare = json.dumps({"resourceSpans": []}).encode()
        no_suite = await host.client.post("/v1/traces", content=bare, headers=headers)
        remote = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=host.app, client=("203.0.113.9", 4318)),
            base_url="http://host.test",
        )
        async with remote:
            far = await remote.post("/v1/traces", content=body, headers=headers)
    assert anonymous.status_code == 401
    assert media.status_code == 415
    refused(no_suite, 400, "validation_error", "x-wopeval-suite")
    assert far.status_code == 404
    async with running_host(store_url, host_config(otlpTraces="any")) as host:
        remote = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=host.app, client=("203.0.113.9", 4318)),
            base_url="http://host.test",
        )
        async with remote:
            allowed = await remote.post("/v1/traces", content=body, headers=headers)
    assert allowed.status_code == 200, allowed.text


async def test_otlp_traces_refuses_a_body_over_its_limit(store_url: str) -> None:
    """``otlpMaxBodyBytes``: a larger body gets ``413`` (by its declared length, and as it
    streams in without one), a body within it is graded."""
    body = json.dumps(json_spans(_spans()).to_dict()).encode()
    async with running_host(store_url, host_config(otlpMaxBodyBytes=len(body) - 1)) as host:
        declared = await _post(host.client, body, "application/json")

        async def chunks() -> Any:
            yield body[:1024]
            yield body[1024:]

        streamed = await host.client.post(
            "/v1/traces",
            content=chunks(),
            headers={"Content-Type": "application/json", **auth(KEY_A)},
        )
    assert declared.status_code == 413, declared.text
    assert streamed.status_code == 413, streamed.text
    assert "payload_too_large" in streamed.text
    async with running_host(store_url, host_config(otlpMaxBodyBytes=len(body))) as host:
        fits = await _post(host.client, body, "application/json")
    assert fits.status_code == 200, fits.text


async def test_otlp_traces_reports_a_store_failure_as_the_store_s(
    store_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The appends are queued together: a store failure among them still reaches the client
    as that error, not as an anonymous one."""
    body = json.dumps(json_spans(_spans()).to_dict()).encode()
    async with running_host(store_url) as host:
        store = host.state.store

        async def failing(*args: Any, **kwargs: Any) -> Any:
            raise StoreError("database is down")

        monkeypatch.setattr(store, "_insert", failing)  # every batch of events is refused
        answer = await _post(host.client, body, "application/json")
    assert answer.status_code == 500, answer.text
    assert "StoreError: could not append to run" in answer.text  # the store's own error
    assert "database is down" in answer.text
