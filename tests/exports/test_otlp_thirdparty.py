"""Traces from third-party instrumentation, graded honestly by ``import-otlp`` and
``POST /v1/traces``: real spans (``otlp_thirdparty/``, README there) of one episode in which the
model calls ``lookup_order`` and ``issue_refund`` in parallel, both with ``order_id A-100``.

For each instrumentation, with and without content capture, in OTLP/JSON and protobuf: the
path passes (``refund``: names and arguments; ``names``: names only), ``issue_refund``
forbidden fails, a wrong argument fails; where the trace leaves out what a task grades it is
``unscored`` with the reason (RFC 0244 §A grading; fail closed).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from typer.testing import CliRunner

from tests.host.helpers import KEY_A, auth, host_config, running_host, segment
from tests.host.test_create_refusals import refused
from wopeval.cli.app import app

DATA = Path(__file__).parent / "otlp_thirdparty"
SUITE_ID = "core.test.evals.thirdparty"
TASKS = ("refund", "names", "no-refund", "wrong-order")
P, F, U = "passed", "failed", "unscored"
_FULL = (P, P, F, F)
# Per variant, per task in TASKS. Without content: a model span that reports tool calls and
# names none, with no tool span (a plain openai loop), leaves every trajectory task unscored;
# tool spans without arguments grade names (and forbidden) but leave arguments unscored, and
# tools run in parallel under model spans that name no call leave the path's order unscored.
EXPECTED: dict[str, tuple[str, str, str, str]] = {
    "openai_v2_content": _FULL,
    "openai_v2_nocontent": (U, U, U, U),
    "openai_v2_events_content": (U, U, U, U),  # the content went to log events
    "openai_v2_tools_content": _FULL,
    "openai_v2_tools_nocontent": (U, P, F, U),
    "traceloop_content": _FULL,
    "traceloop_nocontent": (U, U, U, U),
    "oi_openai_content": _FULL,
    "oi_openai_nocontent": (U, U, U, U),
    "oi_agents_content": _FULL,
    "oi_agents_nocontent": (U, U, F, U),
    "oi_langchain_content": _FULL,
    "oi_langchain_nocontent": (U, U, F, U),
    "pydantic_ai_content": _FULL,
    "pydantic_ai_nocontent": (U, P, F, U),
}
# No tool span, and chat spans that report tool calls without naming them.
BLIND = ("openai_v2_nocontent", "openai_v2_events_content", "oi_openai_nocontent",
         "traceloop_nocontent")  # fmt: skip
# Their tools ran in parallel and the model spans name no call: the model's order is not said.
UNORDERED = ("oi_agents_nocontent", "oi_langchain_nocontent")


def suite_doc() -> dict[str, Any]:
    args = {"order_id": "A-100"}

    def task(task_id: str, trajectory: dict[str, Any]) -> dict[str, Any]:
        expected = {"kind": "trajectory", "trajectory": trajectory}
        return {"taskId": task_id, "input": {}, "expected": expected}

    return {
        "suiteId": SUITE_ID,
        "version": "1.0.0",
        "modes": ["golden"],
        "targetAgentId": "support.agent",
        "tasks": [
            task("refund", {"match": "exact", "calls": [
                {"tool": "lookup_order", "args": args, "argsMatch": "exact"},
                {"tool": "issue_refund", "args": args, "argsMatch": "exact"},
            ]}),
            task("names", {"match": "exact", "calls": [
                {"tool": "lookup_order"}, {"tool": "issue_refund"},
            ]}),
            task("no-refund", {"match": "in-order", "calls": [], "forbidden": ["issue_refund"]}),
            task("wrong-order", {"match": "in-order", "calls": [
                {"tool": "lookup_order", "args": {"order_id": "B-200"}, "argsMatch": "exact"},
            ]}),
        ],
    }  # fmt: skip


@pytest.fixture
def suite_path(tmp_path: Path) -> Path:
    path = tmp_path / "suites" / "thirdparty.yaml"
    path.parent.mkdir()
    path.write_text(yaml.safe_dump(suite_doc()))
    return path


def _graded(events: list[dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    """The one trial's outcome (passed / failed / unscored) and its reason's details."""
    scored = [e["payload"] for e in events if e["type"] == "eval.scored"]
    failed = [e["payload"] for e in events if e["type"] == "wopeval.trial-failed"]
    assert len(scored) == 1, scored
    label = U if scored[0].get("scoreLabel") == U else P if scored[0]["passed"] else F
    if label == U:
        assert failed
        assert failed[0]["message"].startswith("unscored: "), failed
    return label, (failed[0].get("details") or {}) if failed else {}


def _check_reason(variant: str, task: str, label: str, details: dict[str, Any]) -> None:
    if label != U:
        return
    if variant in BLIND:
        assert details == {"blindModelSpans": 1}  # the chat span that issued both calls
    elif variant in UNORDERED and task in ("refund", "names"):  # two calls, in order
        assert details == {"unorderedCalls": 2}
    else:
        assert set(details["missingArguments"]) == {"lookup_order", "issue_refund"}


@pytest.mark.parametrize("ext", ["jsonl", "pb"])
@pytest.mark.parametrize("variant", sorted(EXPECTED))
def test_0244_A_import_otlp_grades_third_party_traces_closed(
    variant: str, ext: str, suite_path: Path, tmp_path: Path
) -> None:
    traces = DATA / f"{variant}.{ext}"
    for task, expected in zip(TASKS, EXPECTED[variant], strict=True):
        events_out = tmp_path / f"{task}.jsonl"
        args = ["import-otlp", str(traces), "--suite", str(suite_path), "--map", f"*={task}"]
        result = CliRunner().invoke(app, [*args, "--events-out", str(events_out), "--json"])
        assert result.exit_code == 1, result.output  # the other tasks have no trial: not run
        summary = json.loads(result.stdout.splitlines()[-1])
        graded = next(t for t in summary["tasks"] if t["taskId"] == task)
        events = [json.loads(line) for line in events_out.read_text().splitlines()]
        label, details = _graded(events)
        assert (task, label) == (task, expected)
        assert graded["passed"] is (expected == P)
        _check_reason(variant, task, label, details)


def test_0244_A_forbidden_call_found_only_in_a_model_span_fails_the_task(
    suite_path: Path, tmp_path: Path
) -> None:
    """The plainest fail-open shape: no tool span, the call only in the model's output; the
    converted log has both calls, in the model's order, as the target agent's."""
    events_out = tmp_path / "events.jsonl"
    args = ["import-otlp", str(DATA / "openai_v2_content.jsonl"), "--suite", str(suite_path)]
    args += ["--map", "*=no-refund", "--events-out", str(events_out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1, result.output
    log = [json.loads(line) for line in events_out.read_text().splitlines()]
    called = [e["payload"] for e in log if e["type"] == "agent.tool-called"]
    assert [(c["toolName"], c["inputs"], c["agentId"]) for c in called] == [
        ("lookup_order", {"order_id": "A-100"}, "support.agent"),
        ("issue_refund", {"order_id": "A-100"}, "support.agent"),
    ]


def test_import_otlp_refuses_more_traces_than_trials_when_each_trace_was_taken_as_one(
    suite_path: Path,
) -> None:
    """A loop with no span around its episode: each chat call is its own trace. Two traces for
    a one-trial suite are refused (exit 2), never graded as two trials of which one is kept."""
    traces = DATA / "openai_v2_noroot_content.jsonl"
    args = ["import-otlp", str(traces), "--suite", str(suite_path), "--map", "*=no-refund"]
    result = CliRunner().invoke(app, [*args, "--json"])
    assert result.exit_code == 2, result.output
    assert "more traces than trials (2 for 'no-refund'" in result.output
    assert "openwop.eval.trial_index" in result.output


def _with_task(path: Path, task: str | None, trial: int | None = None) -> bytes:
    """The vendored file with the task id (and a trial index) as resource attributes (the
    traces carry none), as one request."""
    if path.suffix == ".pb":
        request = ExportTraceServiceRequest()
        request.ParseFromString(path.read_bytes())
        for resource_spans in request.resource_spans:
            attributes = resource_spans.resource.attributes
            if task is not None:
                value = AnyValue(string_value=task)
                attributes.append(KeyValue(key="openwop.eval.task_id", value=value))
            if trial is not None:
                index = AnyValue(int_value=trial)
                attributes.append(KeyValue(key="openwop.eval.trial_index", value=index))
        data: bytes = request.SerializeToString()
        return data
    lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    merged: dict[str, Any] = {"resourceSpans": []}
    for line in lines:
        for resource_spans in line["resourceSpans"]:
            attrs = resource_spans.setdefault("resource", {}).setdefault("attributes", [])
            if task is not None:
                attrs.append({"key": "openwop.eval.task_id", "value": {"stringValue": task}})
            if trial is not None:
                number = {"key": "openwop.eval.trial_index", "value": {"intValue": str(trial)}}
                attrs.append(number)
            merged["resourceSpans"].append(resource_spans)
    return json.dumps(merged).encode()


@pytest.mark.parametrize("ext", ["jsonl", "pb"])
def test_0244_B_traces_that_name_one_trial_are_graded_as_that_trial(
    ext: str, suite_path: Path, tmp_path: Path
) -> None:
    """The loop with no span around its episode, each trace carrying the trial's attributes:
    its two traces are one trial, graded on both (the calls are in the first, the answer in
    the second)."""
    source = DATA / f"openai_v2_noroot_content.{ext}"
    for task, expected in (("refund", 0), ("no-refund", 1), ("wrong-order", 1)):
        traces = tmp_path / f"{task}.{ext}"
        traces.write_bytes(_with_task(source, task, trial=0))
        events_out = tmp_path / f"{task}.events.jsonl"
        args = ["import-otlp", str(traces), "--suite", str(suite_path)]
        result = CliRunner().invoke(app, [*args, "--events-out", str(events_out), "--json"])
        assert result.exit_code == 1, result.output  # the suite's other tasks: not run
        events = [json.loads(line) for line in events_out.read_text().splitlines()]
        label, _ = _graded(events)
        assert (task, label) == (task, (P, F)[expected])
        usage = [e for e in events if e["type"] == "provider.usage"]
        assert len(usage) == 2  # both chat spans, one trial


def _media(path: Path) -> str:
    return "application/x-protobuf" if path.suffix == ".pb" else "application/json"


async def test_0244_A_post_traces_grades_third_party_traces_closed(
    store_url: str, suite_path: Path
) -> None:
    config = host_config(suiteDirectories=[str(suite_path.parent)])
    headers = {**auth(KEY_A), "X-Wopeval-Suite": f"suite://{SUITE_ID}@1.0.0"}
    async with running_host(store_url, config) as host:
        for variant, expected in sorted(EXPECTED.items()):
            for ext in ("jsonl", "pb"):
                path = DATA / f"{variant}.{ext}"
                for task in ("refund", "no-refund", "wrong-order"):
                    body = _with_task(path, task)
                    answer = await host.client.post(
                        "/v1/traces", content=body,
                        headers={**headers, "Content-Type": _media(path)},
                    )  # fmt: skip
                    assert answer.status_code == 200, (variant, ext, answer.text)
                    run_id = answer.headers["OpenWOP-Run-Id"]
                    stored = await host.state.store.events(run_id)
                    events = [{"type": e.type, "payload": e.payload} for e in stored]
                    label, details = _graded(events)
                    assert (variant, ext, task, label) == (
                        variant, ext, task, expected[TASKS.index(task)],
                    )  # fmt: skip
                    _check_reason(variant, task, label, details)
                    summary = await host.get(f"/runs/{segment(run_id)}/eval-summary")
                    graded = next(t for t in summary.json()["tasks"] if t["taskId"] == task)
                    assert graded["passed"] is (label == P)


async def test_post_traces_refuses_traces_of_no_task_and_stores_nothing(
    store_url: str, suite_path: Path
) -> None:
    config = host_config(suiteDirectories=[str(suite_path.parent)])
    headers = {**auth(KEY_A), "X-Wopeval-Suite": f"suite://{SUITE_ID}@1.0.0"}
    async with running_host(store_url, config) as host:
        before = (await host.get("/runs")).json()
        for ext in ("jsonl", "pb"):
            path = DATA / f"openai_v2_content.{ext}"
            answer = await host.client.post(
                "/v1/traces", content=_with_task(path, None),
                headers={**headers, "Content-Type": _media(path)},
            )  # fmt: skip
            details = refused(answer, 400, "validation_error", "openwop.eval.task_id")
            assert details["rejectedSpans"] == 3
            assert "1 trace(s) naming no task" in answer.json()["message"]
        after = (await host.get("/runs")).json()
    assert after == before  # no run stored
