"""A forked trial's prefix on its own: which call is the recorded one, how each is answered, and
that a divergence fails closed (no live tool reached) naming the call index and the field."""

from __future__ import annotations

from typing import Any

import pytest

from wopeval.engine.fork_prefix import (
    DIVERGED,
    ForkPrefix,
    PrefixCall,
    PrefixGateway,
    divergence,
)
from wopeval.engine.gateway import Served
from wopeval.suite.models import Fixtures
from wopeval.wire.events import FIXTURE_MISS_ERROR_CODE


class Live:
    def __init__(self) -> None:
        self.calls: list[Any] = []

    async def __call__(self, args: Any) -> Any:
        self.calls.append(args)
        return {"live": len(self.calls)}


def _call(tool: str = "t", args: Any = None, **more: Any) -> PrefixCall:
    return PrefixCall(tool=tool, args={"a": 1} if args is None else args, **more)


def _gateway(
    *calls: PrefixCall, fixtures: Fixtures | None = None, live: Live | None = None
) -> PrefixGateway:
    tools = {"t": live or Live(), "u": live or Live()}
    return PrefixGateway(ForkPrefix(tuple(calls), trial_index=3), fixtures, tools)


# --- divergence: a boundary table -----------------------------------------------------------


@pytest.mark.parametrize(
    ("recorded", "tool", "args", "expected"),
    [
        (_call(ok=True), "t", {"a": 1}, None),
        (_call(ok=True), "t", {"a": 1.0}, None),  # the JSON policy: 1 == 1.0
        (_call(ok=True, args={}), "t", {}, None),
        (
            _call(ok=True),
            "u",
            {"a": 1},
            'call 4 of the prefix differs from the recorded call at tool: recorded "t", got "u"',
        ),
        (
            _call(ok=True),
            "t",
            {"a": 2},
            "call 4 of the prefix (t) differs from the recorded call at args.a: recorded 1, got 2",
        ),
        (
            _call(ok=True, args={"a": {"b": [1, 2]}}),
            "t",
            {"a": {"b": [1, 3]}},
            "call 4 of the prefix (t) differs from the recorded call at args.a.b[1]: "
            "recorded 2, got 3",
        ),
        (
            _call(ok=True),
            "t",
            {"a": 1, "z": True},
            "call 4 of the prefix (t) differs from the recorded call at args.z: "
            "recorded nothing, got true",
        ),
        (
            _call(ok=True),
            "t",
            {},
            "call 4 of the prefix (t) differs from the recorded call at args.a: "
            "recorded 1, got nothing",
        ),
        (
            _call(ok=True),
            "t",
            "text",
            'call 4 of the prefix (t) differs from the recorded call at args: recorded {"a": 1}, '
            'got "text"',
        ),
        (
            _call(ok=True),
            "t",
            {"a": "1"},
            "call 4 of the prefix (t) differs from the recorded call at args.a: "
            'recorded 1, got "1"',
        ),
    ],
)
def test_0244_D_fork_divergence_names_the_call_and_the_first_differing_field(
    recorded: PrefixCall, tool: str, args: Any, expected: str | None
) -> None:
    assert divergence(4, recorded, tool, args) == expected


def test_fork_divergence_names_the_first_of_several_differences() -> None:
    recorded = _call(ok=True, args={"a": 1, "b": 2})
    said = divergence(0, recorded, "t", {"a": 9, "b": 8})
    assert said is not None
    assert "at args.a: recorded 1, got 9" in said
    assert "args.b" not in said


# --- the gateway ----------------------------------------------------------------------------


async def _served(gateway: PrefixGateway, tool: str, args: Any) -> Served:
    assert await gateway.admit()
    return await gateway.call(tool, args)


async def test_fork_the_prefix_is_answered_as_recorded_then_calls_go_live() -> None:
    live = Live()
    gateway = _gateway(
        _call(ok=True, outcome={"n": 1}),
        _call(args={"a": 2}, ok=False, error_code="crm.declined", error_message="no"),
        live=live,
    )
    first = await _served(gateway, "t", {"a": 1})
    assert (first.result.ok, first.result.value, first.fixture) == (True, {"n": 1}, "served")
    assert first.result.trust == "untrusted"
    assert first.index is None
    second = await _served(gateway, "t", {"a": 2})
    assert (second.result.ok, second.result.error_code, second.result.error_message) == (
        False,
        "crm.declined",
        "no",
    )
    assert second.fixture == "served"
    assert live.calls == []
    third = await _served(gateway, "t", {"a": 3})  # past the prefix: the usual tools
    assert (third.fixture, third.result.value) == ("live", {"live": 1})
    assert live.calls == [{"a": 3}]
    assert gateway.divergence is None


async def test_fork_an_empty_prefix_goes_live_at_once() -> None:
    live = Live()
    gateway = _gateway(live=live)
    served = await _served(gateway, "t", {"a": 1})
    assert served.fixture == "live"
    assert live.calls == [{"a": 1}]


async def test_0244_D_fork_a_divergence_fails_closed_and_so_does_every_later_call() -> None:
    live = Live()
    gateway = _gateway(_call(ok=True, outcome=1), _call(ok=True, outcome=2), live=live)
    await _served(gateway, "t", {"a": 1})
    missed = await _served(gateway, "u", {"a": 1})
    assert missed.fixture == "miss-failed"
    assert missed.result.ok is False
    assert missed.result.error_code == FIXTURE_MISS_ERROR_CODE
    assert missed.result.error_message == (
        'call 1 of the prefix differs from the recorded call at tool: recorded "t", got "u"'
    )
    assert gateway.divergence is not None
    assert gateway.divergence.exceptionType == DIVERGED
    assert gateway.divergence.message == missed.result.error_message
    for args in ({"a": 1}, {"a": 5}):  # past the prefix too: never live once it diverged
        later = await _served(gateway, "t", args)
        assert later.fixture == "miss-failed"
        assert later.result.error_code == FIXTURE_MISS_ERROR_CODE
        assert later.result.error_message == (
            "the trial already left its forked prefix: " + (missed.result.error_message or "")
        )
    assert live.calls == []


async def test_fork_a_recorded_miss_is_served_as_the_same_miss() -> None:
    gateway = _gateway(_call(ok=False, missed=True, error_message="no fixture, recorded"))
    served = await _served(gateway, "t", {"a": 1})
    assert served.fixture == "miss-failed"
    assert served.result.error_code == FIXTURE_MISS_ERROR_CODE
    assert served.result.error_message == "no fixture, recorded"
    assert gateway.divergence is None
    bare = _gateway(_call(ok=False, missed=True))
    served = await _served(bare, "t", {"a": 1})
    assert served.result.error_message == "no unconsumed fixture matches this call"


async def test_fork_a_recorded_error_without_code_or_message_is_still_an_error() -> None:
    gateway = _gateway(_call(ok=False))
    served = await _served(gateway, "t", {"a": 1})
    assert served.result.ok is False
    assert served.result.error_code == "error"
    assert served.result.error_message == ""
    assert served.fixture == "served"


async def test_fork_the_prefix_consumes_the_fixture_entries_it_stood_for() -> None:
    fixtures = Fixtures.model_validate(
        {
            "onMiss": "fail",
            "toolResponses": [
                {"tool": "t", "response": "first"},
                {"tool": "t", "response": "second"},
            ],
        }
    )
    gateway = _gateway(_call(ok=True, outcome="first", fixture_index=0), fixtures=fixtures)
    served = await _served(gateway, "t", {"a": 1})
    assert (served.result.value, served.index) == ("first", 0)
    after = await _served(gateway, "t", {"a": 2})
    assert (after.result.value, after.index, after.fixture) == ("second", 1, "served")
    gone = await _served(gateway, "t", {"a": 3})
    assert gone.fixture == "miss-failed"


async def test_fork_a_served_answer_is_a_copy() -> None:
    recorded = {"items": [1]}
    gateway = _gateway(_call(ok=True, outcome=recorded), _call(ok=True, outcome=recorded))
    served = await _served(gateway, "t", {"a": 1})
    served.result.value["items"].append(2)
    assert recorded == {"items": [1]}
    again = await _served(gateway, "t", {"a": 1})
    assert again.result.value == {"items": [1]}


async def test_fork_consume_marks_one_entry_and_ignores_an_index_out_of_range() -> None:
    fixtures = Fixtures.model_validate(
        {"onMiss": "fail", "toolResponses": [{"tool": "t", "response": 1}]}
    )
    kept = _gateway(fixtures=fixtures)
    kept.consume(-1)
    kept.consume(1)
    assert (await _served(kept, "t", None)).fixture == "served"
    used = _gateway(fixtures=fixtures)
    used.consume(0)
    assert (await _served(used, "t", None)).fixture == "miss-failed"


async def test_fork_a_recorded_fixture_error_keeps_its_fixture_index() -> None:
    gateway = _gateway(_call(ok=False, error_code="e", error_message="m", fixture_index=2))
    served = await _served(gateway, "t", {"a": 1})
    assert (served.index, served.duration_ms, served.fixture) == (2, None, "served")


async def test_fork_the_gateway_keeps_the_runs_limits_and_live_shadow_past_the_prefix() -> None:
    """``max_calls`` still caps the trial, and under ``live-shadow`` (fixtures ignored) the
    calls after the prefix reach the live tool although the task has fixtures."""
    fixtures = Fixtures.model_validate(
        {"onMiss": "fail", "toolResponses": [{"tool": "t", "response": "canned"}]}
    )
    live = Live()
    shadow = PrefixGateway(
        ForkPrefix((_call(ok=True, outcome=0),), 0), fixtures, {"t": live}, ignore_fixtures=True
    )
    await _served(shadow, "t", {"a": 1})
    after = await _served(shadow, "t", {"a": 2})
    assert (after.fixture, after.result.value) == ("live", {"live": 1})
    capped = PrefixGateway(ForkPrefix((), 0), None, {"t": live}, max_calls=1)
    assert await capped.admit()
    assert not await capped.admit()
    assert capped.capped
