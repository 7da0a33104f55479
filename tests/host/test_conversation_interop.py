"""A suite with a scripted user and a world, run over HTTP on a real socket and driven by the
unmodified PyPI ``openwop-client`` (issue 33 §5).

A host that advertises ``x-wopeval-user`` and ``x-wopeval-world`` runs it: the summary carries
``x-wopeval-userSide`` and each world task's state-matched counts (never the state, never a
message); the log carries the user turns and the final states. A host that advertises neither
refuses it with ``400 validation_error`` naming each member (RFC 0244 §G), before any run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from openwop_client import CreateRunRequest, OpenwopClient, WopError

from tests.host.helpers import KEY_A, SCRIPTED, auth, host_config, segment, serving
from tests.host.wire_schemas import validate_event

pytestmark = pytest.mark.slow

REF = "suite://core.wopeval.evals.talk-world"
WORLD = {
    "initial": {"bookings": {"ABC123": {"status": "confirmed"}}},
    "tools": {
        "cancel_booking": [
            {
                "effects": [
                    {"op": "set", "pointer": "/bookings/{/ref}/status", "value": "cancelled"}
                ],
                "result": {"cancelled": {"$arg": "/ref"}},
            }
        ]
    },
}
CANCELLED = {"match": "subset", "state": {"bookings": {"ABC123": {"status": "cancelled"}}}}
USER = {
    "kind": "scripted",
    "replies": [{"when": {"regex": "(?i)reference"}, "reply": "ABC123"}],
}
SECRET = "the-message-that-must-not-leave-the-log"


def _task(task_id: str, calls: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "taskId": task_id,
        "input": {"calls": calls, "output": "done"},
        "expected": {
            "kind": "golden",
            "match": {"strategy": "exact", "value": "done"},
            "x-wopeval-finalState": CANCELLED,
        },
        "x-wopeval-user": USER,
        "x-wopeval-world": WORLD,
    }


ASK = {"ask": "Your booking reference?"}
CANCEL = {"tool": "cancel_booking", "args": {"ref": "ABC123"}}
SUITE = {
    "suiteId": "core.wopeval.evals.talk-world",
    "version": "1.0.0",
    "modes": ["golden"],
    "tasks": [
        _task("cancels", [ASK, CANCEL]),  # passes
        _task("forgets", [ASK]),  # the state stays confirmed: final-state
        _task("rambles", [{"ask": SECRET}, CANCEL]),  # a user miss
    ],
}


def _suites(tmp_path: Path) -> list[str]:
    (tmp_path / "talk-world.json").write_text(json.dumps(SUITE), encoding="utf-8")
    return [str(tmp_path)]


def test_33_5_conversation_and_world_over_http_with_openwop_client(
    store_url: str, tmp_path: Path
) -> None:
    with serving(store_url, host_config(suiteDirectories=_suites(tmp_path))) as server:
        client = OpenwopClient(server.base_url, KEY_A)
        facet = client.discovery_capabilities().families["agents"].facets["evalSuite"]
        created = client.runs_create(
            CreateRunRequest(mode="eval", evalSuiteRef=REF, agentId=SCRIPTED)
        )
        debug = list(client.runs_events(created.runId, stream_mode="debug"))
        sdk_summary = client.runs_eval_summary(created.runId)
        with httpx.Client(base_url=server.base_url, headers=auth(KEY_A)) as raw:
            summary = raw.get(f"/runs/{segment(created.runId)}/eval-summary").json()
    assert {"x-wopeval-user", "x-wopeval-world"} <= set(facet["x-wopeval-extensions"])
    assert debug[-1].type == "run.completed"
    assert sdk_summary is not None
    assert (sdk_summary.taskCount, sdk_summary.passedCount) == (3, 1)
    assert summary["x-wopeval-userSide"] == {
        "trials": 3,
        "passedTrials": 1,
        "userMiss": 1,
        "userError": 0,
        "passRate": pytest.approx(1 / 3),
        "passRateExcludingUserSide": 0.5,
    }
    states = {t["taskId"]: t.get("x-wopeval-finalState") for t in summary["tasks"]}
    assert states == {
        "cancels": {"matched": True, "mismatchCount": 0},
        "forgets": {"matched": False, "mismatchCount": 1},
        "rambles": {"matched": True, "mismatchCount": 0},  # cancelled after the miss
    }
    # The log (the tenant's) carries the turns and the states; the summary and the eval.*
    # events carry neither a message nor a state.
    turns = [e.payload for e in debug if e.type == "wopeval.user-turn"]
    assert sorted((t["kind"], t["turn"]) for t in turns) == [
        ("miss", 0),
        ("reply", 0),
        ("reply", 0),
    ]
    assert sum(1 for e in debug if e.type == "wopeval.world-state") == 3
    assert SECRET in json.dumps([t["message"] for t in turns])
    public = json.dumps([summary, [e.payload for e in debug if e.type.startswith("eval.")]])
    assert SECRET not in public
    assert "confirmed" not in public
    for event in debug:
        if event.type.startswith(("run.", "eval.")):
            validate_event({k: v for k, v in vars(event).items() if v is not None})


@pytest.mark.parametrize(
    ("advertised", "missing"),
    [
        ([], ["x-wopeval-user", "x-wopeval-world"]),
        (["x-wopeval-user"], ["x-wopeval-world"]),
        (["x-wopeval-world"], ["x-wopeval-user"]),
    ],
)
def test_33_1_0244_G_host_not_advertising_refuses_with_openwop_client(
    store_url: str, tmp_path: Path, advertised: list[str], missing: list[str]
) -> None:
    config = host_config(eval_suite={"extensions": advertised}, suiteDirectories=_suites(tmp_path))
    with serving(store_url, config) as server:
        client = OpenwopClient(server.base_url, KEY_A)
        request = CreateRunRequest(mode="eval", evalSuiteRef=REF, agentId=SCRIPTED)
        with pytest.raises(WopError) as refused:
            client.runs_create(request)
    assert refused.value.status == 400
    envelope = refused.value.envelope
    assert envelope is not None
    assert envelope.error == "validation_error"
    assert envelope.details is not None
    # Every use of every member not advertised, each naming its field; the message the first.
    fields = [e["field"] for e in envelope.details["errors"]]
    assert sorted(fields) == sorted(f"tasks[{i}].{m}" for i in range(3) for m in missing)
    assert envelope.details["field"] == fields[0]
    assert envelope.message.startswith(f"{fields[0]}: {fields[0].split('.')[-1]} is not advertised")
