"""Strict model cassettes (``wopeval run --record-model DIR`` / ``--replay-model DIR``) against the
scripted OpenAI-compatible server on a loopback socket: a 5-task × 3-trial run recorded, the
server stopped, replayed with no socket to the same summary, byte for byte (both stores hold the
same text); a changed prompt fails exactly its
task's trials closed (``model-miss``) naming the field; a stochastic model's answers replayed
trial by trial; bad cassette directories refused, named."""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml
from bench.grade_kinds import stored_summary
from typer.testing import CliRunner

from wopeval.agents.cassette import first_difference, request_key
from wopeval.agents.scripted_openai import Reply, ScriptedOpenAI, call
from wopeval.agents.toolnames import ToolNames
from wopeval.cli.app import app
from wopeval.events.store import EventStore
from wopeval.grading.views import collect_trials
from wopeval.wire.vocab import INVOCATION_COMPLETED, X_REPLAYED_LATENCY

LOOKUP = "crm:lookup-order"
API = ToolNames([LOOKUP]).api(LOOKUP)
SECRET = "sk-cassette-secret-0123456789"
TASKS = 5


def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


def _suite(path: Path, tasks: int = TASKS, trials: int | None = 3, word: str = "Where") -> Path:
    rows = []
    for i in range(tasks):
        fixture = {
            "tool": LOOKUP,
            "args": {"orderId": f"A{i}"},
            "argsMatch": "exact",
            "response": {"status": "late"},
        }
        text = f"{word if i == 2 else 'Where'} is order A{i}?"
        rows.append(
            {
                "taskId": f"t{i}",
                "input": text,
                "fixtures": {"toolResponses": [fixture], "onMiss": "fail"},
                "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "late"}},
            }
        )
    doc: dict[str, Any] = {
        "suiteId": "core.test.evals.cassettes",
        "version": "1.0.0",
        "modes": ["golden"],
        "tasks": rows,
    }
    if trials is not None:
        doc["trials"] = {"count": trials}
    path.write_text(yaml.safe_dump(doc))
    return path


def _stochastic() -> Any:
    """A model that looks the order up, then answers differently from one answer to the next
    (late, early, late, late, early, …): which trial gets which depends on the schedule."""
    answers = iter(["late", "early", "late"] * 100)

    def step(body: dict[str, Any]) -> Reply:
        if body["messages"][-1]["role"] == "tool":
            return Reply(content=next(answers))
        order = re.search(r"A\d+", body["messages"][1]["content"])
        assert order is not None
        return Reply(tool_calls=(call(API, {"orderId": order.group(0)}),))

    return step


def _summary_bytes(out: str) -> bytes:
    """The summary ``--json`` printed, latencies and all."""
    doc = json.loads(out)
    return json.dumps(doc["summary"], sort_keys=True).encode()


def _stored(store: str, out: str) -> str:
    """The summary text the store holds for the run ``--json`` printed."""
    text = stored_summary(store, json.loads(out)["runId"])
    assert text is not None
    return text


def _completions(store: str, out: str) -> list[dict[str, Any]]:
    """The payloads of the run's ``agent.invocation-completed`` events."""

    async def read() -> list[dict[str, Any]]:
        opened = await EventStore.open(store)
        try:
            events = await opened.events(json.loads(out)["runId"])
        finally:
            await opened.close()
        return [e.payload for e in events if e.type == INVOCATION_COMPLETED]

    return anyio.run(read)


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any], int]:
    """A 5-task × 3-trial run recorded (the server stopped after it); its --json output."""
    tmp = tmp_path_factory.mktemp("cassette")
    suite = _suite(tmp / "suite.yaml")
    mp = pytest.MonkeyPatch()
    mp.setenv("CASSETTE_TEST_KEY", SECRET)
    try:
        with ScriptedOpenAI([_stochastic()], repeat_last=True) as server:
            code, out = _cli(
                "run",
                str(suite),
                "--model",
                "m1",
                "--base-url",
                server.base_url,
                "--api-key-env",
                "CASSETTE_TEST_KEY",
                "--record-model",
                str(tmp / "cas"),
                "--store",
                str(tmp / "rec.db"),
                "--json",
                "--concurrency",
                "4",
            )
            requests = len(server.requests)
    finally:
        mp.undo()
    assert code in (0, 1), out
    return tmp, json.loads(out), requests


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every address a socket of this process connects to from now on (the event loop's
    connections go through ``socket.socket.connect`` too)."""
    connects: list[Any] = []
    real = socket.socket.connect

    def counted(sock: socket.socket, address: Any) -> Any:
        connects.append(address)
        return real(sock, address)

    monkeypatch.setattr(socket.socket, "connect", counted)

    def counted_ex(sock: socket.socket, address: Any) -> int:
        connects.append(address)
        return 111  # ECONNREFUSED: nothing is reached

    monkeypatch.setattr(socket.socket, "connect_ex", counted_ex)
    return connects


def _replay(
    tmp: Path, suite: Path, store: str, monkeypatch: pytest.MonkeyPatch
) -> tuple[int, str, list[Any]]:
    """Replay from ``tmp/cas`` with the base URL at a closed port, counting every connect
    (``store``: a file name under ``tmp``, or a PostgreSQL URL)."""
    connects = _counting(monkeypatch)
    code, out = _cli(
        "run",
        str(suite),
        "--model",
        "m1",
        "--base-url",
        f"http://127.0.0.1:{_closed_port()}/v1",
        "--replay-model",
        str(tmp / "cas"),
        "--store",
        store if "://" in store else str(tmp / store),
        "--json",
    )
    return code, out, connects


def test_replay_reproduces_the_recorded_summary_and_opens_no_socket(
    recorded: tuple[Path, dict[str, Any], int], monkeypatch: pytest.MonkeyPatch
) -> None:
    tmp, first, requests = recorded
    assert requests == TASKS * 3 * 2  # a lookup and an answer per trial, all reached the server
    files = sorted((tmp / "cas" / "trials").glob("*.json"))
    assert len(files) == TASKS * 3
    for path in files:
        text = path.read_text()
        assert SECRET not in text
        assert "authorization" not in text.lower()
    code, out, connects = _replay(tmp, tmp / "suite.yaml", "rep.db", monkeypatch)
    assert connects == []
    assert code in (0, 1), out
    assert _summary_bytes(out) == _summary_bytes(json.dumps(first))
    recorded_text = _stored(str(tmp / "rec.db"), json.dumps(first))
    assert _stored(str(tmp / "rep.db"), out) == recorded_text  # byte for byte, latencies too
    assert all("latencyMs" in task for task in json.loads(recorded_text)["tasks"])
    # each replayed bracket carries the latency its trial was recorded with
    latencies = {}
    for path in files:
        doc = json.loads(path.read_text())
        latencies[doc["taskId"], doc["trialIndex"]] = doc["latencyMs"]
    replayed = sorted(c[X_REPLAYED_LATENCY] for c in _completions(str(tmp / "rep.db"), out))
    assert replayed == sorted(latencies.values())
    assert all(X_REPLAYED_LATENCY not in c for c in _completions(str(tmp / "rec.db"), out))


@pytest.mark.postgres
def test_replay_into_postgresql_stores_the_recorded_summarys_bytes(
    recorded: tuple[Path, dict[str, Any], int],
    monkeypatch: pytest.MonkeyPatch,
    pg_database: str,
) -> None:
    tmp, first, _ = recorded
    code, out, connects = _replay(tmp, tmp / "suite.yaml", pg_database, monkeypatch)
    assert code in (0, 1), out
    assert all(address[1] == 5432 for address in connects)  # the store's, no model server's
    assert _stored(pg_database, out) == _stored(str(tmp / "rec.db"), json.dumps(first))


def test_a_stochastic_model_replays_each_trials_own_answer(
    recorded: tuple[Path, dict[str, Any], int], monkeypatch: pytest.MonkeyPatch
) -> None:
    tmp, first, _ = recorded
    answers: dict[tuple[str, int], str] = {}
    for path in (tmp / "cas" / "trials").glob("*.json"):
        doc = json.loads(path.read_text())
        last = doc["interactions"][-1]["response"]["body"]
        answers[doc["taskId"], doc["trialIndex"]] = last["choices"][0]["message"]["content"]
    assert set(answers.values()) == {"late", "early"}  # the trials were different samples
    code, out, _ = _replay(tmp, tmp / "suite.yaml", "stoch.db", monkeypatch)
    assert code in (0, 1), out
    failed = {(f["taskId"], f["trialIndex"]) for f in json.loads(out)["failures"]}
    assert failed == {key for key, answer in answers.items() if answer == "early"}
    assert failed == {(f["taskId"], f["trialIndex"]) for f in first["failures"]}


def test_a_changed_prompt_fails_exactly_its_tasks_trials_model_miss(
    recorded: tuple[Path, dict[str, Any], int], monkeypatch: pytest.MonkeyPatch
) -> None:
    tmp, first, _ = recorded
    suite = _suite(tmp / "changed.yaml", word="Whither")
    code, out, connects = _replay(tmp, suite, "changed.db", monkeypatch)
    assert code == 1
    assert connects == []
    doc = json.loads(out)
    misses = [f for f in doc["failures"] if f["kind"] == "model-miss"]
    assert sorted((f["taskId"], f["trialIndex"]) for f in misses) == [("t2", i) for i in range(3)]
    for miss in misses:
        assert miss["status"] == "fail-closed"
        assert "messages[1].content" in miss["message"], miss["message"]
        assert '"Whither is order A2?"' in miss["message"]
    others = [f for f in doc["failures"] if f["taskId"] != "t2"]
    assert others == [f for f in first["failures"] if f["taskId"] != "t2"]
    assert doc["infrastructureFailures"] == 0
    # a trial that missed was not the one recorded: it reports its own latency
    completions = _completions(str(tmp / "changed.db"), out)
    assert sum(X_REPLAYED_LATENCY in c for c in completions) == (TASKS - 1) * 3
    assert all(X_REPLAYED_LATENCY not in c for c in completions if c.get("x-wopeval-error"))


def test_plainest_suite_records_and_replays(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = _suite(tmp_path / "one.yaml", tasks=1, trials=None)
    live = _counting(monkeypatch)  # the counter sees a recorded run's connections
    with ScriptedOpenAI([_stochastic()], repeat_last=True) as server:
        code, out = _cli(
            "run",
            str(suite),
            "--model",
            "m1",
            "--base-url",
            server.base_url,
            "--record-model",
            str(tmp_path / "cas"),
            "--store",
            str(tmp_path / "a.db"),
            "--json",
        )
    assert code == 0, out
    assert live
    assert all(address[1] == int(server.base_url.split(":")[2][:-3]) for address in live)
    monkeypatch.undo()
    assert [p.name for p in (tmp_path / "cas" / "trials").iterdir()] == ["t0.0.json"]
    code, again, connects = _replay(tmp_path, suite, "b.db", monkeypatch)
    assert (code, connects) == (0, [])
    assert _summary_bytes(again) == _summary_bytes(out)
    assert _stored(str(tmp_path / "b.db"), again) == _stored(str(tmp_path / "a.db"), out)


# each kind of damage, and what the refusal must say beside the path
DAMAGES = {
    "absent": "no such cassette directory",
    "a-file": "not a directory",
    "no-manifest": "not a model cassette (no cassette.json)",
    "bad-manifest": 'cassette.json format: "something-else"',
    "manifest-not-object": "cassette.json is not a JSON object",
    "wrong-version": "cassette.json version: 2 is not 1",
    "other-suite": "cassette.json suiteId: the cassette was recorded for suite",
    "truncated": "corrupt cassette file",
    "rekeyed": "the key of interaction 0 does not match it",
    "no-member": "it lacks the member 'occurrence'",
    "bad-latency": "latencyMs -3 is not a whole number of ms",
}


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_a_bad_cassette_directory_is_refused_naming_it(tmp_path: Path, damage: str) -> None:
    suite = _suite(tmp_path / "one.yaml", tasks=1, trials=None)
    cas = tmp_path / "cas"
    if damage == "a-file":
        cas.write_text("not a cassette")
    elif damage != "absent":
        (cas / "trials").mkdir(parents=True)
    manifest: Any = {"format": "wopeval-model-cassette", "version": 1}
    manifest |= {
        "bad-manifest": {"format": "something-else"},
        "wrong-version": {"version": 2},
        "other-suite": {"suiteId": "core.test.evals.another"},
    }.get(damage, {})
    if damage == "manifest-not-object":
        manifest = ["wopeval-model-cassette", 1]
    if cas.is_dir() and damage != "no-manifest":
        (cas / "cassette.json").write_text(json.dumps(manifest))
    body = {"model": "m1", "messages": []}
    item: dict[str, Any] = {
        "key": request_key("t0", 0, "POST", "/v1/chat/completions", body, 0),
        "occurrence": 0,
        "request": {"method": "POST", "path": "/v1/chat/completions", "body": body},
        "response": {"status": 200, "body": {}},
    }
    if damage == "rekeyed":
        item["key"] = "0" * 64
    if damage == "no-member":
        del item["occurrence"]
    trial: dict[str, Any] = {"taskId": "t0", "trialIndex": 0, "interactions": [item]}
    if damage == "bad-latency":
        trial["latencyMs"] = -3
    text = json.dumps(trial)
    (tmp_path / "trial.json").write_text(text[: len(text) // 2] if damage == "truncated" else text)
    if cas.is_dir():
        (tmp_path / "trial.json").replace(cas / "trials" / "t0.0.json")
    code, out = _cli(
        "run",
        str(suite),
        "--model",
        "m1",
        "--replay-model",
        str(cas),
        "--store",
        str(tmp_path / "s.db"),
    )
    assert code == 2, out
    said = " ".join(out.split())  # the message may wrap
    assert str(cas) in said
    assert DAMAGES[damage] in said, said
    assert not (tmp_path / "s.db").exists()  # refused before the store is opened
    if cas.is_dir():  # nothing recorded is touched
        kept = text[: len(text) // 2] if damage == "truncated" else text
        assert (cas / "trials" / "t0.0.json").read_text() == kept


def test_a_recording_names_its_suite_and_replays_for_it(tmp_path: Path) -> None:
    """The manifest a recording writes names its suite; a cassette without one (an earlier
    recording) still replays."""
    suite = _suite(tmp_path / "one.yaml", tasks=1, trials=None)
    with ScriptedOpenAI([_stochastic()], repeat_last=True) as server:
        code, out = _cli("run", str(suite), "--model", "m1", "--base-url", server.base_url,
                         "--record-model", str(tmp_path / "cas"), "--store",
                         str(tmp_path / "a.db"), "--json")  # fmt: skip
    assert code == 0, out
    manifest = json.loads((tmp_path / "cas" / "cassette.json").read_text())
    assert manifest == {
        "format": "wopeval-model-cassette",
        "version": 1,
        "suiteId": "core.test.evals.cassettes",
    }
    del manifest["suiteId"]
    (tmp_path / "cas" / "cassette.json").write_text(json.dumps(manifest))
    code, again = _cli("run", str(suite), "--model", "m1", "--base-url",
                       f"http://127.0.0.1:{_closed_port()}/v1", "--replay-model",
                       str(tmp_path / "cas"), "--store", str(tmp_path / "b.db"),
                       "--json")  # fmt: skip
    assert code == 0, again


def test_record_refuses_a_non_empty_directory_and_both_options(tmp_path: Path) -> None:
    suite = _suite(tmp_path / "one.yaml", tasks=1, trials=None)
    (tmp_path / "cas").mkdir()
    (tmp_path / "cas" / "keep.txt").write_text("mine")
    code, out = _cli("run", str(suite), "--model", "m1", "--record-model", str(tmp_path / "cas"))
    assert code == 2
    assert "not empty" in out
    assert str(tmp_path / "cas") in out
    assert (tmp_path / "cas" / "keep.txt").read_text() == "mine"
    code, out = _cli(
        "run",
        str(suite),
        "--model",
        "m1",
        "--record-model",
        str(tmp_path / "a"),
        "--replay-model",
        str(tmp_path / "cas"),
    )
    assert code == 2
    assert "cannot be combined" in out
    assert not (tmp_path / "a").exists()
    ray = ("--executor", "ray", "--replay-model", str(tmp_path / "cas"))
    code, out = _cli("run", str(suite), "--model", "m1", *ray)
    assert code == 2
    assert "--executor local only" in out
    code, out = _cli("run", "--resume", "local/r0123456789abcdef0123", *ray[2:])
    assert code == 2
    assert "--replay-model" in out


def test_the_key_holds_the_trial_and_the_occurrence() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    keys = {
        request_key("t", trial, "POST", "/v1/chat/completions", body, occurrence)
        for trial in range(3)
        for occurrence in range(2)
    }
    assert len(keys) == 6
    other = {**body, "temperature": 0.5}
    assert request_key("t", 0, "POST", "/p", body, 0) != request_key("t", 0, "POST", "/p", other, 0)
    assert request_key("t", 0, "POST", "/p", body, 0) != request_key("u", 0, "POST", "/p", body, 0)


def test_first_difference_names_the_field() -> None:
    a = {"model": "m", "messages": [{"role": "user", "content": "a"}], "tools": []}
    assert first_difference(a, a) is None
    b = {**a, "messages": [{"role": "user", "content": "b"}]}
    assert first_difference(a, b) == (1, "messages[0].content", "a", "b")  # content sorts first
    c = {**a, "model": "n"}
    assert first_difference(a, c) == (0, "model", "m", "n")
    longer = {**a, "messages": [*a["messages"], {"role": "tool", "content": "x"}]}
    assert first_difference(a, longer) is not None
    assert first_difference(a, longer)[1] == "messages.length"  # type: ignore[index]
    seeded = {**a, "seed": 1}
    assert first_difference(a, seeded)[1] == "seed"  # type: ignore[index]


def _rubric_suite(path: Path) -> Path:
    task = {
        "taskId": "apology",
        "input": "My parcel is late.",
        "expected": {"kind": "rubric", "rubric": [{"criterion": "apologises", "weight": 1.0}]},
    }
    doc = {
        "suiteId": "core.test.evals.cassette-judge",
        "version": "1.0.0",
        "modes": ["rubric"],
        "tasks": [task],
    }
    path.write_text(yaml.safe_dump(doc))
    return path


def test_the_judges_calls_are_recorded_and_replayed_and_a_judge_miss_names_the_field(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite = _rubric_suite(tmp_path / "rubric.yaml")
    verdict = Reply(content=json.dumps({"c1": 1}))
    with (
        ScriptedOpenAI([Reply(content="Sorry, it is late.")]) as agent,
        ScriptedOpenAI([verdict]) as judge,
    ):
        code, out = _cli(
            "run",
            str(suite),
            "--model",
            "agent-m",
            "--base-url",
            agent.base_url,
            "--judge-model",
            "judge-m",
            "--judge-base-url",
            judge.base_url,
            "--record-model",
            str(tmp_path / "cas"),
            "--store",
            str(tmp_path / "a.db"),
            "--json",
        )
    assert code == 0, out
    (trial,) = (tmp_path / "cas" / "trials").glob("*.json")
    models = [i["request"]["body"]["model"] for i in json.loads(trial.read_text())["interactions"]]
    assert models == ["agent-m", "judge-m"]
    connects = _counting(monkeypatch)
    closed = f"http://127.0.0.1:{_closed_port()}/v1"
    replay = (
        "run",
        str(suite),
        "--model",
        "agent-m",
        "--base-url",
        closed,
        "--replay-model",
        str(tmp_path / "cas"),
        "--json",
    )
    code, again = _cli(
        *replay,
        "--judge-model",
        "judge-m",
        "--judge-base-url",
        closed,
        "--store",
        str(tmp_path / "b.db"),
    )
    assert code == 0, again
    assert _summary_bytes(again) == _summary_bytes(out)
    code, other = _cli(
        *replay,
        "--judge-model",
        "judge-2",
        "--judge-base-url",
        closed,
        "--store",
        str(tmp_path / "c.db"),
    )
    assert code == 1, other
    assert connects == []
    (failure,) = json.loads(other)["failures"]
    assert failure["kind"] == "judge-error"
    assert "differs at model" in failure["message"]
    assert '"judge-2"' in failure["message"]


def _outputs(store: str, out: str) -> dict[tuple[str, int], Any]:
    """Each trial's output, as the run's log holds it."""

    async def read() -> list[Any]:
        opened = await EventStore.open(store)
        try:
            return await opened.events(json.loads(out)["runId"])
        finally:
            await opened.close()

    views = collect_trials(anyio.run(read))
    return {key: view.output for key, view in views.items()}


def test_three_trials_of_a_stochastic_model_replay_their_three_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One task, three trials, a model that never answers the same twice: each trial replays
    its own recorded answer, never another trial's (the trial index is in the key)."""
    suite = _suite(tmp_path / "three.yaml", tasks=1, trials=3)
    counter = iter(range(1000))

    def step(body: dict[str, Any]) -> Reply:
        if body["messages"][-1]["role"] == "tool":
            return Reply(content=f"answer-{next(counter)}")
        return Reply(tool_calls=(call(API, {"orderId": "A0"}),))

    with ScriptedOpenAI([step], repeat_last=True) as server:
        code, out = _cli("run", str(suite), "--model", "m1", "--base-url", server.base_url,
                         "--record-model", str(tmp_path / "cas"), "--store",
                         str(tmp_path / "a.db"), "--json")  # fmt: skip
    assert code == 1, out  # none answers "late"
    recorded = _outputs(str(tmp_path / "a.db"), out)
    assert len(set(recorded.values())) == 3
    assert sorted(recorded) == [("t0", 0), ("t0", 1), ("t0", 2)]
    code, again, connects = _replay(tmp_path, suite, "b.db", monkeypatch)
    assert (code, connects) == (1, [])
    assert _outputs(str(tmp_path / "b.db"), again) == recorded
