"""``wopeval run`` with real agents: ``--model``/``--base-url``, ``--agent-file`` (validated like
suites, refused before any trial when a fixtured tool is undeclared), ``--agent-cmd``,
``--judge-model``; and ``wopeval schema agent``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from wopeval.agents.scripted_openai import Reply, ScriptedOpenAI, call
from wopeval.agents.toolnames import ToolNames
from wopeval.cli.app import app

LOOKUP = "crm:lookup-order"
PROG = Path(__file__).parent / "progs" / "mcp_agent.py"


def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.output


def _suite(tmp_path: Path, expected: Any = "late", rubric: bool = False) -> str:
    fixtures = {
        "toolResponses": [
            {
                "tool": LOOKUP,
                "args": {"orderId": "A1"},
                "argsMatch": "exact",
                "response": {"status": "late"},
            }
        ],
        "onMiss": "fail",
    }
    exp: dict[str, Any] = {"kind": "golden", "match": {"strategy": "exact", "value": expected}}
    if rubric:
        exp = {"kind": "rubric", "rubric": [{"criterion": "says late", "weight": 1.0}]}
    task = {"taskId": "where", "input": "Where is order A1?", "fixtures": fixtures, "expected": exp}
    doc = {
        "suiteId": "core.test.evals.cli-agents",
        "version": "1.0.0",
        "modes": ["golden"],
        "tasks": [task],
    }
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def _script() -> list[Reply]:
    api = ToolNames([LOOKUP]).api(LOOKUP)
    return [Reply(tool_calls=(call(api, {"orderId": "A1"}),)), Reply(content="late")]


def test_model_and_base_url_evaluate_a_fixtured_suite(tmp_path: Path) -> None:
    with ScriptedOpenAI(_script()) as server:
        code, out = _cli(
            "run",
            _suite(tmp_path),
            "--model",
            "m1",
            "--base-url",
            server.base_url,
            "--store",
            str(tmp_path / "s.db"),
            "--json",
        )
    assert code == 0, out
    assert json.loads(out)["summary"]["passed"] is True
    (offered,) = server.requests[0]["tools"]  # the fixtured tool, with a permissive schema
    assert offered["function"]["parameters"] == {"type": "object", "additionalProperties": True}


def test_agent_file_with_judge_model(tmp_path: Path) -> None:
    with (
        ScriptedOpenAI(_script()) as agent_server,
        ScriptedOpenAI([Reply(content=json.dumps({"c1": 1}))]) as judge_server,
    ):
        agent_file = tmp_path / "agent.yaml"
        agent_file.write_text(
            yaml.safe_dump(
                {
                    "kind": "openai-compatible",
                    "model": "m1",
                    "baseUrl": agent_server.base_url,
                    "systemPrompt": "You are terse.",
                    "maxTurns": 3,
                }
            )
        )
        code, out = _cli(
            "run",
            _suite(tmp_path, rubric=True),
            "--agent-file",
            str(agent_file),
            "--judge-model",
            "j1",
            "--judge-base-url",
            judge_server.base_url,
            "--store",
            str(tmp_path / "s.db"),
            "--json",
        )
    assert code == 0, out
    assert agent_server.requests[0]["messages"][0]["content"].startswith("You are terse.")
    assert len(judge_server.requests) == 1


def test_undeclared_fixture_tool_is_refused_before_any_trial(tmp_path: Path) -> None:
    agent_file = tmp_path / "agent.json"
    agent_file.write_text(
        json.dumps(
            {
                "kind": "openai-compatible",
                "model": "m1",
                "baseUrl": "http://127.0.0.1:9/v1",
                "tools": [{"name": "crm:other"}],
            }
        )
    )
    store = tmp_path / "s.db"
    code, out = _cli(
        "run", _suite(tmp_path), "--agent-file", str(agent_file), "--store", str(store)
    )
    assert code == 2
    assert "tasks[0].fixtures.toolResponses[0].tool" in out
    assert "'crm:lookup-order'" in out
    code, runs = _cli("runs", "--store", str(store), "--json")
    assert code != 0 or json.loads(runs)["runs"] == []  # nothing was recorded


def test_agent_file_errors_are_all_reported_naming_their_fields(tmp_path: Path) -> None:
    agent_file = tmp_path / "agent.yaml"
    agent_file.write_text(
        yaml.safe_dump(
            {
                "kind": "openai-compatible",
                "model": "m1",
                "maxTurns": 0,
                "temperature": "hot",
                "apiKey": "sk-secret",
                "tools": [{"name": "bad name!"}],
            }
        )
    )
    code, out = _cli(
        "run", _suite(tmp_path), "--agent-file", str(agent_file), "--store", str(tmp_path / "s.db")
    )
    assert code == 2
    for field in ("maxTurns", "temperature", "apiKey", "tools[0].name"):
        assert field in out, field


def test_agent_cmd_runs_any_process_over_mcp(tmp_path: Path) -> None:
    expected = {"tools": {LOOKUP: {"type": "object", "additionalProperties": True}}, "results": []}
    code, out = _cli(
        "run",
        _suite(tmp_path, expected),
        "--agent-cmd",
        f"{sys.executable} {PROG}",
        "--store",
        str(tmp_path / "s.db"),
        "--json",
    )
    assert code == 0, out


def test_schema_agent_prints_the_definition_schema() -> None:
    code, out = _cli("schema", "agent")
    assert code == 0
    schema = json.loads(out)
    assert schema["title"] == "wopeval agent definition"
    assert {"kind", "model", "baseUrl", "apiKeyEnv", "tools", "maxTurns", "price"} <= set(
        schema["properties"]
    )
    assert "apiKey" not in schema["properties"]
