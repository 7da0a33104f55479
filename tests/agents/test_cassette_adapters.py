"""Model cassettes under the framework adapters: the framework's own loop (OpenAI Agents SDK,
pydantic-ai) recorded against the scripted OpenAI-compatible server on a loopback socket, the
server stopped, replayed with no socket to the same stored summary; a changed prompt fails
exactly its task's trials ``model-miss``. An agent whose model wopeval cannot point at the
cassette (a framework model object it cannot give a client, a LangGraph graph, a command agent)
is refused before any trial, named: never run live unseen."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.agents.test_cassettes import _cli, _closed_port, _counting, _stored
from wopeval.agents.scripted_openai import Reply, ScriptedOpenAI, call

SECRET = "sk-cassette-adapter-secret-0123"
APP = "tests.agents.apps.cassette_apps"
TASKS, TRIALS = 2, 2


def _suite(path: Path, word: str = "Where") -> Path:
    rows = []
    for i in range(TASKS):
        fixture = {
            "tool": "lookup_order",
            "args": {"order_id": f"A{i}"},
            "argsMatch": "exact",
            "response": {"status": "late"},
        }
        rows.append(
            {
                "taskId": f"t{i}",
                "input": f"{word if i == 1 else 'Where'} is order A{i}?",
                "fixtures": {"toolResponses": [fixture], "onMiss": "fail"},
                "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "late"}},
            }
        )
    doc = {
        "suiteId": "core.test.evals.cassette-adapters",
        "version": "1.0.0",
        "modes": ["golden"],
        "trials": {"count": TRIALS},
        "tasks": rows,
    }
    path.write_text(yaml.safe_dump(doc))
    return path


def _step(body: dict[str, Any]) -> Reply:
    """Look the order the user asks about up, then answer what the tool said."""
    messages = body["messages"]
    if messages[-1]["role"] == "tool":
        return Reply(content="late")
    asked = json.dumps([m.get("content") for m in messages if m["role"] == "user"])
    order = re.search(r"A\d+", asked)
    assert order is not None, body
    return Reply(tool_calls=(call("lookup_order", {"order_id": order.group(0)}),))


def _run(suite: Path, agent: str, cassette: tuple[str, Path], store: Path) -> tuple[int, str]:
    return _cli("run", str(suite), "--agent", agent, "--override-target", cassette[0],
                str(cassette[1]), "--store", str(store), "--json")  # fmt: skip


@pytest.mark.parametrize("agent", ["oai_named", "pyd_named", "pyd_object"])
def test_a_framework_loop_records_and_replays_with_no_socket(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, agent: str
) -> None:
    suite, cas, ref = _suite(tmp_path / "suite.yaml"), tmp_path / "cas", f"{APP}:{agent}"
    with ScriptedOpenAI([_step], repeat_last=True) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", SECRET)
        monkeypatch.setenv("CASSETTE_APP_URL", server.base_url)  # pyd_object's own client
        monkeypatch.delitem(sys.modules, APP, raising=False)  # imported afresh, for that URL
        code, out = _run(suite, ref, ("--record-model", cas), tmp_path / "a.db")
        requests = len(server.requests)
    assert code == 0, out
    assert requests == TASKS * TRIALS * 2  # a lookup and an answer per trial, all went live
    files = sorted((cas / "trials").glob("*.json"))
    assert [p.name for p in files] == ["t0.0.json", "t0.1.json", "t1.0.json", "t1.1.json"]
    for path in files:
        text = path.read_text()
        assert SECRET not in text
        assert "sk-app-object-secret" not in text
        assert "authorization" not in text.lower()
        assert len(json.loads(text)["interactions"]) == 2
    assert sys.modules[APP].REAL_CALLS == []
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{_closed_port()}/v1")
    monkeypatch.delenv("OPENAI_API_KEY")
    connects = _counting(monkeypatch)
    code, again = _run(suite, ref, ("--replay-model", cas), tmp_path / "b.db")
    assert code == 0, again
    assert connects == []
    assert _stored(str(tmp_path / "b.db"), again) == _stored(str(tmp_path / "a.db"), out)
    changed = _suite(tmp_path / "changed.yaml", word="Whither")
    code, other = _run(changed, ref, ("--replay-model", cas), tmp_path / "c.db")
    assert code == 1, other
    assert connects == []
    failures = json.loads(other)["failures"]
    assert sorted((f["taskId"], f["trialIndex"]) for f in failures) == [("t1", 0), ("t1", 1)]
    for failure in failures:
        assert failure["kind"] == "model-miss", failure
        assert "differs at messages[" in failure["message"], failure["message"]
        assert "Whither is order A1?" in failure["message"]


REFUSED = {
    "tests.agents.apps.oai_agents_app:agent": "agent 'support' runs on its own FakeModel object",
    "tests.agents.apps.pyd_app:agent": "its model FunctionModel is not an OpenAI model",
    "tests.agents.apps.lc_app:agent": "a LangGraph graph calls its LangChain chat models",
}


@pytest.mark.parametrize("option", ["--record-model", "--replay-model"])
@pytest.mark.parametrize("agent", sorted(REFUSED))
def test_an_agent_the_cassette_cannot_cover_is_refused_naming_it(
    tmp_path: Path, agent: str, option: str
) -> None:
    suite, cas = _suite(tmp_path / "suite.yaml"), tmp_path / "cas"
    if option == "--replay-model":
        (cas / "trials").mkdir(parents=True)
        manifest = {"format": "wopeval-model-cassette", "version": 1}
        (cas / "cassette.json").write_text(json.dumps(manifest))
    code, out = _run(suite, agent, (option, cas), tmp_path / "s.db")
    said = " ".join(out.split())
    assert code == 2, out
    assert f"{option}:" in said
    assert REFUSED[agent] in said, said
    assert "would not pass through the cassette" in said
    assert not (tmp_path / "s.db").exists()  # refused before any trial: nothing went live


def test_a_command_agent_is_refused(tmp_path: Path) -> None:
    suite = _suite(tmp_path / "suite.yaml")
    code, out = _cli("run", str(suite), "--agent-cmd", f"{sys.executable} -c pass",
                     "--record-model", str(tmp_path / "cas"), "--store",
                     str(tmp_path / "s.db"))  # fmt: skip
    said = " ".join(out.split())
    assert code == 2, out
    assert "--record-model: a command agent (--agent-cmd, kind command)" in said
    assert not (tmp_path / "s.db").exists()
