"""The model cassette's rules, store- and server-free: the key a recording is found by, the
field a miss names, the trial files written and read back (every refusal naming its file and
member), and the latency a replayed trial reports. The end-to-end runs are in
``test_cassettes.py``."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from wopeval.agents.cassette import (
    Cassette,
    Tape,
    active_cassette,
    current_tape,
    first_difference,
    leave_prefix,
    note_latency,
    replayed_latency,
    request_key,
    trial_tape,
    using_cassette,
)
from wopeval.errors import ModelMiss, UserError

PATH = "/v1/chat/completions"
BODY = {"model": "m1", "messages": [{"role": "user", "content": "Where is A1?"}]}
OTHER = {"model": "m1", "messages": [{"role": "user", "content": "Où est A2 ?"}]}
ANSWER = {"status": 200, "body": {"choices": []}, "contentType": "application/json"}


def test_the_key_is_the_sha256_of_the_canonical_request() -> None:
    doc = {"taskId": "t", "trialIndex": 2, "method": "POST", "path": PATH, "body": BODY,
           "occurrence": 1}  # fmt: skip
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert request_key("t", 2, "post", PATH, BODY, 1) == hashlib.sha256(text.encode()).hexdigest()
    ascii_only = json.dumps({**doc, "body": "é"}, sort_keys=True, separators=(",", ":"))
    assert (
        request_key("t", 2, "POST", PATH, "é", 1) != hashlib.sha256(ascii_only.encode()).hexdigest()
    )  # é is kept as UTF-8, not escaped


def test_the_key_holds_every_member() -> None:
    base = request_key("t", 0, "POST", PATH, BODY, 0)
    others = [
        request_key("u", 0, "POST", PATH, BODY, 0),
        request_key("t", 1, "POST", PATH, BODY, 0),
        request_key("t", 0, "GET", PATH, BODY, 0),
        request_key("t", 0, "POST", "/v1/responses", BODY, 0),
        request_key("t", 0, "POST", PATH, {**BODY, "seed": 1}, 0),
        request_key("t", 0, "POST", PATH, BODY, 1),
    ]
    assert len({base, *others}) == 7


def test_the_first_difference_walks_model_messages_tools_then_the_rest() -> None:
    a = {"model": "m", "messages": [{"content": "x"}], "tools": [1], "b": 1, "c": 1}
    assert first_difference(a, dict(a)) is None
    assert first_difference(a, {**a, "model": "n", "messages": []})[:2] == (0, "model")  # type: ignore[index]
    assert first_difference(a, {**a, "messages": [{"content": "y"}], "tools": [2]}) == (
        1,
        "messages[0].content",
        "x",
        "y",
    )
    assert first_difference(a, {**a, "tools": [2], "b": 2}) == (3, "tools[0]", 1, 2)
    assert first_difference(a, {**a, "b": 2, "c": 2}) == (5, "b", 1, 2)
    assert first_difference({"a": {"b": 1}}, {"a": {"b": 2}}) == (0, "a.b", 1, 2)


def test_a_missing_field_is_named_with_absent() -> None:
    # a list that grew: its length is named, with both lengths
    assert first_difference({"a": [1]}, {"a": [1, 2]}) == (1, "a.length", 1, 2)
    assert first_difference({"a": [1, 2]}, {"a": [1]}) == (1, "a.length", 2, 1)
    # a member one side has: the first name in order, with "(absent)"
    assert first_difference({"a": 1, "c": 3}, {"b": 2, "c": 3}) == (0, "a", 1, "(absent)")
    assert first_difference({"b": 2, "c": 3}, {"a": 1, "c": 3}) == (0, "a", "(absent)", 1)
    # a list where a dict was: its length is named, not the dict's first member
    assert first_difference({"m": []}, {"m": {"a": 1}}) == (0, "m.length", 0, "(absent)")
    assert first_difference({"m": {"a": 1}}, {"m": []}) == (0, "m.length", "(absent)", 0)
    # one side ends first
    assert first_difference({"a": 1}, {"a": 1, "b": 2}) == (1, "b", "(absent)", 2)
    assert first_difference({"a": 1, "b": 2}, {"a": 1}) == (1, "b", 2, "(absent)")


def test_a_tape_counts_each_identical_request() -> None:
    tape = Tape("t", 0)
    assert [tape.occurrence("POST", PATH, BODY) for _ in range(3)] == [0, 1, 2]
    assert tape.occurrence("POST", PATH, {**BODY, "seed": 1}) == 0
    assert tape.occurrence("post", PATH, BODY) == 3  # the method's case is not a difference


def _recorded(root: Path, latency: int | None = 41, suite: str | None = "s.x") -> Cassette:
    """A cassette recorded for trial (t, 0): BODY twice (two answers), then another request."""
    cassette = Cassette.for_recording(root, suite)
    with using_cassette(cassette), trial_tape("t", 0):
        tape = current_tape()
        assert tape is not None
        cassette.record(tape, "POST", PATH, BODY, {**ANSWER, "body": {"n": 0}})
        cassette.record(tape, "post", PATH, BODY, {**ANSWER, "body": {"n": 1}})
        cassette.record(tape, "POST", PATH, OTHER, {**ANSWER, "body": {"n": 2}})
        cassette.record(tape, "POST", "/v1/responses", BODY, {**ANSWER, "body": {"n": 3}})
        note_latency(latency)
    return cassette


def test_a_recording_is_written_per_trial_and_replayed(tmp_path: Path) -> None:
    _recorded(tmp_path / "cas")
    manifest = {"format": "wopeval-model-cassette", "version": 1, "suiteId": "s.x"}
    expected = json.dumps(manifest, indent=2) + "\n"  # pretty-printed, as the docs show it
    assert (tmp_path / "cas" / "cassette.json").read_text() == expected
    text = (tmp_path / "cas" / "trials" / "t.0.json").read_text()
    doc = json.loads(text)
    assert text == json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    assert doc["latencyMs"] == 41
    assert [i["occurrence"] for i in doc["interactions"]] == [0, 1, 0, 0]  # per path and body
    assert [i["request"]["method"] for i in doc["interactions"]] == ["POST"] * 4
    assert "Où est A2 ?" in text  # stored as written, diff-friendly
    assert list((tmp_path / "cas" / "trials").iterdir()) == [
        tmp_path / "cas" / "trials" / "t.0.json"
    ]
    replay = Cassette.for_replay(tmp_path / "cas", "s.x")
    assert replay.mode == "replay"
    assert replay.recorded_latency("t", 0) == 41
    assert replay.recorded_latency("t", 1) is None
    tape = Tape("t", 0)
    assert replay.find(tape, "POST", PATH, BODY)["body"] == {"n": 0}
    assert replay.find(tape, "POST", PATH, OTHER)["body"] == {"n": 2}  # counted apart
    assert replay.find(tape, "POST", "/v1/responses", BODY)["body"] == {"n": 3}
    assert replay.find(tape, "POST", PATH, BODY)["body"] == {"n": 1}  # the second answer
    with pytest.raises(ModelMiss, match=r"recorded 2 time\(s\) in task t trial 0, this is time 3"):
        replay.find(tape, "POST", PATH, BODY)


def test_no_latency_and_no_suite_are_left_out(tmp_path: Path) -> None:
    _recorded(tmp_path / "cas", latency=None, suite=None)
    assert json.loads((tmp_path / "cas" / "cassette.json").read_text()) == {
        "format": "wopeval-model-cassette", "version": 1}  # fmt: skip
    assert "latencyMs" not in json.loads((tmp_path / "cas" / "trials" / "t.0.json").read_text())
    assert Cassette.for_replay(tmp_path / "cas", "any.suite").recorded_latency("t", 0) is None


def test_a_zero_latency_is_kept(tmp_path: Path) -> None:
    _recorded(tmp_path / "cas", latency=0)
    replay = Cassette.for_replay(tmp_path / "cas")
    assert replay.recorded_latency("t", 0) == 0
    with using_cassette(replay), trial_tape("t", 0):
        assert replayed_latency() == 0


def test_a_miss_names_the_field_of_the_nearest_recording(tmp_path: Path) -> None:
    _recorded(tmp_path / "cas")
    replay = Cassette.for_replay(tmp_path / "cas")
    near = {**BODY, "messages": [{"role": "user", "content": "Where is A3?"}]}
    with pytest.raises(ModelMiss) as caught:
        replay.find(Tape("t", 0), "POST", PATH, near)
    assert str(caught.value) == (
        "no recording of this model request: it differs at messages[0].content from the nearest "
        'recording of task t trial 0: recorded "Where is A1?", requested "Where is A3?" '
        f"(cassette {tmp_path / 'cas'})"
    )
    french = {**BODY, "messages": [{"role": "usér", "content": "Où est A2 ?"}]}
    with pytest.raises(
        ModelMiss, match=r'messages\[0\]\.role .*: recorded "user", requested "usér"'
    ):
        replay.find(Tape("t", 0), "POST", PATH, french)
    with pytest.raises(ModelMiss, match="the cassette has no GET /v1/chat/completions of task t"):
        replay.find(Tape("t", 0), "GET", PATH, BODY)
    with pytest.raises(ModelMiss, match="has no POST /v2 of task t trial 0"):
        replay.find(Tape("t", 0), "post", "/v2", BODY)
    # the nearest is the one sharing the most leading fields: the model differs from neither
    # recording here, the seed is past every shared field
    with pytest.raises(ModelMiss, match=r"differs at seed .* recorded \"\(absent\)\", requested 1"):
        replay.find(Tape("t", 0), "POST", PATH, {**BODY, "seed": 1})
    with pytest.raises(ModelMiss, match="differs at model"):
        replay.find(Tape("t", 0), "POST", PATH, {**BODY, "model": "m2"})
    with pytest.raises(
        ModelMiss, match="the cassette has no POST /v1/chat/completions of task t trial 1"
    ):
        replay.find(Tape("t", 1), "POST", PATH, BODY)
    with pytest.raises(
        ModelMiss, match="the cassette has no POST /v1/chat/completions of task u trial 0"
    ):
        replay.find(Tape("u", 0), "POST", PATH, BODY)


def test_the_nearest_recording_shares_the_most_leading_fields(tmp_path: Path) -> None:
    cassette = Cassette.for_recording(tmp_path / "cas")
    tape = Tape("t", 0)
    first = {"model": "a", "messages": [{"content": "x"}, {"content": "y"}]}
    second = {"model": "m", "messages": [{"content": "x"}, {"content": "z"}]}
    third = {"model": "m", "messages": [{"content": "q"}]}
    for body in (first, second, third):
        cassette.record(tape, "POST", PATH, body, ANSWER)
    cassette.save(tape)
    asked = {"model": "m", "messages": [{"content": "x"}, {"content": "w"}]}
    with pytest.raises(ModelMiss, match=r'messages\[1\]\.content .* recorded "z", requested "w"'):
        Cassette.for_replay(tmp_path / "cas").find(Tape("t", 0), "POST", PATH, asked)


def test_a_long_value_is_clipped_in_a_miss(tmp_path: Path) -> None:
    cassette = Cassette.for_recording(tmp_path / "cas")
    tape = Tape("t", 0)
    cassette.record(tape, "POST", PATH, {"model": "m", "p": "a" * 78}, ANSWER)
    cassette.save(tape)
    replay = Cassette.for_replay(tmp_path / "cas")
    with pytest.raises(ModelMiss) as caught:  # 80 characters with its quotes: shown whole
        replay.find(Tape("t", 0), "POST", PATH, {"model": "m", "p": "b" * 78})
    assert f'recorded "{"a" * 78}", requested "{"b" * 78}"' in str(caught.value)
    with pytest.raises(ModelMiss) as caught:  # 81: clipped to 79 and an ellipsis
        replay.find(Tape("t", 0), "POST", PATH, {"model": "m", "p": "b" * 79})
    assert f'requested "{"b" * 78}…' in str(caught.value)


def test_recording_refuses_anything_but_a_new_directory(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(UserError, match="file: not a directory"):
        Cassette.for_recording(tmp_path / "file")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "keep").write_text("mine")
    with pytest.raises(UserError, match="full: the directory is not empty"):
        Cassette.for_recording(tmp_path / "full")
    assert (tmp_path / "full" / "keep").read_text() == "mine"
    (tmp_path / "empty").mkdir()
    assert Cassette.for_recording(tmp_path / "empty").mode == "record"
    assert (tmp_path / "empty" / "trials").is_dir()


def _damaged(root: Path, manifest: Any = None, trial: Any = None, raw: str | None = None) -> Path:
    (root / "trials").mkdir(parents=True)
    manifest = {"format": "wopeval-model-cassette", "version": 1} if manifest is None else manifest
    (root / "cassette.json").write_text(json.dumps(manifest))
    if trial is not None or raw is not None:
        text = raw if raw is not None else json.dumps(trial)
        (root / "trials" / "t.0.json").write_text(text)
    return root


def _trial(**changes: Any) -> dict[str, Any]:
    item = {
        "key": request_key("t", 0, "POST", PATH, BODY, 0),
        "occurrence": 0,
        "request": {"method": "POST", "path": PATH, "body": BODY},
        "response": ANSWER,
    }
    doc: dict[str, Any] = {"taskId": "t", "trialIndex": 0, "interactions": [item]}
    for name, value in changes.items():
        target = item if name in item else doc
        if value is None:
            del target[name]
        else:
            target[name] = value
    return doc


@pytest.mark.parametrize(
    ("manifest", "said"),
    [
        (["wopeval-model-cassette"], "cassette.json is not a JSON object"),
        ({"version": 1}, "cassette.json format: null is not 'wopeval-model-cassette'"),
        ({"format": "x", "version": 1}, 'cassette.json format: "x" is not'),
        ({"format": "wopeval-model-cassette"}, "cassette.json version: null is not 1"),
        ({"format": "wopeval-model-cassette", "version": 2}, "cassette.json version: 2 is not 1"),
        (
            {"format": "wopeval-model-cassette", "version": 1, "suiteId": "s.other"},
            'cassette.json suiteId: the cassette was recorded for suite "s.other", not "s.x"',
        ),
    ],
)
def test_a_bad_manifest_is_refused_naming_the_member(
    tmp_path: Path, manifest: Any, said: str
) -> None:
    root = _damaged(tmp_path / "cas", manifest)
    with pytest.raises(UserError) as caught:
        Cassette.for_replay(root, "s.x")
    assert str(caught.value).startswith(f"--replay-model {root}: ")
    assert said in str(caught.value)


def test_a_directory_that_is_not_a_cassette_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="absent: no such cassette directory"):
        Cassette.for_replay(tmp_path / "absent")
    (tmp_path / "file").write_text("x")
    with pytest.raises(UserError, match="file: not a directory"):
        Cassette.for_replay(tmp_path / "file")
    (tmp_path / "bare").mkdir()
    with pytest.raises(UserError, match=r"bare: not a model cassette \(no cassette.json\)"):
        Cassette.for_replay(tmp_path / "bare")
    same = _damaged(tmp_path / "same", {"format": "wopeval-model-cassette", "version": 1,
                                        "suiteId": "s.x"})  # fmt: skip
    assert Cassette.for_replay(same, "s.x").mode == "replay"
    assert Cassette.for_replay(same).mode == "replay"  # no suite to check against


@pytest.mark.parametrize(
    ("trial", "said"),
    [
        (_trial(taskId=None), "it lacks the member 'taskId'"),
        (_trial(trialIndex=None), "it lacks the member 'trialIndex'"),
        (_trial(interactions=None), "it lacks the member 'interactions'"),
        (_trial(occurrence=None), "it lacks the member 'occurrence'"),
        (_trial(response=None), "it lacks the member 'response'"),
        (_trial(key="0" * 64), "ValueError: the key of interaction 0 does not match it"),
        (_trial(occurrence=1), "the key of interaction 1 does not match it"),
        (_trial(response={"status": "ok", "body": {}}), "ValueError"),
        (_trial(latencyMs=-1), "latencyMs -1 is not a whole number of ms"),
        (_trial(latencyMs=True), "latencyMs True is not a whole number of ms"),
        (_trial(latencyMs=1.5), "latencyMs 1.5 is not a whole number of ms"),
        (_trial(interactions=[7]), "TypeError"),
    ],
)
def test_a_corrupt_trial_file_is_refused_naming_it(tmp_path: Path, trial: Any, said: str) -> None:
    root = _damaged(tmp_path / "cas", trial=trial)
    with pytest.raises(UserError) as caught:
        Cassette.for_replay(root)
    message = str(caught.value)
    assert message.startswith(
        f"--replay-model: corrupt cassette file {root / 'trials' / 't.0.json'}: "
    )
    assert said in message


def test_a_trial_file_that_is_not_json_is_refused(tmp_path: Path) -> None:
    root = _damaged(tmp_path / "cas", raw='{"taskId": ')
    with pytest.raises(UserError, match=r"corrupt cassette file .*t\.0\.json: JSONDecodeError"):
        Cassette.for_replay(root)


def test_a_zero_latency_and_an_absent_one_load(tmp_path: Path) -> None:
    assert (
        Cassette.for_replay(_damaged(tmp_path / "a", trial=_trial(latencyMs=0))).recorded_latency(
            "t", 0
        )
        == 0
    )
    assert (
        Cassette.for_replay(_damaged(tmp_path / "b", trial=_trial())).recorded_latency("t", 0)
        is None
    )


def test_the_tape_and_latency_follow_the_cassette_in_force(tmp_path: Path) -> None:
    assert active_cassette() is None
    with trial_tape("t", 0):  # no cassette: no tape, nothing noted
        assert current_tape() is None
        note_latency(5)
        assert replayed_latency() is None
    _recorded(tmp_path / "cas", latency=41)
    replay = Cassette.for_replay(tmp_path / "cas")
    with using_cassette(replay):
        assert active_cassette() is replay
        with trial_tape("t", 0):
            assert replayed_latency() == 41
            note_latency(7)  # a replay records nothing
            assert replayed_latency() == 41
        with trial_tape("t", 1):
            assert replayed_latency() is None
        assert current_tape() is None
    assert active_cassette() is None
    record = Cassette.for_recording(tmp_path / "new")
    with using_cassette(record), trial_tape("t", 3):
        note_latency(9)
        assert replayed_latency() is None  # a recording replays nothing
    assert json.loads((tmp_path / "new" / "trials" / "t.3.json").read_text())["latencyMs"] == 9


def test_a_trial_that_raised_is_still_saved(tmp_path: Path) -> None:
    record = Cassette.for_recording(tmp_path / "cas")

    def trial() -> None:
        with trial_tape("t", 0):
            tape = current_tape()
            assert tape is not None
            record.record(tape, "POST", PATH, BODY, ANSWER)
            raise RuntimeError("the agent failed")

    with using_cassette(record), pytest.raises(RuntimeError):
        trial()
    doc = json.loads((tmp_path / "cas" / "trials" / "t.0.json").read_text())
    assert len(doc["interactions"]) == 1
    assert not list((tmp_path / "cas" / "trials").glob("*.partial"))


def test_a_fork_reads_the_cassette_in_prefix_mode_until_it_leaves_the_prefix(
    tmp_path: Path,
) -> None:
    """``wopeval fork --cassette``: the original's cassette, checked as for a replay (refusals
    name ``--cassette``), answering the trial's requests until :func:`leave_prefix`; it
    reports no recorded latency (the forked trial is a new one) and records nothing."""
    _recorded(tmp_path / "cas", latency=41, suite="s.x")
    prefix = Cassette.for_prefix(tmp_path / "cas", "s.x")
    assert prefix.mode == "prefix"
    with using_cassette(prefix), trial_tape("t", 0):
        tape = current_tape()
        assert tape is not None
        assert not tape.live
        assert prefix.find(tape, "POST", PATH, BODY)["body"] == {"n": 0}
        assert replayed_latency() is None
        leave_prefix()
        assert tape.live
    with using_cassette(prefix), trial_tape("t", 5):
        note_latency(3)
    assert sorted(p.name for p in (tmp_path / "cas" / "trials").iterdir()) == ["t.0.json"]
    leave_prefix()  # outside a trial: nothing to leave
    with pytest.raises(UserError, match=r"^--cassette .*: the cassette was recorded for suite"):
        Cassette.for_prefix(tmp_path / "cas", "s.other")
    root = _damaged(tmp_path / "bad", trial=_trial(latencyMs=1.5))
    with pytest.raises(UserError, match=r"^--cassette: corrupt cassette file "):
        Cassette.for_prefix(root)
