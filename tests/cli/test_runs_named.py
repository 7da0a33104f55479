"""Runs are named by what ran: a ``--model`` run is recorded under the model, not the suite's
``targetAgentId``; its settings keep the model and the server's ``scheme://host:port`` (never a
key, user, path or query); ``wopeval runs`` shows the agent beside the suite, within 80 columns."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
import yaml
from typer.testing import CliRunner

from tests.events.helpers import run_record
from wopeval.agents.build import model_server
from wopeval.agents.definition import parse_definition
from wopeval.agents.scripted_openai import Reply, ScriptedOpenAI
from wopeval.cli.app import app
from wopeval.cli.render_runs import runs_lines
from wopeval.events.store import EventStore


def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "80"})
    return result.exit_code, result.output


def _plain_suite(tmp_path: Path) -> str:
    """One task, no trials, no fixtures, authored for another agent."""
    doc = {
        "suiteId": "core.test.evals.named",
        "version": "1.0.0",
        "targetAgentId": "core.test.agents.authored-for",
        "modes": ["golden"],
        "tasks": [
            {
                "taskId": "t1",
                "input": "Where is order A1?",
                "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "late"}},
            }
        ],
    }
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(doc))
    return str(path)


async def _request(store_url: str, run_id: str) -> dict[str, object]:
    async with await EventStore.open(store_url) as store:
        record = await store.get_run(run_id)
    assert record is not None
    assert isinstance(record.request, dict)
    return record.request


def _run_model(suite: str, model: str, base_url: str, store_url: str) -> str:
    code, out = _cli("run", suite, "--model", model, "--base-url", base_url, "--store", store_url,
                     "--json")  # fmt: skip
    assert code == 0, out
    run_id: str = json.loads(out)["runId"]
    return run_id


def test_a_model_run_is_named_by_the_model_and_keeps_its_server_without_credentials(
    tmp_path: Path, store_url: str
) -> None:
    suite = _plain_suite(tmp_path)
    with ScriptedOpenAI([Reply(content="late")], repeat_last=True) as server:
        port = server.base_url.split(":")[2].split("/")[0]
        secret_url = server.base_url.replace("http://", "http://me:s3cret-pw@")
        first = _run_model(suite, "m1", secret_url, store_url)
        second = _run_model(suite, "org/m-2", server.base_url, store_url)
    request = anyio.run(_request, store_url, first)
    assert request["agentId"] == "m1"
    assert request["metadata"] == {"model": "m1", "modelServer": f"http://127.0.0.1:{port}"}
    assert "s3cret-pw" not in json.dumps(request)
    assert "/v1" not in json.dumps(request["metadata"])
    request = anyio.run(_request, store_url, second)
    assert request["agentId"] == "org-m-2"  # an agent id has no "/"; the model keeps it
    assert request["metadata"] == {"model": "org/m-2", "modelServer": f"http://127.0.0.1:{port}"}

    code, out = _cli("runs", "--store", store_url, "--json")
    assert code == 0, out
    agents = {row["runId"]: row["agentId"] for row in json.loads(out)["runs"]}
    assert (agents[first], agents[second]) == ("m1", "org-m-2")
    code, out = _cli("runs", "--store", store_url)
    assert code == 0, out
    lines = out.splitlines()
    assert all(len(line) <= 80 for line in lines), lines
    for run_id, agent in ((first, "m1"), (second, "org-m-2")):
        at = next(i for i, line in enumerate(lines) if line.startswith(run_id))
        named = lines[at + 1].split()  # run ids are 33 columns: agent and suite go below
        assert named == [agent, "core.test.evals.named@1.0.0"], lines


def test_an_agent_files_own_agent_id_still_names_the_run(tmp_path: Path) -> None:
    with ScriptedOpenAI([Reply(content="late")]) as server:
        agent_file = tmp_path / "agent.yaml"
        doc = {"kind": "openai-compatible", "model": "m1", "baseUrl": server.base_url,
               "agentId": "team.support-bot"}  # fmt: skip
        agent_file.write_text(yaml.safe_dump(doc))
        store = str(tmp_path / "s.db")
        code, out = _cli("run", _plain_suite(tmp_path), "--agent-file", str(agent_file),
                         "--store", store, "--json")  # fmt: skip
    assert code == 0, out
    request = anyio.run(_request, store, json.loads(out)["runId"])
    assert request["agentId"] == "team.support-bot"
    assert request["metadata"]["model"] == "m1"  # type: ignore[index]


@pytest.mark.parametrize(
    ("base_url", "server"),
    [
        ("https://user:key@api.example.com/v1?api-key=sk-1#frag", "https://api.example.com"),
        ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000"),
        ("http://[::1]:9/v1/", "http://[::1]:9"),
        ("https://API.Example.com:443/openai/v1?key=x", "https://api.example.com:443"),
    ],
)
def test_the_recorded_server_is_scheme_host_and_port_only(base_url: str, server: str) -> None:
    definition = parse_definition({"kind": "openai-compatible", "model": "m", "baseUrl": base_url})
    assert model_server(definition) == server


def test_the_recorded_server_defaults_to_the_sdks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    definition = parse_definition({"kind": "openai-compatible", "model": "m"})
    assert model_server(definition) == "https://api.openai.com"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://tok:en@gw.internal:4000/v1")
    assert model_server(definition) == "http://gw.internal:4000"


def test_runs_show_the_agent_within_80_columns() -> None:
    short = run_record(agent_id="m1")
    long = run_record(agent_id="meta-llama-Llama-3.3-70B-Instruct-Turbo-with-a-long-name",
                      suite_id="core.example.evals.a-long-suite-name")  # fmt: skip
    lines = runs_lines([short, long], 80)
    assert all(len(line) <= 80 for line in lines), lines
    text = "\n".join(lines)
    assert "m1" in text
    assert "meta-llama-Llama-3.3-70B-Instruct-Turbo-with-a-long-name" in text
    assert "core.example.evals.a-long-suite-name@1.0.0" in text
    wide = runs_lines([short], 200)
    assert wide[0].split()[-2:] == ["agent", "suite"]
    assert wide[1].split()[-2:] == ["m1", "core.x.evals.support@1.0.0"]
