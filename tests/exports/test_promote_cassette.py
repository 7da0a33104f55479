"""``wopeval promote --cassette DIR --cassette-out DIR``: a trial of a run recorded with
``--record-model`` against the scripted OpenAI-compatible server (loopback) is promoted with its
model turns; with the server stopped, the promoted task replays every time as the trial ran."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.agents.test_cassettes import _stochastic
from tests.exports.promote_helpers import cli
from wopeval.agents.cassette import Cassette, Tape
from wopeval.agents.scripted_openai import ScriptedOpenAI

LOOKUP = "crm:lookup-order"
REPLAYS = 5


def _suite(path: Path) -> Path:
    fixture = {"tool": LOOKUP, "args": {"orderId": "A1"}, "argsMatch": "exact",
               "response": {"status": "late"}}  # fmt: skip
    doc = {
        "suiteId": "core.test.evals.promote-cassette",
        "version": "1.0.0",
        "modes": ["golden"],
        "trials": {"count": 3},
        "tasks": [
            {
                "taskId": "where",
                "input": "Where is order A1?",
                "fixtures": {"toolResponses": [fixture], "onMiss": "fail"},
                "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "late"}},
            }
        ],
    }
    path.write_text(yaml.safe_dump(doc))
    return path


def _run(suite: Path, *args: str) -> dict[str, Any]:
    code, out = cli("run", str(suite), "--model", "m1", "--json", *args)
    assert code in (0, 1), out
    doc: dict[str, Any] = json.loads(out)
    return doc


def test_a_promoted_trial_replays_its_model_turns_with_the_server_stopped(
    tmp_path: Path,
) -> None:
    suite, store = _suite(tmp_path / "suite.yaml"), str(tmp_path / "s.db")
    with ScriptedOpenAI([_stochastic()], repeat_last=True) as server:
        ran = _run(suite, "--base-url", server.base_url, "--record-model",
                   str(tmp_path / "cas"), "--store", store, "--concurrency", "1")  # fmt: skip
    dead = "http://127.0.0.1:9/v1"  # the server is stopped: a replay must not need it
    outcomes: dict[str, set[tuple[bool, str]]] = {}
    for trial, flags in (("1", ("--as-failure",)), ("0", ())):
        out, cas = tmp_path / f"p{trial}.yaml", tmp_path / f"cas{trial}"
        code, said = cli("promote", ran["runId"], "--task", "where", "--trial", trial,
                         "-o", str(out), "--cassette", str(tmp_path / "cas"),
                         "--cassette-out", str(cas), "--store", store, "--json",
                         *flags)  # fmt: skip
        assert code == 0, said
        assert json.loads(said)["modelTurns"] == 2
        replayed = Cassette.for_replay(cas)  # keyed again for the new task, trial 0
        assert [p.name for p in (cas / "trials").iterdir()] == [f"where-trial-{trial}.0.json"]
        tape = Tape(f"where-trial-{trial}", 0)
        first = json.loads((cas / "trials" / f"where-trial-{trial}.0.json").read_text())
        request = first["interactions"][0]["request"]
        assert replayed.find(tape, request["method"], request["path"], request["body"])
        for _ in range(REPLAYS):
            again = _run(out, "--base-url", dead, "--replay-model", str(cas),
                         "--store", str(tmp_path / "r.db"))  # fmt: skip
            task = again["summary"]["tasks"][0]
            why = [f["reasons"] for f in again.get("failures", [])]
            outcomes.setdefault(trial, set()).add((task["passed"], json.dumps(why)))
    assert len(outcomes["1"]) == 1
    [(passed, reasons_json)] = outcomes["1"]
    assert passed is False
    assert "early" in reasons_json
    assert outcomes["0"] == {(True, "[]")}


def test_promote_refuses_a_cassette_without_the_trial_and_an_output_dir_in_use(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    suite, store = _suite(tmp_path / "suite.yaml"), str(tmp_path / "s.db")
    with ScriptedOpenAI([_stochastic()], repeat_last=True) as server:
        ran = _run(suite, "--base-url", server.base_url, "--record-model",
                   str(tmp_path / "cas"), "--store", store, "--concurrency", "1")  # fmt: skip
    base = ("promote", ran["runId"], "--task", "where", "--store", store)
    empty = tmp_path / "empty"
    empty.mkdir()
    code, out = cli(*base, "--trial", "0", "--cassette", str(empty), "--cassette-out",
                    str(tmp_path / "o1"))  # fmt: skip
    assert code == 2
    assert f"--cassette {empty}: not a model cassette" in " ".join(out.split())
    (tmp_path / "cas" / "trials" / "where.2.json").unlink()
    code, out = cli(*base, "--trial", "2", "--cassette", str(tmp_path / "cas"),
                    "--cassette-out", str(tmp_path / "o2"))  # fmt: skip
    assert code == 2
    assert "holds no recording of task 'where' trial 2" in " ".join(out.split())
    used = tmp_path / "used"
    used.mkdir()
    (used / "keep.txt").write_text("x")
    code, out = cli(*base, "--trial", "0", "--cassette", str(tmp_path / "cas"),
                    "--cassette-out", str(used))  # fmt: skip
    assert code == 2
    assert f"--cassette-out {used}: the directory is not empty" in " ".join(out.split())
    assert (used / "keep.txt").read_text() == "x"
