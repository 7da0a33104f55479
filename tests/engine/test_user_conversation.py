"""``x-wopeval-user`` through the engine: ``ctx.ask_user`` served by the trial's own copy of
the script, recorded as ``wopeval.user-turn``; a user miss ends the conversation and fails the
trial closed (``user-miss``), whatever the agent does after; a stop ends it for the agent to
answer; ``maxTurns``; both stores."""

from __future__ import annotations

import random
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from tests.engine.helpers import Ran, make_suite, run_suite
from wopeval.engine.agent import AgentContext, ConversationEnded, TurnsExceeded, UserMiss
from wopeval.engine.registry import Registry
from wopeval.engine.run import RunSettings
from wopeval.events.store import EventStore
from wopeval.wire.vocab import EVAL_SCORED, TRIAL_FAILED, USER_TURN

AGENT = "core.test.talker"
DONE: dict[str, Any] = {"kind": "golden", "match": {"strategy": "exact", "value": "done"}}
KEY = "x-wopeval-user"


def reply(when: dict[str, Any], text: Any = "yes", **extra: Any) -> dict[str, Any]:
    return {"when": when, "reply": text, **extra}


def task(
    task_id: str, messages: list[Any], *replies: dict[str, Any], **user: Any
) -> dict[str, Any]:
    script = {"kind": "scripted", "replies": list(replies), **user}
    return {"taskId": task_id, "input": {"say": messages}, "expected": DONE, KEY: script}


class Talker:
    """Says each message of its input in turn; keeps going after the conversation ended (the
    engine must never answer it again) and returns ``done``."""

    def __init__(self) -> None:
        self.heard: dict[tuple[str, int], list[Any]] = {}

    async def __call__(self, task_input: Any, ctx: AgentContext) -> Any:
        heard = self.heard.setdefault((ctx.task_id, ctx.trial_index), [])
        for message in task_input["say"]:
            try:
                heard.append(("reply", await ctx.ask_user(message)))
            except ConversationEnded as ended:
                heard.append((type(ended).__name__, ended.how, ended.reply))
        return "done"


async def talk(store: EventStore, *tasks: dict[str, Any], **settings: Any) -> tuple[Ran, Talker]:
    talker = Talker()
    registry = Registry()
    registry.register_agent(AGENT, talker)
    suite = make_suite(list(tasks), **settings.pop("suite", {}))
    ran = await run_suite(
        store, suite, agent_id=AGENT, registry=registry, settings=RunSettings(**settings)
    )
    return ran, talker


def turns(ran: Ran) -> list[dict[str, Any]]:
    return [e.payload for e in ran.of_type(USER_TURN)]


def labels(ran: Ran) -> list[str]:
    return [e.payload["scoreLabel"] for e in ran.of_type(EVAL_SCORED)]


async def test_33_2_plain_one_task_one_scripted_reply(store: EventStore) -> None:
    ran, talker = await talk(store, task("a", ["ref?"], reply({"literal": "ref?"}, "ABC")))
    assert ran.done.passed
    assert talker.heard[("a", 0)] == [("reply", "ABC")]
    assert turns(ran) == [
        {"agentId": AGENT, "turn": 0, "kind": "reply", "message": "ref?", "replyIndex": 0,
         "reply": "ABC"}
    ]  # fmt: skip
    side = ran.done.user_side
    assert side is not None
    assert (side.trials, side.passedTrials, side.userMiss, side.userError) == (1, 1, 0, 0)
    assert side.passRate == 1.0
    assert side.passRateExcludingUserSide == 1.0


async def test_33_2_user_miss_ends_the_conversation_and_fails_closed(store: EventStore) -> None:
    script = [reply({"literal": "ref?"}, "ABC"), reply({"regex": "^bye"}, "ok")]
    ran, talker = await talk(store, task("a", ["what?", "ref?", "bye"], *script))
    # No reply after the miss, though later messages would have matched.
    assert talker.heard[("a", 0)] == [
        ("UserMiss", "miss", None),
        ("UserMiss", "miss", None),
        ("UserMiss", "miss", None),
    ]
    assert [t["kind"] for t in turns(ran)] == ["miss", "ended", "ended"]
    assert not ran.done.passed
    assert ran.done.tasks[0].score == 0.0
    assert labels(ran) == ["user-miss"]
    (reason,) = [e.payload for e in ran.of_type(TRIAL_FAILED)]
    assert reason["kind"] == "user-miss"
    assert '"what?"' in reason["message"]
    assert '#0 literal "ref?"' in reason["message"]
    assert '#1 regex "^bye"' in reason["message"]
    assert reason["details"]["message"] == "what?"
    side = ran.done.user_side
    assert side is not None
    assert (side.userMiss, side.passRate, side.passRateExcludingUserSide) == (1, 0.0, None)


async def test_33_2_an_agent_that_lets_the_miss_raise_fails_user_miss(store: EventStore) -> None:
    async def blunt(task_input: Any, ctx: AgentContext) -> Any:
        await ctx.ask_user("off script")
        return "done"

    registry = Registry()
    registry.register_agent(AGENT, blunt)
    suite = make_suite([task("a", [], reply({"literal": "x"}))])
    ran = await run_suite(store, suite, agent_id=AGENT, registry=registry)
    assert labels(ran) == ["user-miss"]
    (reason,) = [e.payload for e in ran.of_type(TRIAL_FAILED)]
    assert reason["kind"] == "user-miss"
    assert reason.get("reasons") is None  # the raise is the miss, not a second agent error


async def test_33_2_a_stop_reply_ends_the_conversation_and_the_answer_is_graded(
    store: EventStore,
) -> None:
    script = [reply({"literal": "a"}, "1"), reply({"literal": "b"}, "bye", stop=True)]
    ran, talker = await talk(store, task("t", ["a", "b", "c"], *script))
    assert talker.heard[("t", 0)] == [
        ("reply", "1"),
        ("ConversationEnded", "stop", "bye"),
        ("ConversationEnded", "stop", None),
    ]
    assert [t["kind"] for t in turns(ran)] == ["reply", "stop", "ended"]
    assert ran.done.passed


async def test_33_2_max_turns_fails_the_trial_as_the_agents(store: EventStore) -> None:
    script = [reply({"regex": "q"}, "a")]
    ran, talker = await talk(store, task("t", ["q", "q", "q"], *script, order="keyed", maxTurns=1))
    assert talker.heard[("t", 0)][1] == ("TurnsExceeded", "max-turns", None)
    assert labels(ran) == ["max-turns"]
    (reason,) = [e.payload for e in ran.of_type(TRIAL_FAILED)]
    assert reason["kind"] == "max-turns"
    assert "maxTurns = 1" in reason["message"]
    side = ran.done.user_side
    assert side is not None
    assert side.userMiss == 0  # the agent's failure, not the user side's


async def test_33_2_in_order_needs_the_next_reply_keyed_takes_any(store: EventStore) -> None:
    replies = [reply({"literal": "a"}, "A"), reply({"literal": "b"}, "B")]
    ran, talker = await talk(
        store,
        task("ordered", ["b", "a"], *replies),
        task("keyed", ["b", "a"], *replies, order="keyed"),
    )
    assert talker.heard[("ordered", 0)][0] == ("UserMiss", "miss", None)
    assert talker.heard[("keyed", 0)] == [("reply", "B"), ("reply", "A")]
    assert labels(ran) == ["user-miss", "pass"]


async def test_33_2_json_questions_and_structured_replies(store: EventStore) -> None:
    replies = [
        reply({"json": {"ask": "ref"}}, {"ref": "ABC"}),
        reply({"json": {"ask": "seat", "row": 3}, "argsMatch": "exact"}, {"seat": "3A"}),
    ]
    said = [{"ask": "ref", "why": "change"}, '{"row": 3, "ask": "seat"}']
    ran, talker = await talk(store, task("t", said, *replies))
    assert talker.heard[("t", 0)] == [("reply", {"ref": "ABC"}), ("reply", {"seat": "3A"})]
    assert ran.done.passed


async def test_33_2_a_message_longer_than_the_regex_subject_cap_matches_no_regex(
    store: EventStore,
) -> None:
    ran, _ = await talk(store, task("t", ["x" * 4001], reply({"regex": "x"})))
    assert labels(ran) == ["user-miss"]


async def test_33_2_replies_are_copies_an_agent_cannot_change_the_script(
    store: EventStore,
) -> None:
    async def mutating(task_input: Any, ctx: AgentContext) -> Any:
        got = await ctx.ask_user("q")
        got["ref"] = "CHANGED"
        return "done"

    registry = Registry()
    registry.register_agent(AGENT, mutating)
    suite = make_suite(
        [task("t", [], reply({"literal": "q"}, {"ref": "ABC"}))], trials={"count": 2}
    )
    ran = await run_suite(store, suite, agent_id=AGENT, registry=registry)
    assert [t["reply"] for t in turns(ran)] == [{"ref": "ABC"}, {"ref": "ABC"}]


async def test_33_2_a_plain_agent_converses_through_its_sync_context(store: EventStore) -> None:
    def plain(task_input: Any, ctx: Any) -> Any:
        first = ctx.ask_user("ref?")
        try:
            ctx.ask_user("bye")
        except ConversationEnded as ended:
            return f"{first}-{ended.reply}"
        return "no stop"

    registry = Registry()
    registry.register_agent(AGENT, plain)
    expected = {"kind": "golden", "match": {"strategy": "exact", "value": "ABC-ok"}}
    script = [reply({"literal": "ref?"}, "ABC"), reply({"literal": "bye"}, "ok", stop=True)]
    doc = {**task("t", [], *script), "expected": expected}
    ran = await run_suite(store, make_suite([doc]), agent_id=AGENT, registry=registry)
    assert ran.done.passed


async def test_33_2_asking_without_a_user_is_the_agents_error(store: EventStore) -> None:
    async def asks(task_input: Any, ctx: AgentContext) -> Any:
        assert not ctx.has_user
        return await ctx.ask_user("hello?")

    registry = Registry()
    registry.register_agent(AGENT, asks)
    suite = make_suite([{"taskId": "t", "input": {}, "expected": DONE}])
    ran = await run_suite(store, suite, agent_id=AGENT, registry=registry)
    assert labels(ran) == ["agent-error"]
    assert ran.done.user_side is None  # no user in the suite: the summary is as before
    assert "no simulated user" in ran.of_type(TRIAL_FAILED)[0].payload["message"]


# --- properties ----------------------------------------------------------------------------


def _oracle(script: dict[str, Any], said: list[str]) -> tuple[list[Any], str | None]:
    """What a user following ``script`` answers to ``said``, written apart from the engine:
    the replies the agent gets (None for no reply) and how the conversation ended."""
    used = [False] * len(script["replies"])
    heard: list[Any] = []
    ended: str | None = None
    for turn, message in enumerate(said):
        if ended is not None:
            heard.append(None)
            continue
        if turn >= script.get("maxTurns", 10):
            ended = "max-turns"
            heard.append(None)
            continue
        left = [i for i, u in enumerate(used) if not u]
        if script.get("order") != "keyed":
            left = left[:1]
        found = next((i for i in left if script["replies"][i]["when"]["literal"] == message), None)
        if found is None:
            ended = "miss"
            heard.append(None)
            continue
        used[found] = True
        heard.append(script["replies"][found]["reply"])
        if script["replies"][found].get("stop"):
            ended = "stop"
    return heard, ended


def _random_script(rng: random.Random, words: list[str]) -> dict[str, Any]:
    count = rng.randint(1, 5)
    replies = [reply({"literal": rng.choice(words)}, f"r{i}") for i in range(count)]
    script: dict[str, Any] = {"kind": "scripted", "replies": replies}
    if rng.random() < 0.5:
        script["order"] = "keyed"
    if rng.random() < 0.3:
        replies[-1]["stop"] = True
    if rng.random() < 0.3:
        script["maxTurns"] = rng.randint(count, count + 2)
    return script


@pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)
async def test_33_2_property_1000_seeded_conversations_no_silent_continuation(
    store: EventStore,
) -> None:
    """50 random scripts × 20 trials, each trial saying its own seeded messages (some off the
    script): every answer is the independent oracle's; after a miss the agent never gets
    another reply, and every trial with a miss fails ``user-miss`` with score 0."""
    rng = random.Random(20261205)
    words = ["a", "b", "c", "d", "e"]
    scripts = [_random_script(rng, words) for _ in range(50)]
    plans: dict[tuple[str, int], list[str]] = {}
    tasks = []
    for number, script in enumerate(scripts):
        task_id = f"t{number}"
        for trial in range(20):
            plans[(task_id, trial)] = [rng.choice(words) for _ in range(rng.randint(1, 7))]
        tasks.append({"taskId": task_id, "input": {}, "expected": DONE, KEY: script})

    heard: dict[tuple[str, int], list[Any]] = {}
    ended_how: dict[tuple[str, int], str] = {}

    async def agent(task_input: Any, ctx: AgentContext) -> Any:
        got = heard.setdefault((ctx.task_id, ctx.trial_index), [])
        for message in plans[(ctx.task_id, ctx.trial_index)]:
            try:
                got.append(await ctx.ask_user(message))
            except ConversationEnded as ended:
                got.append(ended.reply if ended.how == "stop" else None)
                ended_how[(ctx.task_id, ctx.trial_index)] = ended.how
            await anyio.lowlevel.checkpoint()  # other trials interleave between turns
        return "done"

    registry = Registry()
    registry.register_agent(AGENT, agent)
    suite = make_suite(tasks, trials={"count": 20})
    ran = await run_suite(
        store, suite, agent_id=AGENT, registry=registry, settings=RunSettings(concurrency=32)
    )
    silent = 0
    misses = 0
    assert len(heard) == 1000
    for (task_id, trial), got in heard.items():
        expected, ended = _oracle(scripts[int(task_id[1:])], plans[(task_id, trial)])
        assert got == expected, (task_id, trial)
        assert ended_how.get((task_id, trial)) == ended
        if ended == "miss":
            misses += 1
            first = expected.index(None)
            silent += sum(1 for answer in got[first:] if answer is not None)
    assert silent == 0
    assert misses > 100  # the seed gives many misses: the property is exercised
    failed = [e.payload for e in ran.of_type(TRIAL_FAILED)]
    assert sum(1 for reason in failed if reason["kind"] == "user-miss") == misses
    side = ran.done.user_side
    assert side is not None
    assert side.userMiss == misses
    assert side.trials == 1000
    labels_seen = labels(ran)
    assert labels_seen.count("user-miss") == misses


@pytest.mark.parametrize("store_url", ["sqlite"], indirect=True)
async def test_33_2_property_200_concurrent_trials_never_share_a_reply_cursor(
    store: EventStore,
) -> None:
    """200 trials at once, each waiting until all have asked once before asking again: with
    one shared cursor, all but one would miss their first or second message."""
    count = 200
    first_round = anyio.Event()
    asked = 0

    async def agent(task_input: Any, ctx: AgentContext) -> Any:
        nonlocal asked
        one = await ctx.ask_user("first")
        asked += 1
        if asked == count:
            first_round.set()
        await first_round.wait()
        two = await ctx.ask_user("second")
        return "done" if (one, two) == ("1", "2") else [one, two]

    registry = Registry()
    registry.register_agent(AGENT, agent)
    script = [reply({"literal": "first"}, "1"), reply({"literal": "second"}, "2")]
    suite = make_suite([task("t", [], *script)], trials={"count": count})
    ran = await run_suite(
        store, suite, agent_id=AGENT, registry=registry, settings=RunSettings(concurrency=count)
    )
    assert labels(ran) == ["pass"] * count
    assert [t["replyIndex"] for t in turns(ran)].count(0) == count
    assert ran.done.passed


def test_33_2_exceptions_are_one_tree() -> None:
    assert issubclass(UserMiss, ConversationEnded)
    assert issubclass(TurnsExceeded, ConversationEnded)
