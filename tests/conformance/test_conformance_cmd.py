"""``wopeval conformance`` through the CLI runner, against the in-process fake host."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
import typer
from typer.testing import CliRunner

from tests.conformance.fake_host import API_KEY, FakeHost
from wopeval.cli import conformance_cmd
from wopeval.conformance import ConformanceReport, run_conformance


def _app() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def main() -> None:
        """Test application."""

    conformance_cmd.register(app)
    return app


@pytest.fixture
def serve(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Point the command at a fake host; returns a setter."""

    def use(host: FakeHost) -> None:
        async def patched(base_url: str, api_key: str, **options: Any) -> ConformanceReport:
            transport = httpx.ASGITransport(app=host.app())
            return await run_conformance(base_url, api_key, transport=transport, **options)

        monkeypatch.setattr(conformance_cmd, "run_conformance", patched)

    return use


ARGS = ["conformance", "--base-url", "http://fake-host.test", "--api-key", API_KEY]


def test_conformance_cmd_table_and_exit_zero(serve: Any) -> None:
    serve(FakeHost())
    result = CliRunner().invoke(_app(), ARGS, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "0244.trajectory-graded" in result.output
    assert "executed-pass" in result.output
    assert "Conformance: PASS" in result.output


def test_conformance_cmd_json_and_exit_one_on_failure(serve: Any) -> None:
    serve(FakeHost(defects=frozenset({"miss-keeps-score"})))
    result = CliRunner().invoke(_app(), [*ARGS, "--json"])
    assert result.exit_code == 1
    doc = json.loads(result.output)
    by_id = {r["requirement"]: r for r in doc["results"]}
    assert by_id["0244.fixture-miss-fails"]["status"] == "executed-fail"
    assert by_id["0244.fixture-miss-fails"]["failures"]
    assert doc["passed"] is False
    assert doc["counts"]["executed-fail"] == 1


def test_conformance_cmd_require_behavior_flag(serve: Any) -> None:
    serve(FakeHost(fixtures=("conformance-eval-trials", "conformance-eval-fixture-miss")))
    soft = CliRunner().invoke(_app(), [*ARGS, "--json"])
    assert soft.exit_code == 0
    hard = CliRunner().invoke(_app(), [*ARGS, "--json", "--require-behavior"])
    assert hard.exit_code == 1
    assert json.loads(hard.output)["requireBehavior"] is True


def test_conformance_cmd_bad_input_exits_two() -> None:
    args = ["conformance", "--base-url", "http://127.0.0.1:9", "--api-key", "k", "--timeout", "5"]
    result = CliRunner().invoke(_app(), args)
    assert result.exit_code == 2
    assert "cannot reach the host" in result.output


def test_conformance_cmd_reads_environment(serve: Any) -> None:
    serve(FakeHost())
    env = {"OPENWOP_BASE_URL": "http://fake-host.test", "OPENWOP_API_KEY": API_KEY}
    result = CliRunner().invoke(_app(), ["conformance", "--json"], env=env)
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["baseUrl"] == "http://fake-host.test"
