"""The LLM user under model cassettes and the command line: ``--record-model`` records the
user's model calls with the agent's, ``--replay-model`` reproduces the conversation with no
socket opened and a stored summary byte-identical to the recording's; a user request the
cassette lacks fails the trial closed as ``user-error`` (cause ``model-miss``), never a live
call; ``--user-model`` / ``--user-base-url`` override the suite's; ``wopeval grade`` prints
the stored summary byte for byte."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest
from bench.grade_kinds import stored_summary
from typer.testing import CliRunner

from tests.agents.llm_user_helpers import USER_MODEL, TwoModels, server_of
from wopeval.agents.scripted_openai import Reply
from wopeval.cli.app import app

pytestmark = pytest.mark.slow  # a loopback server, the CLI, several runs

DONE = "Done: ABC123 moved to Friday."


def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "100"})
    return result.exit_code, result.stdout


def _closed_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def _suite(path: Path, persona: str = "A traveller in a hurry.") -> Path:
    user = {
        "kind": "llm",
        "model": "placeholder-model",
        "baseUrl": "http://placeholder.invalid/v1",
        "persona": persona,
        "instructions": "Move your flight to Friday.",
    }
    task = {
        "taskId": "change",
        "input": "I want to change my flight.",
        "expected": {"kind": "golden", "match": {"strategy": "exact", "value": DONE}},
        "x-wopeval-user": user,
    }
    doc = {"suiteId": "core.test.evals.llm-user", "version": "1.0.0", "modes": ["golden"],
           "tasks": [task]}  # fmt: skip
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def _run(suite: Path, url: str, store: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    code, out = _cli(
        "run", str(suite), "--model", "agent-model", "--base-url", url,
        "--user-model", USER_MODEL, "--user-base-url", url,
        "--store", str(store), "--json", *extra,
    )  # fmt: skip
    return code, json.loads(out)


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    connects: list[Any] = []
    real = socket.socket.connect

    def counted(sock: socket.socket, address: Any) -> Any:
        connects.append(address)
        return real(sock, address)

    monkeypatch.setattr(socket.socket, "connect", counted)
    return connects


def test_33_2_record_and_replay_reproduce_an_llm_user_conversation(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    models = TwoModels(
        agent=[Reply(content="What is your booking reference?"), Reply(content=DONE)],
        user=[Reply(content="ABC123"), Reply(content="Thanks ###STOP###")],
    )
    suite = _suite(tmp_path / "suite.json")
    cassette = tmp_path / "cas"
    store = tmp_path / "s.db"
    with server_of(models) as server:
        code, recorded = _run(suite, server.base_url, store, "--record-model", str(cassette))
    assert code == 0, recorded
    assert len(models.user_bodies) == 2  # --user-model / --user-base-url reached the server
    assert {body["model"] for body in models.user_bodies} == {USER_MODEL}
    run_id = recorded["runId"]
    text = stored_summary(str(store), run_id)
    assert text is not None
    # wopeval grade prints the stored summary byte for byte.
    code, graded = _cli("grade", run_id, "--store", str(store), "--json")
    assert code == 0
    assert graded == text + "\n"
    # The cassette holds the user's requests with the agent's.
    (trial_file,) = sorted((cassette / "trials").glob("*.json"))
    assert trial_file.read_text(encoding="utf-8").count(USER_MODEL) >= 2
    connects = _counting(monkeypatch)
    code, replayed = _run(suite, _closed_url(), store, "--replay-model", str(cassette))
    assert code == 0, replayed
    assert connects == []  # nothing reached any server
    again = stored_summary(str(store), replayed["runId"])
    assert again == text  # byte-identical


def test_33_2_a_user_request_the_cassette_lacks_is_a_user_error_never_a_live_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    models = TwoModels(
        agent=[Reply(content="What is your booking reference?"), Reply(content=DONE)],
        user=[Reply(content="ABC123"), Reply(content="Thanks ###STOP###")],
    )
    cassette = tmp_path / "cas"
    store = tmp_path / "s.db"
    with server_of(models) as server:
        code, _ = _run(_suite(tmp_path / "a.json"), server.base_url, store,
                       "--record-model", str(cassette))  # fmt: skip
    assert code == 0
    other = _suite(tmp_path / "b.json", persona="Someone else entirely.")  # another prompt
    connects = _counting(monkeypatch)
    code, replayed = _run(other, _closed_url(), store, "--replay-model", str(cassette))
    assert code == 1
    assert connects == []
    side = replayed["summary"]["x-wopeval-userSide"]
    assert (side["userError"], side["userMiss"]) == (1, 0)
    code, shown = _cli("show", replayed["runId"], "--store", str(store))
    assert "user-error (model-miss)" in shown


def test_33_2_user_base_url_must_be_a_url(tmp_path: Path) -> None:
    code, _out = _cli("run", str(_suite(tmp_path / "s.json")), "--user-base-url", "ftp://x",
                     "--store", str(tmp_path / "s.db"))  # fmt: skip
    assert code == 2
    assert "--user-base-url" in CliRunner().invoke(app, ["run", "--help"]).stdout
