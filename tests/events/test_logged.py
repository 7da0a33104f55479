"""The log as grading reads it (``EventStore.logged_events``): the same events ``events`` gives,
each payload validated by the same model, decoded only when read, a malformed one refused."""

from __future__ import annotations

import json

import pytest

from tests.engine.helpers import make_suite, run_suite, scripted_task
from wopeval.errors import StoreError, WopevalError
from wopeval.events.logged import LoggedEvent, MalformedEventError
from wopeval.events.store import EventStore
from wopeval.wire.events import PAYLOAD_MODELS, RunEvent
from wopeval.wire.vocab import DECIDED, TOOL_CALLED

OK = {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}}
FIXTURED = {"onMiss": "fail", "toolResponses": [{"tool": "kb:a", "response": {"ok": True}}]}


def _logged(type_: str, text: str, sequence: int = 7) -> LoggedEvent:
    return LoggedEvent(sequence, "e", type_, text, "2026-12-05T00:00:00.000Z", None)


async def test_logged_events_are_the_stored_events_with_the_same_typed_payloads(
    store: EventStore,
) -> None:
    # A fixtured call, a missed one, a wrong answer, two trials: every envelope member grading
    # reads and every typed payload equals the RunEvent's, page by page too.
    call, miss = {"tool": "kb:a", "args": {"q": "é"}}, {"tool": "kb:b", "args": {}}
    tasks = [
        scripted_task("fixtured", {"calls": [call, miss], "output": "ok"}, OK, FIXTURED),
        scripted_task("wrong", {"output": "no"}, OK),
    ]
    ran = await run_suite(store, make_suite(tasks, trials={"count": 2}))
    full = await store.events(ran.run_id)
    logged = await store.logged_events(ran.run_id)
    paged = [
        *await store.logged_events(ran.run_id, -1, 5),
        *await store.logged_events(ran.run_id, 4),
    ]
    assert len(logged) == len(full) == len(paged) > 20
    for event, read, again in zip(full, logged, paged, strict=True):
        assert (read.sequence, read.eventId, read.type) == (
            event.sequence,
            event.eventId,
            event.type,
        )
        assert (read.timestamp, read.causationId) == (event.timestamp, event.causationId)
        assert again.sequence == read.sequence
        assert read.typed == event.typed
        assert read.payload == event.payload
    assert {e.type for e in logged} >= {TOOL_CALLED, DECIDED}


async def test_logged_events_after_the_last_sequence_are_empty(store: EventStore) -> None:
    ran = await run_suite(store, make_suite([scripted_task("t", {"output": "ok"}, OK)]))
    last = await store.last_sequence(ran.run_id)
    assert await store.logged_events(ran.run_id, last) == []
    assert len(await store.logged_events(ran.run_id, last - 1)) == 1
    assert await store.logged_events("local/no-such-run") == []


def test_a_type_without_a_model_is_never_validated() -> None:
    # Not JSON at all, under a vendor type: typed is None and nothing is parsed until asked.
    event = _logged("x-vendor.note", "{not json")
    assert event.typed is None
    with pytest.raises(ValueError, match="Expecting property name"):
        event.payload  # noqa: B018 (the property is what is tested)


def test_a_payload_is_decoded_once_and_only_when_read() -> None:
    event = _logged(DECIDED, '{"agentId":"a","decision":{"x":[1,2]}}')
    typed = event.typed
    assert typed is event.typed  # cached
    assert typed == PAYLOAD_MODELS[DECIDED].model_validate(
        {"agentId": "a", "decision": {"x": [1, 2]}}
    )
    assert event.payload is event.payload
    assert event.payload == {"agentId": "a", "decision": {"x": [1, 2]}}
    # Built and its payload read without validating it: only reading `typed` refuses it.
    unread = _logged(DECIDED, '{"decision":"no agentId"}')
    assert unread.payload == {"decision": "no agentId"}
    with pytest.raises(MalformedEventError, match="agentId"):
        unread.typed  # noqa: B018


def test_a_malformed_payload_is_refused_naming_the_event_and_its_model() -> None:
    # Valid JSON that breaks the model (callId missing) and text that is no JSON at all.
    broken = _logged(TOOL_CALLED, '{"agentId":"a","toolName":"kb:a","inputs":{}}', sequence=41)
    with pytest.raises(MalformedEventError, match=r"event 41 \(agent\.tool-called\).*ToolCalled"):
        broken.typed  # noqa: B018
    with pytest.raises(MalformedEventError, match="callId"):
        broken.typed  # noqa: B018 (refused every time, never cached as valid)
    garbled = _logged(DECIDED, '{"agentId":"a","decision":')
    with pytest.raises(MalformedEventError, match=r"event 7 \(agent\.decided\)"):
        garbled.typed  # noqa: B018
    assert issubclass(MalformedEventError, StoreError)
    assert issubclass(MalformedEventError, WopevalError)


def test_a_lone_surrogate_escape_reads_as_runevent_reads_it() -> None:
    # pydantic-core's JSON parser refuses a lone surrogate's escape; the json module reads it.
    text = '{"agentId":"a","decision":"\\ud800 x"}'
    event = _logged(DECIDED, text)
    expected = RunEvent.recorded("e", "r", DECIDED, json.loads(text), "t", 7).typed
    assert event.typed == expected
    assert event.typed.decision == "\ud800 x"  # type: ignore[union-attr]


def test_a_vendor_key_outside_the_hatch_is_refused_as_runevent_refuses_it() -> None:
    text = '{"agentId":"a","decision":"ok","extra":1}'
    with pytest.raises(ValueError, match="not a member of this payload"):
        RunEvent.recorded("e", "r", DECIDED, json.loads(text), "t", 7).typed  # noqa: B018
    with pytest.raises(MalformedEventError, match="not a member of this payload"):
        _logged(DECIDED, text).typed  # noqa: B018
    vendor = _logged(DECIDED, '{"agentId":"a","decision":"ok","x-acme":1}').typed
    assert vendor is not None
    assert vendor.model_extra == {"x-acme": 1}
