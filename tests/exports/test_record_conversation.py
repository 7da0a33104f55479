"""Record and replay a conversation with a world (issue 33 §5): a live run whose task has a
scripted user, a world and a live tool → ``record`` → a strict replay.

The replay makes zero live calls; the world's calls are not recorded as fixtures (the world,
kept in the suite, answers them again and changes the state as it did); the user turns, the
tool answers, the world's final state and the output are the source's byte for byte; the
stored summary is the source's byte for byte but for ``latencyMs`` (the one wall clock) and
the fixture-miss count of the live calls (served from the recording on replay), and
``grade`` reproduces the replay's stored summary byte for byte.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

from tests.engine.helpers import Ran, make_suite, run_suite
from wopeval.engine.agent import AgentContext, ConversationEnded
from wopeval.engine.registry import Registry
from wopeval.engine.run import RunSettings
from wopeval.events.store import EventStore
from wopeval.exports.record import record_suite
from wopeval.grading.summary import grade_run, summary_of
from wopeval.service.runs import grading_options
from wopeval.suite import parse_suite
from wopeval.wire.events import RunEvent
from wopeval.wire.summary import EvalSummary
from wopeval.wire.vocab import TOOL_RETURNED, USER_TURN, WORLD_STATE

AGENT = "core.test.agents.clerk"
WORLD = {
    "initial": {"bookings": {"ABC123": {"status": "confirmed", "refunds": 0}}},
    "tools": {
        "get_booking": [{"read": "/bookings/{/ref}"}],
        "cancel_booking": [
            {
                "require": [
                    {
                        "pointer": "/bookings/{/ref}/status",
                        "equals": "confirmed",
                        "error": {"code": "not_cancellable", "message": "not confirmed"},
                    }
                ],
                "effects": [
                    {"op": "set", "pointer": "/bookings/{/ref}/status", "value": "cancelled"},
                    {"op": "increment", "pointer": "/bookings/{/ref}/refunds"},
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
TASK = {
    "taskId": "cancel",
    "input": {"queue": "refunds"},
    "expected": {
        "kind": "golden",
        "match": {"strategy": "exact", "value": "cancelled ABC123"},
        "x-wopeval-finalState": {
            "match": "exact",
            "state": {"bookings": {"ABC123": {"status": "cancelled", "refunds": 1}}},
        },
    },
    "fixtures": {"onMiss": "live"},
    "x-wopeval-user": USER,
    "x-wopeval-world": WORLD,
}


class Ledger:
    """The live tool: a new ticket number per call (the replay must serve the recorded one)."""

    def __init__(self) -> None:
        self.calls = 0

    async def ticket(self, args: Any) -> Any:
        self.calls += 1
        return {"ticket": self.calls}


async def clerk(task_input: Any, ctx: AgentContext) -> Any:
    """Asks, reads, takes a ticket, cancels twice (the second a world error), asks again."""
    ref = await ctx.call_tool("get_booking", {"ref": await ctx.ask_user("Your reference?")})
    await ctx.call_tool("py:ticket", {"queue": task_input["queue"]})
    await ctx.call_tool("cancel_booking", {"ref": "ABC123"})
    await ctx.call_tool("cancel_booking", {"ref": "ABC123"})
    with contextlib.suppress(ConversationEnded):
        await ctx.ask_user("Anything else?")
    return "cancelled ABC123" if ref.ok else "lost"


async def _run(store: EventStore, document: dict[str, Any], ledger: Ledger) -> Ran:
    registry = Registry()
    registry.register_agent(AGENT, clerk)
    registry.register_tool("py:ticket", ledger.ticket)
    return await run_suite(
        store,
        parse_suite(document),
        agent_id=AGENT,
        registry=registry,
        settings=RunSettings(concurrency=1),
    )


def _payloads(ran: Ran, kind: str) -> list[str]:
    """The events of one type, their payloads as canonical bytes (ids removed: new per run)."""
    out = []
    for event in ran.of_type(kind):
        payload = {k: v for k, v in event.payload.items() if k not in ("callId", "durationMs")}
        out.append(json.dumps(payload, sort_keys=True))
    return out


def _without_latency(summary: EvalSummary, live_misses: int = 0) -> str:
    """The summary's bytes without ``latencyMs``; ``live_misses``: the source's calls that
    went to the live tool (``onMiss: live``), which its replay serves from the recording."""
    doc = summary.to_wire()
    for task in doc["tasks"]:  # type: ignore[attr-defined]
        task.pop("latencyMs", None)
        task["fixtureMissCount"] -= live_misses
    return json.dumps(doc, sort_keys=True)


async def _regraded(store: EventStore, ran: Ran) -> str:
    record = await store.get_run(ran.run_id)
    assert record is not None
    suite = parse_suite(record.suite_document)
    events: list[RunEvent] = ran.events
    graded = grade_run(suite, events, grading_options(record.run_request))
    return summary_of(suite, graded).to_json()


async def test_33_5_recorded_conversation_with_a_world_replays_byte_identically(
    store: EventStore,
) -> None:
    source_doc = make_suite([TASK], trials={"count": 2}).model_dump(
        mode="json", by_alias=True, exclude_none=True
    )
    live = Ledger()
    source = await _run(store, source_doc, live)
    assert live.calls == 2
    assert source.done.passed  # the world was changed as asserted, in every trial
    record = await store.get_run(source.run_id)
    assert record is not None
    document, recorded = record_suite(record.suite_document, source.events, trial=0)
    entries = document["tasks"][0]["fixtures"]["toolResponses"]
    # Only the live call is a fixture: the world answers its own calls again.
    assert [e["tool"] for e in entries] == ["py:ticket"]
    assert entries[0]["response"] == {"ticket": 1}
    assert recorded[0].calls[0].tool == "py:ticket"
    assert (
        document["tasks"][0]["x-wopeval-world"]
        == record.suite_document["tasks"][0]["x-wopeval-world"]
    )

    replayed = Ledger()
    replay = await _run(store, document, replayed)
    assert replayed.calls == 0  # nothing live
    source_trial_0 = [e for e in source.events if _trial(source, e) == 0]
    assert _payloads(replay, USER_TURN) == 2 * _payloads(Ran("", None, source_trial_0), USER_TURN)
    assert _payloads(replay, WORLD_STATE) == _payloads(source, WORLD_STATE)
    returned = _payloads(Ran("", None, source_trial_0), TOOL_RETURNED)
    assert _payloads(replay, TOOL_RETURNED)[:4] == [_served(r) for r in returned]
    assert [e.payload["decision"] for e in replay.of_type("agent.decided")] == [
        "cancelled ABC123"
    ] * 2
    assert source.done.tasks[0].fixtureMissCount == 2  # one live call a trial …
    assert replay.done.tasks[0].fixtureMissCount == 0  # … served by its recording
    assert _without_latency(replay.done) == _without_latency(source.done, live_misses=2)
    assert await _regraded(store, replay) == replay.done.to_json()
    stored = await store.get_run(replay.run_id)
    assert stored is not None
    assert EvalSummary.model_validate(stored.summary).to_json() == replay.done.to_json()


def _trial(ran: Ran, event: RunEvent) -> int | None:
    roots = {
        e.eventId: e.payload["x-wopeval-trialIndex"]
        for e in ran.events
        if e.type == "agent.invocation-started" and "x-wopeval-trialIndex" in e.payload
    }
    return roots.get(event.causationId or "", roots.get(event.eventId))


def _served(row: str) -> str:
    """The source's live answer as the replay serves it: from the recorded fixture, entry 0."""
    payload = json.loads(row)
    if payload.get("x-wopeval-fixture") in ("live", "miss-live"):
        payload["x-wopeval-fixture"] = "served"
        payload["x-wopeval-fixtureIndex"] = 0
    return json.dumps(payload, sort_keys=True)
