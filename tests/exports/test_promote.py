"""``wopeval promote``: a stored trial (SQLite and PostgreSQL) written as a suite task that replays
it; a passing trial passes under replay, a promoted failure fails the same way every time."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.engine.helpers import make_suite, run_suite
from tests.exports.promote_helpers import (
    AGENT,
    HOSTILE,
    LOOKUP,
    ORDERS,
    REFUND,
    acli,
    promoted,
    reasons,
    replay,
    stored_run,
)
from wopeval.events.store import EventStore
from wopeval.suite import load_suite, parse_suite

REPLAYS = 5


async def _promote(store_url: str, tmp_path: Path, run_id: str, *args: str) -> dict[str, Any]:
    out = tmp_path / "promoted.yaml"
    code, said = await acli("promote", run_id, "--store", store_url, "-o", str(out), *args)
    assert code == 0, said
    load_suite(out)  # valid: the schema and the RFC 0244 rules
    return promoted(out)


async def test_0244_D_a_promoted_passing_trial_passes_under_replay_with_no_live_tool(
    store: EventStore, store_url: str, tmp_path: Path
) -> None:
    ran = await stored_run(store)
    doc = await _promote(store_url, tmp_path, ran.run_id, "--task", "damaged", "--trial", "0")
    assert doc["suiteId"] == "core.test.evals.engine-promoted"
    assert doc["targetAgentId"] == AGENT
    [task] = doc["tasks"]
    assert task["taskId"] == "damaged-trial-0"
    assert task["input"] == {"orderId": "A-1"}
    assert task["fixtures"] == {
        "onMiss": "fail",
        "toolResponses": [
            {"tool": LOOKUP, "args": {"orderId": "A-1"}, "argsMatch": "exact",
             "response": ORDERS["A-1"]},
            {"tool": REFUND, "args": {"orderId": "A-1", "amountMinor": 4200},
             "argsMatch": "exact", "response": {"refundId": "R-A-1", "echo": None}},
        ],
    }  # fmt: skip
    expected = task["expected"]
    assert expected["trajectory"] == {
        "match": "exact",
        "calls": [
            {"tool": LOOKUP, "args": {"orderId": "A-1"}, "argsMatch": "exact"},
            {"tool": REFUND, "args": {"orderId": "A-1", "amountMinor": 4200}, "argsMatch": "exact"},
        ],
    }
    # the original output expectation is kept: the task's input did not change
    assert expected["kind"] == "golden"
    assert expected["match"] == {
        "strategy": "exact",
        "value": {"refunded": "R-A-1", "note": "box crushed"},
    }
    again = await replay(store, doc)
    assert again.done.passed is True
    assert again.done.tasks[0].trajectory is not None
    assert again.done.tasks[0].trajectory.matched is True
    served = [e.payload.get("x-wopeval-fixture") for e in again.of_type("agent.tool-returned")]
    assert served == ["served", "served"]  # no live tool was registered, none was needed


async def test_0244_A_a_promoted_failure_with_forbid_call_fails_the_same_way_every_time(
    store: EventStore, store_url: str, tmp_path: Path
) -> None:
    ran = await stored_run(store)
    original = [r for r in reasons(ran) if r.taskId == "late"]
    assert [r.kind for r in original] == ["trajectory"]
    args = ("--task", "late", "--trial", "0", "--forbid-call", "1")
    doc = await _promote(store_url, tmp_path, ran.run_id, *args)
    trajectory = doc["tasks"][0]["expected"]["trajectory"]
    assert trajectory["forbidden"] == [REFUND]
    assert [c["tool"] for c in trajectory["calls"]] == [LOOKUP]
    seen = set()
    for _ in range(REPLAYS):
        again = await replay(store, doc)
        assert again.done.passed is False
        [reason] = reasons(again)
        seen.add((reason.kind, reason.message))
    assert seen == {("trajectory", f"forbidden tool {REFUND}")}


async def test_a_promoted_wrong_argument_kept_as_failure_fails_the_same_way_every_time(
    store: EventStore, store_url: str, tmp_path: Path
) -> None:
    ran = await stored_run(store)
    [original] = [r for r in reasons(ran) if r.taskId == "text-price"]
    args = ("--task", "text-price", "--trial", "0", "--as-failure")
    doc = await _promote(store_url, tmp_path, ran.run_id, *args)
    assert doc["tasks"][0]["expected"] == {
        "kind": "trajectory",
        "trajectory": {
            "match": "in-order",
            "calls": [
                {"tool": LOOKUP},
                {"tool": REFUND, "args": {"amountMinor": 4200}, "argsMatch": "subset"},
            ],
        },
    }
    seen = set()
    for _ in range(REPLAYS):
        [reason] = reasons(await replay(store, doc))
        seen.add((reason.kind, reason.message))
    assert seen == {(original.kind, original.message)}
    assert 'amountMinor: expected 4200, got "4200"' in original.message


async def test_hostile_text_round_trips_to_a_valid_suite_in_yaml_and_json(
    store: EventStore, store_url: str, tmp_path: Path
) -> None:
    """Newlines, YAML-significant characters, a tag, unicode, C0/C1 controls and a line
    separator in arguments, results and the output: read back exactly, and replayed."""
    ran = await stored_run(store)
    for suffix in ("yaml", "json"):
        out = tmp_path / f"p.{suffix}"
        args = ("--task", "hostile", "--trial", "0", "--expect-output", "-o", str(out))
        code, said = await acli("promote", ran.run_id, "--store", store_url, *args)
        assert code == 0, said
        code, checked = await acli("validate", str(out))
        assert code == 0, checked
        doc = promoted(out)
        [task] = doc["tasks"]
        assert task["input"]["memo"] == HOSTILE
        lookup, refund = task["fixtures"]["toolResponses"]
        assert lookup["response"]["note"] == HOSTILE
        assert refund["args"]["memo"] == HOSTILE
        assert refund["response"] == {"refundId": "R-A-4", "echo": HOSTILE}
        assert task["expected"]["match"] == {
            "strategy": "exact",
            "value": {"refunded": "R-A-4", "note": HOSTILE},
        }
        assert (await replay(store, doc)).done.passed is True
    text = (tmp_path / "p.yaml").read_text(encoding="utf-8")
    assert text.startswith("# Promoted by wopeval from run ")


async def test_promote_json_says_what_was_written_and_text_fits_80_columns(
    store: EventStore, store_url: str, tmp_path: Path
) -> None:
    ran = await stored_run(store)
    out = tmp_path / "late.json"
    base = ("promote", ran.run_id, "--store", store_url, "--task", "late", "--trial", "0")
    code, said = await acli(*base, "--forbid-call", "1", "-o", str(out), "--json")
    assert code == 0, said
    assert json.loads(said) == {
        "output": str(out),
        "suiteId": "core.test.evals.engine-promoted",
        "taskId": "late-trial-0",
        "passed": False,
        "failureKind": "trajectory",
        "calls": 2,
        "toolResponses": 2,
        "toolErrors": 0,
        "forbidden": REFUND,
    }
    assert json.loads(out.read_text())["tasks"][0]["taskId"] == "late-trial-0"
    code, text = await acli(*base, "-o", str(tmp_path / "late.yaml"), "--task-id", "late-a")
    assert code == 0, text
    assert text.splitlines()[0] == "late-a: from a trial that failed (trajectory)"
    *lines, wrote = text.splitlines()
    assert max(len(line) for line in lines) <= 80
    assert wrote == f"wrote {tmp_path / 'late.yaml'}"  # a path is as long as it is
    code, text = await acli(*base)  # no -o: the suite on stdout
    assert code == 0, text
    assert text.startswith("# Promoted by wopeval")
    code, said = await acli(*base, "--json")  # no -o: the suite in what it says
    assert code == 0, said
    doc = json.loads(said)
    assert doc["output"] is None
    assert doc["suite"]["tasks"][0]["taskId"] == "late-trial-0"


async def test_the_plainest_trial_promotes_to_a_task_with_no_calls(
    store: EventStore, store_url: str, tmp_path: Path
) -> None:
    """One task, one trial, no fixtures, no trajectory, no tool call: an empty exact path."""
    golden = {"kind": "golden", "match": {"strategy": "exact", "value": "hi"}}
    ran = await run_suite(store, make_suite([{"taskId": "t", "input": {"output": "hi"},
                                              "expected": golden}]))  # fmt: skip
    doc = await _promote(store_url, tmp_path, ran.run_id, "--task", "t", "--trial", "0")
    [task] = doc["tasks"]
    assert task["expected"] == {**golden, "trajectory": {"match": "exact", "calls": []}}
    assert task["fixtures"] == {"onMiss": "fail", "toolResponses": []}
    again = await run_suite(store, parse_suite(doc))
    assert again.done.passed is True
