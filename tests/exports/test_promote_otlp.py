"""``wopeval promote`` on OTLP-imported runs (``POST /v1/traces``, stored on SQLite and
PostgreSQL): a trace with arguments and results promotes to a task the scripted agent passes
under replay; one without them, or cut short, is refused naming what is missing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from opentelemetry.exporter.otlp.json.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import use_span

from tests.engine.helpers import run_suite
from tests.exports.promote_helpers import acli, promoted
from tests.host.helpers import DEMO_REF, KEY_A, auth, running_host
from wopeval.events.store import EventStore
from wopeval.suite import load_suite, parse_suite

TASK = "refund-approved"
CALLS = (("crm:lookup-order", {"orderId": "A-1"}), ("billing:refund", {"amountMinor": 4200}))
RESULTS = ({"orderId": "A-1", "status": "damaged"}, {"ok": True})


def _spans(*, args: bool = True, results: bool = True, cut: bool = False) -> list[ReadableSpan]:
    """One GenAI-convention trace of the demo suite's refund task, trial 0. ``cut``: the agent
    span never ends (so it is never exported), as when the process died mid-trial."""
    memory = InMemorySpanExporter()
    resource: dict[str, str | int] = {"openwop.eval.task_id": TASK, "openwop.eval.trial_index": 0}
    provider = TracerProvider(resource=Resource.create(resource))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("test")
    root_attrs = {"gen_ai.operation.name": "invoke_agent", "final_result": "refund approved"}
    root = tracer.start_span("invoke_agent support", attributes=root_attrs)
    with use_span(root, end_on_exit=not cut):
        for (tool, call_args), result in zip(CALLS, RESULTS, strict=True):
            attrs: dict[str, Any] = {"gen_ai.operation.name": "execute_tool",
                                     "gen_ai.tool.name": tool}  # fmt: skip
            if args:
                attrs["gen_ai.tool.call.arguments"] = json.dumps(call_args)
            if results:
                attrs["gen_ai.tool.call.result"] = json.dumps(result)
            with tracer.start_as_current_span(f"execute_tool {tool}", attributes=attrs):
                pass
    provider.shutdown()
    return list(memory.get_finished_spans())


async def _imported(store_url: str, spans: list[ReadableSpan]) -> str:
    body = json.dumps(encode_spans(spans).to_dict()).encode()
    headers = {"Content-Type": "application/json", "X-Wopeval-Suite": DEMO_REF, **auth(KEY_A)}
    async with running_host(store_url) as host:
        answer = await host.client.post("/v1/traces", content=body, headers=headers)
    assert answer.status_code == 200, answer.text
    return answer.headers["OpenWOP-Run-Id"]


async def _promote(store_url: str, run_id: str, *args: str) -> tuple[int, str]:
    code, out = await acli("promote", run_id, "--task", TASK, "--trial", "0",
                           "--store", store_url, *args)  # fmt: skip
    return code, " ".join(out.split())


async def test_an_imported_trial_promotes_and_passes_under_replay(
    store: EventStore, store_url: str, tmp_path: Path
) -> None:
    run_id = await _imported(store_url, _spans())
    out = tmp_path / "p.yaml"
    code, said = await _promote(store_url, run_id, "-o", str(out))
    assert code == 0, said
    load_suite(out)
    [task] = promoted(out)["tasks"]
    assert [(e["tool"], e["args"], e["response"]) for e in task["fixtures"]["toolResponses"]] == [
        (tool, args, result) for (tool, args), result in zip(CALLS, RESULTS, strict=True)
    ]
    assert task["expected"]["trajectory"]["calls"] == [
        {"tool": tool, "args": args, "argsMatch": "exact"} for tool, args in CALLS
    ]
    assert task["expected"]["match"] == {"strategy": "contains", "value": "refund approved"}
    # the demo suite's input is the scripted agent's script: it replays the imported trial
    again = await run_suite(store, parse_suite(promoted(out)))
    assert again.done.passed is True


async def test_an_imported_trial_without_results_or_arguments_or_cut_short_is_refused(
    store: EventStore, store_url: str
) -> None:
    no_results = await _imported(store_url, _spans(results=False))
    code, out = await _promote(store_url, no_results)
    assert code == 2, out
    assert 'call 0 ("crm:lookup-order"): its result was not captured (none in the trace' in out
    no_args = await _imported(store_url, _spans(args=False))
    code, out = await _promote(store_url, no_args)
    assert code == 2, out
    assert 'call 0 ("crm:lookup-order"): its arguments were not captured (none in the trace' in out
    cut = await _imported(store_url, _spans(cut=True))
    code, out = await _promote(store_url, cut)
    assert code == 2, out
    assert "the trace was cut short: 2 span(s) of this trial name a parent span" in out
    events = await store.events(cut)
    started = [e.payload for e in events if e.type == "agent.invocation-started"]
    assert [p.get("x-wopeval-traceIncomplete") for p in started] == [2]
    whole = await _imported(store_url, _spans())
    started = [e.payload for e in await store.events(whole) if e.type == "agent.invocation-started"]
    assert [p.get("x-wopeval-traceIncomplete") for p in started] == [None]
