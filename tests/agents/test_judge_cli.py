"""``wopeval run --judge-model`` priced by ``--judge-price-in/--judge-price-out``, against scripted
OpenAI-compatible servers on loopback sockets: the judge's calls, tokens and cost are shown apart
from the agent's efficiency (RFC 0244 §C keeps the judge out of it) in the text output and in
``--json``, and its cost is part of the run's total; a rubric suite without a judge is refused,
naming both ways to give one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from wopeval.agents.scripted_openai import Reply, ScriptedOpenAI
from wopeval.cli.app import app

VERDICT = Reply(content=json.dumps({"c1": 1}), prompt_tokens=500, completion_tokens=50)


def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": "80"})
    return result.exit_code, result.output


def _rubric_suite(tmp_path: Path) -> str:
    """One rubric task, no trials, no fixtures."""
    task = {
        "taskId": "apology",
        "input": "My parcel is late.",
        "expected": {"kind": "rubric", "rubric": [{"criterion": "apologises", "weight": 1.0}]},
    }
    doc = {"suiteId": "core.test.evals.judge-cli", "version": "1.0.0", "modes": ["rubric"],
           "tasks": [task]}  # fmt: skip
    path = tmp_path / "suite.yaml"
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def _agent_file(tmp_path: Path, base_url: str) -> str:
    """A priced agent: $1 in, $2 out per million tokens."""
    doc = {"kind": "openai-compatible", "model": "agent-m", "baseUrl": base_url,
           "price": {"inputPerMTok": 1.0, "outputPerMTok": 2.0}}  # fmt: skip
    path = tmp_path / "agent.yaml"
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def _run(tmp_path: Path, store: str, *extra: str) -> tuple[int, str, ScriptedOpenAI]:
    agent_replies = [Reply(content="Sorry, it is late.", prompt_tokens=10, completion_tokens=5)]
    with (
        ScriptedOpenAI(agent_replies) as agent_server,
        ScriptedOpenAI([VERDICT]) as judge_server,
    ):
        code, out = _cli(
            "run",
            _rubric_suite(tmp_path),
            "--agent-file",
            _agent_file(tmp_path, agent_server.base_url),
            "--judge-model",
            "judge-m",
            "--judge-base-url",
            judge_server.base_url,
            "--store",
            store,
            *extra,
        )
    return code, out, judge_server


def test_0244_C_a_priced_judge_counts_in_the_total_not_in_the_agents_efficiency(
    tmp_path: Path, store_url: str
) -> None:
    price = ("--judge-price-in", "2", "--judge-price-out", "8")
    code, out, judge_server = _run(tmp_path, store_url, *price, "--json")
    assert code == 0, out
    assert len(judge_server.requests) == 1
    doc = json.loads(out)
    # The judge: 500 in x $2/M + 50 out x $8/M = $0.0010 + $0.0004 = $0.0014.
    assert doc["judge"] == {"calls": 1, "inputTokens": 500, "outputTokens": 50, "costUsd": 0.0014}
    # The agent: 10 in x $1/M + 5 out x $2/M = $0.00002; the run's total has both.
    assert doc["summary"]["totalCostUsd"] == pytest.approx(0.0014 + 0.00002, abs=1e-12)
    (task,) = doc["summary"]["tasks"]
    efficiency = task["efficiency"]
    assert (efficiency["modelCallCount"], efficiency["inputTokens"]) == (1, 10)
    assert efficiency["outputTokens"] == 5
    # A stored run shows the same, read back from its log.
    code, shown = _cli("show", doc["runId"], "--store", store_url, "--json")
    assert code == 0, shown
    assert json.loads(shown)["judge"] == doc["judge"]
    code, shown = _cli("show", doc["runId"], "--store", store_url)
    assert code == 0, shown
    assert "$0.0014 of the run's cost" in shown


def test_the_judge_line_in_the_text_output(tmp_path: Path) -> None:
    price = ("--judge-price-in", "2", "--judge-price-out", "8")
    code, out, _ = _run(tmp_path, str(tmp_path / "s.db"), *price)
    assert code == 0, out
    lines = out.splitlines()
    assert all(len(line) <= 80 for line in lines), lines
    at = next(i for i, line in enumerate(lines) if line.startswith("judge: "))
    text = "  ·  ".join(lines[at:])
    assert "judge: 1 model call" in text
    assert "500 input + 50 output tokens" in text
    assert "$0.0014 of the run's cost" in text
    assert "not in the agent's efficiency" in text


def test_an_unpriced_judge_shows_its_tokens_and_no_cost(tmp_path: Path) -> None:
    code, out, _ = _run(tmp_path, str(tmp_path / "s.db"), "--json")
    assert code == 0, out
    doc = json.loads(out)
    assert doc["judge"] == {"calls": 1, "inputTokens": 500, "outputTokens": 50, "costUsd": None}
    assert doc["summary"]["totalCostUsd"] == pytest.approx(0.00002, abs=1e-12)  # the agent's
    code, out, _ = _run(tmp_path, str(tmp_path / "s.db"))
    assert code == 0, out
    assert "unpriced (--judge-price-in/--judge-price-out)" in out


def test_show_has_no_judge_line_for_a_run_without_a_judge(tmp_path: Path) -> None:
    store = str(tmp_path / "s.db")
    with ScriptedOpenAI([Reply(content="late")]) as server:
        suite = tmp_path / "plain.yaml"
        golden = {"kind": "golden", "match": {"strategy": "exact", "value": "late"}}
        task = {"taskId": "t1", "input": "x", "expected": golden}
        suite.write_text(yaml.safe_dump({"suiteId": "core.test.evals.plain", "version": "1.0.0",
                                         "modes": ["golden"], "tasks": [task]}))  # fmt: skip
        code, out = _cli("run", str(suite), "--model", "m", "--base-url", server.base_url,
                         "--store", store, "--json")  # fmt: skip
    assert code == 0, out
    doc = json.loads(out)
    assert "judge" not in doc
    code, shown = _cli("show", doc["runId"], "--store", store, "--json")
    assert code == 0, shown
    assert "judge" not in json.loads(shown)
    code, shown = _cli("show", doc["runId"], "--store", store)
    assert "judge:" not in shown


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--judge-price-in", "2"), "--judge-price-in and --judge-price-out go together"),
        (("--judge-price-out", "2"), "--judge-price-in and --judge-price-out go together"),
        (("--judge-price-in", "inf", "--judge-price-out", "1"), "--judge-price-in: inf"),
        (("--judge-price-in", "1", "--judge-price-out", "nan"), "--judge-price-out"),
        (("--judge-price-in", "-1", "--judge-price-out", "1"), "--judge-price-in"),
    ],
)
def test_bad_judge_prices_are_refused_naming_the_option(
    tmp_path: Path, args: tuple[str, ...], message: str
) -> None:
    store = tmp_path / "s.db"
    code, out = _cli(
        "run",
        _rubric_suite(tmp_path),
        "--model",
        "m",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--judge-model",
        "j",
        "--store",
        str(store),
        *args,
    )
    assert code == 2, out
    assert message in out
    assert not store.exists()  # refused before anything is recorded


def test_judge_prices_without_judge_model_are_refused(tmp_path: Path) -> None:
    code, out = _cli("run", _rubric_suite(tmp_path), "--model", "m", "--base-url",
                     "http://127.0.0.1:9/v1", "--judge-price-in", "1", "--judge-price-out", "1",
                     "--store", str(tmp_path / "s.db"))  # fmt: skip
    assert code == 2, out
    assert "price --judge-model" in out


def test_a_rubric_suite_without_a_judge_names_judge_model_and_judge(tmp_path: Path) -> None:
    code, out = _cli("run", _rubric_suite(tmp_path), "--model", "m", "--base-url",
                     "http://127.0.0.1:9/v1", "--store", str(tmp_path / "s.db"))  # fmt: skip
    assert code == 2, out
    flat = " ".join(out.split())
    assert "tasks[0].expected.kind: rubric tasks need a judge" in flat
    assert "--judge-model MODEL" in flat
    assert "--judge package.module:attr" in flat
