"""``wopeval fork --cassette DIR``: a forked trial's model turns inside its prefix are answered
from the original run's model cassette, strictly, and the turns after it reach the model server
(issue 35 §2: "its first N tool calls (and model turns, when recorded) served from the log").
A scripted OpenAI-compatible server on a loopback socket counts the requests that reach it."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from tests.cli import fork_model_agents
from wopeval.agents.definition import AgentDefinition
from wopeval.agents.openai_compat import OpenAICompatAgent
from wopeval.agents.scripted_openai import Reply, ScriptedOpenAI, call
from wopeval.agents.toolnames import ToolNames
from wopeval.cli.app import app

AGENT = "tests.cli.fork_model_agents:agent"
STEP = "kb:step"
API = ToolNames([STEP]).api(STEP)
CALLS = 3


def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "80"})
    return result.exit_code, result.output


def _walker(body: dict[str, Any]) -> Reply:
    """Calls the step tool until it has three answers, then says "done"."""
    answered = sum(1 for m in body["messages"] if m["role"] == "tool")
    if answered < CALLS:
        return Reply(tool_calls=(call(API, {"n": answered}),))
    return Reply(content="done")


def _suite(path: Path) -> Path:
    fixtures = [{"tool": STEP, "args": {"n": i}, "argsMatch": "exact", "response": {"ok": i}}
                for i in range(CALLS)]  # fmt: skip
    doc = {
        "suiteId": "core.test.evals.fork-cassette",
        "version": "1.0.0",
        "modes": ["golden"],
        "tasks": [{
            "taskId": "walk", "input": "Walk three steps.",
            "fixtures": {"toolResponses": fixtures, "onMiss": "fail"},
            "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "done"}},
        }],
    }  # fmt: skip
    path.write_text(yaml.safe_dump(doc))
    return path


@pytest.fixture
def recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[ScriptedOpenAI, Path, str, str]]:
    """The server (running), the cassette, the store and the recorded run's id."""
    with ScriptedOpenAI([_walker], repeat_last=True) as server:
        definition = AgentDefinition(kind="openai-compatible", model="m1", baseUrl=server.base_url)
        monkeypatch.setattr(fork_model_agents, "agent", OpenAICompatAgent(definition))
        store = str(tmp_path / "runs.db")
        code, out = _cli(
            "run", str(_suite(tmp_path / "suite.yaml")), "--agent", AGENT,
            "--record-model", str(tmp_path / "cas"), "--store", store, "--json",
        )  # fmt: skip
        assert code == 0, out
        assert len(server.requests) == CALLS + 1  # three tool calls, then the answer
        yield server, tmp_path / "cas", store, json.loads(out)["runId"]


def _fork(store: str, run_id: str, at: int, *more: str) -> tuple[int, dict[str, Any] | str]:
    code, out = _cli("fork", run_id, "--task", "walk", "--trial", "0", "--at", str(at),
                     "--store", store, "--json", *more)  # fmt: skip
    try:
        return code, json.loads(out)
    except ValueError:
        return code, out


@pytest.mark.parametrize(("at", "live"), [(0, CALLS + 1), (2, 2), (CALLS, 1)])
def test_fork_answers_the_prefix_s_model_turns_from_the_cassette(
    recorded: tuple[ScriptedOpenAI, Path, str, str], at: int, live: int
) -> None:
    """Each model turn before the agent has been served its N-th recorded call comes from the
    cassette; the rest reach the server (at 0, every turn; at the end, only the answer)."""
    server, cassette, store, run_id = recorded
    before = len(server.requests)
    code, doc = _fork(store, run_id, at, "--cassette", str(cassette))
    assert code == 0, doc
    assert isinstance(doc, dict)
    assert doc["summary"]["passed"] is True
    assert len(server.requests) - before == live
    reached = [sum(1 for m in body["messages"] if m["role"] == "tool")
               for body in server.requests[before:]]  # fmt: skip
    assert reached == list(range(CALLS + 1 - live, CALLS + 1))  # only the turns after the prefix


def test_without_the_cassette_every_model_turn_of_a_fork_is_live(
    recorded: tuple[ScriptedOpenAI, Path, str, str],
) -> None:
    server, _, store, run_id = recorded
    before = len(server.requests)
    code, doc = _fork(store, run_id, 2)
    assert code == 0, doc
    assert len(server.requests) - before == CALLS + 1


def test_a_model_turn_that_differs_inside_the_prefix_fails_closed_reaching_no_server(
    recorded: tuple[ScriptedOpenAI, Path, str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The forked agent asks its first turn at another temperature: that turn has no recording,
    so the trial fails ``model-miss`` naming the field, and nothing reaches the server."""
    server, cassette, store, run_id = recorded
    changed = AgentDefinition(kind="openai-compatible", model="m1", baseUrl=server.base_url,
                              temperature=0.5)  # fmt: skip
    monkeypatch.setattr(fork_model_agents, "agent", OpenAICompatAgent(changed))
    before = len(server.requests)
    code, doc = _fork(store, run_id, 2, "--cassette", str(cassette))
    assert code == 1, doc
    assert isinstance(doc, dict)
    (failure,) = doc["failures"]
    assert failure["kind"] == "model-miss"
    assert "it differs at temperature" in failure["reasons"][0]
    assert len(server.requests) == before


@pytest.mark.parametrize("what", ["missing", "file"])
def test_a_bad_cassette_is_refused_naming_the_option(
    recorded: tuple[ScriptedOpenAI, Path, str, str], tmp_path: Path, what: str
) -> None:
    server, _, store, run_id = recorded
    path = tmp_path / "nothing-here"
    if what == "file":
        path.write_text("{}")
    before = len(server.requests)
    code, out = _fork(store, run_id, 1, "--cassette", str(path))
    assert code == 2
    assert f"--cassette {path}:" in " ".join(str(out).split())
    assert len(server.requests) == before
