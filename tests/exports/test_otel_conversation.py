"""A conversation with a world through the OTLP export and back (issue 33 §5).

The export writes each user turn as a content-free ``wopeval.user_turn`` span event (its number,
kind, reply index and the tool calls before it), marks where the world's final state was recorded
(``wopeval.world_state``, never the state) and which world rule served a call
(``openwop.tool.world_rule``); ``import-otlp`` puts the turns back among the calls. A run of a
suite graded on what a content-free trace carries (paths by tool name, user misses, world misses)
imports to the summary it stored, and ``grade-log`` of the imported log gives it again. A final
state is content: a task asserting one fails closed on import, never passed on what the trace
leaves out.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from wopeval.cli.app import app
from wopeval.exports.otel import otlp_json_lines
from wopeval.wire.events import RunEvent

pytestmark = pytest.mark.slow  # whole runs, exports and imports through the CLI: seconds each

SECRET = "my date of birth is a secret"
WORLD = {
    "initial": {"bookings": {"ABC123": {"status": "confirmed"}}},
    "tools": {
        "get_booking": [{"read": "/bookings/{/ref}"}],
        "cancel_booking": [
            {
                "effects": [
                    {"op": "set", "pointer": "/bookings/{/ref}/status", "value": "cancelled"}
                ],
                "result": {"cancelled": {"$arg": "/ref"}},
            }
        ],
    },
}
USER = {
    "kind": "scripted",
    "order": "keyed",
    "replies": [
        {"when": {"regex": "(?i)reference"}, "reply": "ABC123"},
        {"when": {"literal": "Anything else?"}, "reply": "No.", "stop": True},
    ],
}
PATH = {"match": "in-order", "calls": [{"tool": "get_booking"}, {"tool": "cancel_booking"}]}
ASK = {"ask": "Your booking reference?"}
GET = {"tool": "get_booking", "args": {"ref": "ABC123"}}
CANCEL = {"tool": "cancel_booking", "args": {"ref": "ABC123"}}


def _task(task_id: str, calls: list[dict[str, Any]], **expected: Any) -> dict[str, Any]:
    return {
        "taskId": task_id,
        "input": {"calls": calls, "output": "done"},
        "expected": {"kind": "trajectory", "trajectory": PATH, **expected},
        "x-wopeval-user": USER,
        "x-wopeval-world": WORLD,
    }


def _suite(*tasks: dict[str, Any]) -> dict[str, Any]:
    return {
        "suiteId": "core.wopeval.evals.otel-talk",
        "version": "1.0.0",
        "targetAgentId": "core.conformance.agents.scripted",
        "modes": ["golden"],
        "trials": {"count": 2},
        "tasks": list(tasks),
    }


TALKS = _task("talks", [ASK, GET, CANCEL, {"ask": "Anything else?"}])
MISSES = _task("misses", [ASK, GET, {"ask": SECRET}, CANCEL])  # a user miss, then the path
STRAYS = _task("strays", [ASK, GET, {"tool": "refund", "args": {}}, CANCEL])  # a world miss


def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


@dataclass
class Trip:
    stored: dict[str, Any]  # the run's summary
    imported: dict[str, Any]  # import-otlp's
    regraded: dict[str, Any]  # grade-log's, of the imported log
    events: list[RunEvent]  # the run's log
    exported: Path
    log: Path  # the imported log


def _round_trip(tmp_path: Path, suite: dict[str, Any]) -> Trip:
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(suite), encoding="utf-8")
    store = str(tmp_path / "s.db")
    code, out = _cli("run", str(path), "--store", store, "--json")
    assert code in (0, 1), out
    ran = json.loads(out)
    exported, log = tmp_path / "run.otel.jsonl", tmp_path / "imported.jsonl"
    code, out = _cli("export", ran["runId"], "--format", "otel", "-o", str(exported),
                     "--store", store)  # fmt: skip
    assert code == 0, out
    code, out = _cli("import-otlp", str(exported), "--suite", str(path), "--events-out",
                     str(log), "--json")  # fmt: skip
    assert code in (0, 1), out
    imported = json.loads(out)
    code, out = _cli("grade-log", str(log), "--suite", str(path), "--json")
    assert code in (0, 1), out
    regraded = json.loads(out)
    code, out = _cli("export", ran["runId"], "--format", "events", "--store", store)
    events = [RunEvent.model_validate(json.loads(line)) for line in out.splitlines() if line]
    return Trip(ran["summary"], _summary(imported), _summary(regraded), events, exported, log)


def _summary(doc: dict[str, Any]) -> dict[str, Any]:
    return doc.get("summary", doc)  # type: ignore[no-any-return]


def _graded(summary: dict[str, Any]) -> dict[str, Any]:
    """The summary without ``latencyMs`` (an imported trial's span also covers its scoring)."""
    tasks = [{k: v for k, v in t.items() if k != "latencyMs"} for t in summary["tasks"]]
    return {**summary, "tasks": tasks}


def test_33_5_otlp_round_trip_of_a_conversation_with_a_world_grades_the_same(
    tmp_path: Path,
) -> None:
    trip = _round_trip(tmp_path, _suite(TALKS, MISSES, STRAYS))
    stored = trip.stored
    side = stored["x-wopeval-userSide"]
    assert (side["trials"], side["passedTrials"], side["userMiss"]) == (6, 2, 2)
    by_task = {t["taskId"]: t for t in stored["tasks"]}
    assert by_task["strays"]["fixtureMissCount"] == 2  # the world has no refund: a miss
    assert _graded(trip.imported) == _graded(stored)
    assert _graded(trip.regraded) == _graded(stored)
    # Content-free: not a message, a reply, nor a state is in the export.
    text = trip.exported.read_text(encoding="utf-8")
    for content in (SECRET, "Your booking reference?", "ABC123", "confirmed", 'cancelled"'):
        assert content not in text
    # The turns come back where they were among the calls, kinds and indexes intact.
    assert _turns(trip.events) == _turns(_read(trip.log))


def _read(path: Path) -> list[RunEvent]:
    lines = path.read_text(encoding="utf-8").splitlines()
    return [RunEvent.model_validate(json.loads(line)) for line in lines if line.strip()]


def _turns(events: list[RunEvent]) -> list[list[tuple[Any, ...]]]:
    """Per trial, in log order: each tool call's name and each user turn's facts."""
    roots = [e for e in events if e.type == "agent.invocation-started" and e.causationId is None]
    keyed = sorted(roots, key=lambda e: (e.payload["x-wopeval-taskId"],
                                         e.payload.get("x-wopeval-trialIndex", 0)))  # fmt: skip
    out = []
    for root in keyed:
        mine = [e for e in events if e.causationId == root.eventId]
        out.append([
            ("call", e.payload["toolName"]) if e.type == "agent.tool-called"
            else ("turn", e.payload["turn"], e.payload["kind"], e.payload.get("replyIndex"))
            for e in mine if e.type in ("agent.tool-called", "wopeval.user-turn")
        ])  # fmt: skip
    return out


def test_33_5_a_final_state_is_content_and_fails_closed_on_import(tmp_path: Path) -> None:
    final = {"match": "subset", "state": {"bookings": {"ABC123": {"status": "cancelled"}}}}
    asserted = _task("talks", TALKS["input"]["calls"], **{"x-wopeval-finalState": final})
    trip = _round_trip(tmp_path, _suite(asserted))
    stored, imported = trip.stored, trip.imported
    assert stored["tasks"][0]["x-wopeval-finalState"] == {"matched": True, "mismatchCount": 0}
    assert stored["tasks"][0]["passed"]
    assert imported["tasks"][0]["x-wopeval-finalState"] == {"matched": False, "mismatchCount": 2}
    assert not imported["tasks"][0]["passed"]


def test_33_5_plain_run_exports_no_user_or_world_events(tmp_path: Path) -> None:
    path = {"match": "in-order", "calls": [{"tool": "get_booking"}]}
    plain = {"taskId": "only", "input": {"calls": [GET]},
             "expected": {"kind": "trajectory", "trajectory": path},
             "fixtures": {"toolResponses": [{"tool": "get_booking", "response": {}}]}}  # fmt: skip
    suite = {**_suite(plain), "trials": {"count": 1}}
    trip = _round_trip(tmp_path, suite)
    assert "x-wopeval-userSide" not in trip.stored
    assert _graded(trip.imported) == _graded(trip.stored)
    text = trip.exported.read_text(encoding="utf-8")
    assert "wopeval.user_turn" not in text
    assert "wopeval.world_state" not in text
    assert otlp_json_lines("s", "r", []) == ""
