"""Server-free parts of the extension legs: brackets, the extension fixtures, cost tolerance."""

from __future__ import annotations

import copy
import json
from fractions import Fraction
from typing import Any

import httpx
import pytest
import typer
from typer.testing import CliRunner

from tests.conformance.fake_host import API_KEY, FakeHost
from wopeval.cli import conformance_cmd
from wopeval.conformance import ConformanceReport, run_conformance
from wopeval.conformance import catalog as C
from wopeval.conformance.brackets import trial_events
from wopeval.conformance.legs.efficiency import relatively_equal, scripted_counts
from wopeval.conformance.legs.ext_fixtures import check_ext_fixtures, ext_fixture_errors
from wopeval.conformance.suites import load_fixture


def _event(
    seq: int, type_: str, payload: dict[str, Any], cause: str | None = None
) -> dict[str, Any]:
    event: dict[str, Any] = {
        "eventId": f"e{seq}",
        "sequence": seq,
        "type": type_,
        "payload": payload,
    }
    if cause is not None:
        event["causationId"] = cause
    return event


def _interleaved_log() -> list[dict[str, Any]]:
    """Two marked trials interleaved, a judge usage caused by a root after its bracket closed."""

    def root(index: int) -> dict[str, Any]:
        return {"x-wopeval-taskId": "t", "x-wopeval-trialIndex": index, "agentId": "a",
                "invocationId": f"i{index}"}  # fmt: skip

    return [
        _event(0, "agent.invocation-started", root(0)),
        _event(1, "agent.invocation-started", root(1)),
        _event(2, "agent.tool-called", {"toolName": "x", "agentId": "a"}, "e0"),
        _event(3, "provider.usage", {"inputTokens": 1}, "e1"),
        _event(4, "agent.tool-called", {"toolName": "y", "agentId": "a"}, "e1"),
        _event(5, "agent.invocation-completed", {"invocationId": "i0"}, "e0"),
        _event(6, "provider.usage", {"inputTokens": 99}, "e0"),  # judge, after the bracket
        _event(7, "agent.invocation-completed", {"invocationId": "i1"}, "e1"),
        _event(8, "eval.scored", {"taskId": "t", "trialIndex": 0}, "e0"),
        _event(9, "eval.scored", {"taskId": "t", "trialIndex": 1}, "e1"),
    ]  # fmt: skip


def test_0244_C_brackets_follow_causation_and_stop_at_the_close() -> None:
    found = trial_events(_interleaved_log())
    assert [e["sequence"] for e in found[("t", 0)]] == [2, 5]
    assert [e["sequence"] for e in found[("t", 1)]] == [3, 4, 7]


def test_0244_C_brackets_by_position_without_causation() -> None:
    log = [
        _event(0, "agent.invocation-started", {"invocationId": "i0", "agentId": "a"}),
        _event(1, "provider.usage", {"inputTokens": 5}),
        _event(2, "agent.invocation-started", {"invocationId": "d0", "agentId": "helper"}),
        _event(3, "agent.tool-called", {"toolName": "x", "agentId": "helper"}),
        _event(4, "agent.invocation-completed", {"invocationId": "d0"}),
        _event(5, "agent.invocation-completed", {"invocationId": "i0"}),
        _event(6, "provider.usage", {"inputTokens": 99}),  # outside every bracket
        _event(7, "eval.scored", {"taskId": "t"}),
    ]
    assert [e["sequence"] for e in trial_events(log)[("t", 0)]] == [1, 2, 3, 4, 5]


def test_ext_fixtures_are_sound() -> None:
    suites = {fixture: load_fixture(fixture) for fixture in C.EXT_FIXTURES}
    ck = check_ext_fixtures(dict(suites))
    assert ck.passed, ck.failures
    assert ck.checks == 5
    # Hand-worked: busy-but-correct trial 1 makes 10 calls and 3 usages of $0.015.
    busy = suites[C.EFFICIENCY_FIXTURE]["tasks"][1]
    counts = scripted_counts(busy, 1)
    assert (counts.toolCallCount, counts.modelCallCount) == (10, 3)
    assert counts.cost == 3 * Fraction(0.015)


def _broken(fixture: C.Fixture, edit: Any) -> list[str]:
    suite = copy.deepcopy(load_fixture(fixture))
    edit(suite)
    return ext_fixture_errors(fixture, suite)


def test_ext_fixture_designs_that_would_make_a_leg_vacuous_are_refused() -> None:
    def no_cost(suite: dict[str, Any]) -> None:
        del suite["tasks"][0]["input"]["usage"][0]["costEstimateUsd"]

    def remember_the_seed(suite: dict[str, Any]) -> None:
        suite["tasks"][0]["input"]["remember"][0]["value"] = "seeded-open"

    def serve_everything(suite: dict[str, Any]) -> None:
        suite["tasks"][0]["fixtures"]["toolResponses"][0]["argsMatch"] = "ignore"

    def one_trial(suite: dict[str, Any]) -> None:
        suite["trials"] = {"count": 2}

    assert "usage without a cost" in _broken(C.EFFICIENCY_FIXTURE, no_cost)[0]
    assert "remember another value" in _broken(C.ISOLATION_FIXTURE, remember_the_seed)[0]
    assert "misses under onMiss 'live'" in _broken(C.ONMISS_LIVE_FIXTURE, serve_everything)[0]
    assert _broken(C.ISOLATION_FIXTURE, one_trial) == ["design: needs 3 trials"]


def test_ext_unreadable_fixture_fails_the_leg() -> None:
    ck = check_ext_fixtures({C.ISOLATION_FIXTURE: "cannot read conformance-eval-isolation.json"})
    assert ck.failures == [
        "conformance-eval-isolation: cannot read conformance-eval-isolation.json"
    ]


@pytest.mark.parametrize(
    ("host", "want", "ok"),
    [
        (0.1725, Fraction(0.1725), True),
        (0.1725 * (1 + 5e-10), Fraction(0.1725), True),
        (0.1725 * (1 + 5e-9), Fraction(0.1725), False),  # relative, not max(1, …)
        (0.0, Fraction(0), True),
        (1e-12, Fraction(0), False),
        (True, Fraction(1), False),
        ("0.1725", Fraction(0.1725), False),
    ],
)
def test_0244_B_cost_tolerance_is_relative(host: object, want: Fraction, ok: bool) -> None:
    assert relatively_equal(host, want) is ok


def test_conformance_cmd_extended_flag(monkeypatch: pytest.MonkeyPatch) -> None:
    async def patched(base_url: str, api_key: str, **options: Any) -> ConformanceReport:
        transport = httpx.ASGITransport(app=FakeHost(defects=frozenset({"memory-bleed"})).app())
        return await run_conformance(base_url, api_key, transport=transport, **options)

    monkeypatch.setattr(conformance_cmd, "run_conformance", patched)
    app = typer.Typer()

    @app.callback()
    def main() -> None:
        """Test application."""

    conformance_cmd.register(app)
    args = ["conformance", "--base-url", "http://fake-host.test", "--api-key", API_KEY, "--json"]
    plain = CliRunner().invoke(app, args)
    assert plain.exit_code == 0, plain.output
    assert [r["requirement"] for r in json.loads(plain.output)["results"]] == list(C.REQUIREMENTS)
    extended = CliRunner().invoke(app, [*args, "--extended"])
    assert extended.exit_code == 1
    doc = json.loads(extended.output)
    assert doc["extended"] is True
    failed = [r["requirement"] for r in doc["results"] if r["status"] == "executed-fail"]
    assert failed == [C.EXT_TRIAL_ISOLATION]
