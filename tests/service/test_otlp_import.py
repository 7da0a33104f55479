"""``wopeval import-otlp``: traces from real instrumentation, offline, graded by the pure grader.

pydantic-ai runs its own loop with its ``TestModel`` (it calls every tool once, with generated
arguments: ``"a"`` for a string), instrumented through the OpenTelemetry SDK, whose OTLP JSON
file exporter writes the file; OpenInference spans are written by the SDK's tracer with the
OpenInference attribute names; the protobuf form is the SDK's own OTLP protobuf encoding.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml
from opentelemetry.exporter.otlp.json.file.trace_exporter import FileSpanExporter
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode
from typer.testing import CliRunner

from wopeval.cli.app import app
from wopeval.events.store import EventStore
from wopeval.grading.views import collect_trials
from wopeval.wire.events import RunEvent

AGENT = "support.agent"


def _pydantic_ai_traces(path: Path, *, runs: int, include_content: bool) -> None:
    """Run a real pydantic-ai agent ``runs`` times; the SDK's file exporter writes ``path``.
    (pydantic-ai is imported here: every xdist worker collects this file, one runs it.)"""
    from pydantic_ai import Agent
    from pydantic_ai.models.instrumented import InstrumentationSettings
    from pydantic_ai.models.test import TestModel

    provider = TracerProvider(resource=Resource.create({"service.name": "support"}))
    provider.add_span_processor(SimpleSpanProcessor(FileSpanExporter(path)))
    agent = Agent(TestModel(), name="support")
    agent.instrument = InstrumentationSettings(
        tracer_provider=provider, include_content=include_content
    )

    @agent.tool_plain
    def lookup_order(order_id: str) -> dict[str, str]:
        return {"status": "damaged", "orderId": order_id}

    async def run_all() -> None:
        for _ in range(runs):
            await agent.run("my parcel arrived crushed")

    anyio.run(run_all)  # not run_sync, which leaves its event loop open
    provider.shutdown()


def _suite(tmp_path: Path, *tasks: dict[str, Any]) -> Path:
    doc = {
        "suiteId": "core.test.evals.otlp",
        "version": "1.0.0",
        "modes": ["golden"],
        "targetAgentId": AGENT,
        "trials": {"count": 2},
        "tasks": list(tasks),
    }
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def _task(task_id: str, args_match: str, expected_args: Any = None) -> dict[str, Any]:
    call: dict[str, Any] = {"tool": "lookup_order", "argsMatch": args_match}
    if expected_args is not None:
        call["args"] = expected_args
    return {
        "taskId": task_id,
        "input": {},
        "expected": {
            "kind": "golden",
            "match": {"strategy": "contains", "value": "damaged"},
            "trajectory": {"match": "exact", "calls": [call]},
        },
    }


def _import(*args: str) -> tuple[int, dict[str, Any], str]:
    result = CliRunner().invoke(app, ["import-otlp", *args, "--json"])
    lines = [line for line in result.stdout.splitlines() if line.startswith("{")]
    return result.exit_code, json.loads(lines[-1]) if lines else {}, result.output


def _tasks(summary: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {task["taskId"]: task for task in summary["tasks"]}


def test_import_otlp_grades_pydantic_ai_genai_spans(tmp_path: Path) -> None:
    traces = tmp_path / "traces.jsonl"
    _pydantic_ai_traces(traces, runs=2, include_content=True)
    suite = _suite(
        tmp_path,
        _task("refund", "exact", {"order_id": "a"}),
        _task("wrong-args", "exact", {"order_id": "b"}),
    )
    events = tmp_path / "events.jsonl"
    args = [str(traces), "--suite", str(suite), "--map", "*=refund", "--events-out", str(events)]
    code, summary, out = _import(*args)
    assert code == 1, out  # wrong-args has no trial in this mapping: not run
    refund = _tasks(summary)["refund"]
    assert refund["passed"] is True
    assert refund["trials"]["n"] == 2  # two traces, two trials
    assert refund["trajectory"]["matched"] is True
    assert refund["efficiency"]["modelCallCount"] == 2.0  # TestModel's two chat spans per run
    # the same traces graded as the task that expects other arguments fail on the path
    code, summary, _ = _import(str(traces), "--suite", str(suite), "--map", "*=wrong-args")
    assert code == 1
    assert _tasks(summary)["wrong-args"]["trajectory"]["matched"] is False
    # the converted log is an ordinary v2 event log: grade-log reproduces the summary
    graded = CliRunner().invoke(
        app, ["grade-log", str(events), "--suite", str(suite), "--agent", AGENT, "--json"]
    )
    assert json.loads(graded.stdout.splitlines()[-1]) == _import(*args)[1]


def test_import_otlp_fails_closed_when_the_spans_carry_no_arguments(tmp_path: Path) -> None:
    traces = tmp_path / "traces.jsonl"
    _pydantic_ai_traces(traces, runs=2, include_content=False)  # argument capture off
    suite = _suite(
        tmp_path, _task("compares", "exact", {"order_id": "a"}), _task("names", "ignore")
    )
    events = tmp_path / "events.jsonl"
    code, summary, out = _import(
        str(traces), "--suite", str(suite), "--map", "*=compares", "--events-out", str(events)
    )
    assert code == 1, out
    compares = _tasks(summary)["compares"]
    assert compares["passed"] is False
    assert compares["score"] == 0.0
    log = [json.loads(line) for line in events.read_text().splitlines()]
    labels = {e["payload"].get("scoreLabel") for e in log if e["type"] == "eval.scored"}
    assert labels == {"unscored"}
    reasons = [e["payload"]["message"] for e in log if e["type"] == "wopeval.trial-failed"]
    assert len(reasons) == 2
    assert all("no arguments for lookup_order" in r for r in reasons)
    # control: a task that compares names only is graded on the same spans (content is off, so
    # the output cannot match either: it fails on its output, not for missing arguments)
    code, summary, _ = _import(str(traces), "--suite", str(suite), "--map", "*=names")
    assert _tasks(summary)["names"]["trajectory"]["matched"] is True


def _openinference(path: Path) -> list[Any]:
    """OpenInference-shaped spans, written by the SDK; task ids as resource attributes."""
    memory = InMemorySpanExporter()
    resource = Resource.create({"openwop.eval.task_id": "oi-task"})
    provider = TracerProvider(resource=resource)
    provider.add_span_processor(SimpleSpanProcessor(FileSpanExporter(path)))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("openinference.test")
    for trial in range(2):
        with tracer.start_as_current_span(
            "support",
            attributes={
                "openinference.span.kind": "AGENT",
                "openwop.eval.trial_index": trial,
                "output.value": "refund approved",
            },
        ):
            with tracer.start_as_current_span(
                "lookup",
                attributes={
                    "openinference.span.kind": "TOOL",
                    "tool.name": "crm:lookup-order",
                    "input.value": json.dumps({"orderId": "A-1"}),
                    "output.value": '{"ok": true}',
                },
            ):
                pass
            with (
                tracer.start_as_current_span(
                    "helper",
                    attributes={
                        "openinference.span.kind": "AGENT",
                        "agent_name": "helper",
                    },
                ),
                tracer.start_as_current_span(
                    "refund",
                    attributes={
                        "openinference.span.kind": "TOOL",
                        "tool.name": "billing:refund",
                        "input.value": json.dumps({"amountMinor": 4200}),
                    },
                ) as refund,
            ):
                if trial == 1:
                    refund.set_status(Status(StatusCode.ERROR, "card declined"))
    provider.shutdown()
    return list(memory.get_finished_spans())


def test_import_otlp_openinference_delegates_errors_and_protobuf(tmp_path: Path) -> None:
    traces = tmp_path / "oi.jsonl"
    spans = _openinference(traces)
    trajectory = {
        "match": "exact",
        "includeDelegates": True,
        "calls": [
            {"tool": "crm:lookup-order", "args": {"orderId": "A-1"}, "argsMatch": "exact"},
            {"tool": "billing:refund", "args": {"amountMinor": 4200}, "argsMatch": "exact"},
        ],
    }
    task = {
        "taskId": "oi-task",
        "input": {},
        "expected": {
            "kind": "golden",
            "match": {"strategy": "exact", "value": "refund approved"},
            "trajectory": trajectory,
        },
    }
    suite = _suite(tmp_path, task)
    events = tmp_path / "events.jsonl"
    code, summary, _ = _import(str(traces), "--suite", str(suite), "--events-out", str(events))
    oi = _tasks(summary)["oi-task"]
    assert oi["trials"]["n"] == 2
    assert oi["trajectory"]["matched"] is True  # the delegate's call counts (includeDelegates)
    log = [json.loads(line) for line in events.read_text().splitlines()]
    returned = [e["payload"] for e in log if e["type"] == "agent.tool-returned"]
    refunds = [r for r in returned if r["toolName"] == "billing:refund"]
    assert [r["status"] for r in refunds] == ["ok", "error"]  # an error status is a tool error
    assert refunds[1]["error"]["message"] == "card declined"
    called = [e["payload"] for e in log if e["type"] == "agent.tool-called"]
    assert {c["agentId"] for c in called if c["toolName"] == "billing:refund"} == {
        f"{AGENT}.helper"
    }
    # protobuf: the SDK's own OTLP protobuf encoding of the same spans grades the same
    pb = tmp_path / "oi.pb"
    pb.write_bytes(encode_spans(spans).SerializeToString())
    code_pb, summary_pb, _ = _import(str(pb), "--suite", str(suite))
    assert (code_pb, summary_pb) == (code, summary)
    # without includeDelegates the delegate's refund is not the target agent's
    trajectory["includeDelegates"] = False
    code, summary, _ = _import(str(traces), "--suite", str(_suite(tmp_path, task)))
    assert _tasks(summary)["oi-task"]["trajectory"]["matched"] is False


def test_import_otlp_refuses_input_that_is_not_otlp(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"resourceSpans": []}\nnot json\n')
    suite = _suite(tmp_path, _task("t", "ignore"))
    result = CliRunner().invoke(app, ["import-otlp", str(bad), "--suite", str(suite)])
    assert result.exit_code == 2
    assert "line 2: not JSON" in result.output


async def test_import_otlp_reads_back_wopeval_s_own_export(
    store: EventStore, tmp_path: Path
) -> None:
    """The task ids and trial indexes come from the attributes ``export --format otel`` writes."""
    from tests.engine.helpers import make_suite, run_suite, scripted_task
    from wopeval.exports.otel import otlp_json_lines
    from wopeval.suite import suite_to_document

    calls = [{"tool": "crm:lookup", "args": {"q": 1}}, {"tool": "crm:refund"}]
    trajectory = {
        "kind": "trajectory",
        "trajectory": {"match": "exact", "calls": [{"tool": "crm:lookup"}, {"tool": "crm:refund"}]},
    }
    script = {"calls": calls, "trials": {"1": {"calls": calls[:1]}}}
    suite = make_suite([scripted_task("path", script, trajectory)], trials={"count": 2})
    ran = await run_suite(store, suite)
    traces = tmp_path / "export.jsonl"
    traces.write_text(otlp_json_lines(suite.suiteId, ran.run_id, ran.events))
    suite_path = tmp_path / "suite.json"
    suite_path.write_text(json.dumps(suite_to_document(suite)))
    result = CliRunner().invoke(
        app,
        [
            "import-otlp",
            str(traces),
            "--suite",
            str(suite_path),
            "--agent",
            "core.conformance.agents.scripted",
            "--json",
        ],
    )
    imported = json.loads(result.stdout.splitlines()[-1])
    stored, again = ran.done.tasks[0], imported["tasks"][0]
    assert stored.trials is not None
    assert stored.trajectory is not None
    assert again["trials"] == stored.trials.model_dump()
    assert again["trials"]["passedCount"] == 1  # trial 1 made only the first call
    assert again["trajectory"] == stored.trajectory.model_dump()


def _indexed_traces(path: Path, indices: list[int | None]) -> None:
    """One OpenInference agent trace per entry; ``None`` leaves the trial index out."""
    provider = TracerProvider(resource=Resource.create({"openwop.eval.task_id": "t"}))
    provider.add_span_processor(SimpleSpanProcessor(FileSpanExporter(path)))
    tracer = provider.get_tracer("openinference.test")
    for index in indices:
        attributes: dict[str, Any] = {"openinference.span.kind": "AGENT", "output.value": "ok"}
        if index is not None:
            attributes["openwop.eval.trial_index"] = index
        with tracer.start_as_current_span("support", attributes=attributes):
            pass
    provider.shutdown()


def test_import_otlp_refuses_two_traces_claiming_one_trial(tmp_path: Path) -> None:
    traces = tmp_path / "dup.jsonl"
    _indexed_traces(traces, [0, 0])
    suite = _suite(tmp_path, _task("t", "ignore"))
    result = CliRunner().invoke(app, ["import-otlp", str(traces), "--suite", str(suite)])
    assert result.exit_code == 2, result.output
    assert "both claim trial 0 of task 't'" in " ".join(result.output.split())


def test_import_otlp_numbers_unindexed_traces_after_the_indexed_ones(tmp_path: Path) -> None:
    """A trace without an index never lands on a trial another trace names."""
    traces = tmp_path / "mixed.jsonl"
    _indexed_traces(traces, [None, 0])
    suite = _suite(tmp_path, _task("t", "ignore"))
    events = tmp_path / "events.jsonl"
    code, summary, output = _import(str(traces), "--suite", str(suite), "--events-out", str(events))
    assert code in (0, 1), output
    assert summary, output
    assert _tasks(summary)["t"]["trials"]["n"] == 2
    log = [json.loads(line) for line in events.read_text().splitlines()]
    scored = sorted(e["payload"]["trialIndex"] for e in log if e["type"] == "eval.scored")
    assert scored == [0, 1]


def test_import_otlp_grades_each_trace_on_its_own_events(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Linear in the number of traces: a trial is graded on its own events, never on the log
    converted so far (which made 10,000 traces take more than 15 minutes)."""
    from wopeval.service import otlp_score

    seen: list[int] = []
    collect = collect_trials

    def counting(events: Sequence[RunEvent]) -> Any:
        seen.append(len(events))
        return collect(events)

    monkeypatch.setattr(otlp_score, "collect_trials", counting)
    traces = tmp_path / "many.jsonl"
    _indexed_traces(traces, list(range(40)))
    suite = _suite(tmp_path, _task("t", "ignore"))
    doc = yaml.safe_load(suite.read_text())
    suite.write_text(yaml.safe_dump({**doc, "trials": {"count": 40}}))
    code, summary, output = _import(str(traces), "--suite", str(suite))
    assert code in (0, 1), output
    assert _tasks(summary)["t"]["trials"]["n"] == 40
    assert len(seen) == 40
    assert max(seen) == min(seen) <= 4  # a trace's own events: invocation, output, end


def test_import_otlp_names_an_unwritable_events_out_and_a_missing_file(tmp_path: Path) -> None:
    traces = tmp_path / "traces.jsonl"
    _indexed_traces(traces, [0])
    suite = _suite(tmp_path, _task("t", "ignore"))
    args = ["import-otlp", str(traces), "--suite", str(suite), "--events-out", str(tmp_path)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "--events-out: cannot write" in result.output
    missing = CliRunner().invoke(
        app, ["import-otlp", str(tmp_path / "no.jsonl"), "--suite", str(suite)]
    )
    assert missing.exit_code == 2
    assert "unreadable traces" in missing.output


def test_import_otlp_takes_a_batch_exported_twice_as_once(tmp_path: Path) -> None:
    """An exporter's retry repeats a request: the copies of a span are one span (the last
    copy stands for its id), so the trials are those of one copy."""
    once = tmp_path / "once.jsonl"
    _indexed_traces(once, [0, 1])
    twice = tmp_path / "twice.jsonl"
    twice.write_text(once.read_text() * 2)
    suite = _suite(tmp_path, _task("t", "ignore"))
    assert (
        _import(str(once), "--suite", str(suite))[:2]
        == _import(str(twice), "--suite", str(suite))[:2]
    )


def test_import_otlp_reads_odd_but_valid_input(tmp_path: Path) -> None:
    """Lone CR line breaks (as ``str.splitlines`` reads them), a start time past 2**63 (the
    field is an unsigned 64-bit integer), and a loop of repeated ids, which ends."""
    lines = tmp_path / "lf.jsonl"
    _indexed_traces(lines, [0, 1])
    suite = _suite(tmp_path, _task("t", "ignore"))
    expected = _import(str(lines), "--suite", str(suite))[:2]
    cr = tmp_path / "cr.jsonl"
    cr.write_bytes(lines.read_bytes().replace(b"\n", b"\r"))
    assert _import(str(cr), "--suite", str(suite))[:2] == expected
    late = tmp_path / "late.jsonl"
    doc = json.loads(lines.read_text().splitlines()[0])
    span = doc["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    span["startTimeUnixNano"], span["endTimeUnixNano"] = str(2**63), str(2**63 + 5)
    late.write_text(json.dumps(doc) + "\n")
    code, summary, output = _import(str(late), "--suite", str(suite))
    assert code == 1, output  # one of two trials ran: graded, not refused
    assert _tasks(summary)["t"]["trials"]["n"] == 2
    looping = Path(__file__).parent / "data" / "otlp-repeated-id-loop.jsonl"
    code, summary, output = _import(
        str(looping), "--suite", str(_suite(tmp_path, _task("t1", "ignore")))
    )
    assert code in (0, 1), output
    assert summary


def test_import_otlp_blames_the_right_file(tmp_path: Path) -> None:
    traces = tmp_path / "traces.jsonl"
    _indexed_traces(traces, [0])
    suite = _suite(tmp_path, _task("t", "ignore"))
    full = CliRunner().invoke(
        app, ["import-otlp", str(traces), "--suite", str(suite), "--events-out", "/dev/full"]
    )
    assert full.exit_code == 2
    assert "--events-out: cannot write /dev/full" in " ".join(full.output.split())
    same = CliRunner().invoke(
        app, ["import-otlp", str(traces), "--suite", str(suite), "--events-out", str(traces)]
    )
    assert same.exit_code == 2
    assert "is the input file" in " ".join(same.output.split())
    binary = tmp_path / "binary.jsonl"
    binary.write_bytes(b'{"resourceSpans": []}\n\xff\xfe\n')
    bad = CliRunner().invoke(app, ["import-otlp", str(binary), "--suite", str(suite)])
    assert bad.exit_code == 2
    assert "line 2: not UTF-8" in bad.output
