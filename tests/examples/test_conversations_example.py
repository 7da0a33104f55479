"""``examples/conversations`` (issue 33 §6): the shop's twelve conversational tasks run with the
reference agent, which passes them, and with the flawed one, which fails in each way the issue
lists, each named by its recorded reason. The expectations are read from the suite and the
agents' habits, not copied from a run's output."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from examples.conversations import agents
from typer.testing import CliRunner

from tests.engine.helpers import Ran, run_suite
from wopeval.cli.app import app
from wopeval.engine.registry import Registry
from wopeval.events.store import EventStore
from wopeval.suite import load_suite
from wopeval.suite.models import AgentEvalSuite
from wopeval.wire.vocab import EVAL_SCORED, TRIAL_FAILED, USER_TURN

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "examples" / "conversations" / "suite.yaml"


def _suite() -> AgentEvalSuite:
    return load_suite(SUITE)


async def _run(store: EventStore, name: str) -> Ran:
    registry = Registry()
    registry.register_agent(f"examples.{name}", getattr(agents, name))
    return await run_suite(store, _suite(), agent_id=f"examples.{name}", registry=registry)


def _reasons(ran: Ran) -> dict[str, list[str]]:
    """Every reason text of every failed trial, by task."""
    found: dict[str, list[str]] = defaultdict(list)
    for event in ran.of_type(TRIAL_FAILED):
        payload = event.payload
        reasons = payload.get("reasons") or [payload]
        found[payload["taskId"]] += [f"{r['kind']}: {r['message']}" for r in reasons]
    return found


def test_33_6_the_suite_has_twelve_conversational_tasks_with_worlds() -> None:
    suite = _suite()
    assert len(suite.tasks) >= 12
    for task in suite.tasks:
        assert task.x_wopeval_user is not None, task.taskId
        assert task.world is not None, task.taskId
    asserted = [t for t in suite.tasks if t.expected.final_state is not None]
    pinned = [
        t
        for t in suite.tasks
        if t.expected.trajectory and any(c.pin for c in t.expected.trajectory.calls)
    ]
    assert len(asserted) >= 9
    assert len(pinned) >= 3


@pytest.mark.slow  # 24 trials through the engine
async def test_33_6_reference_passes_every_task(store: EventStore) -> None:
    ran = await _run(store, "reference")
    scored = ran.of_type(EVAL_SCORED)
    trials = len(_suite().tasks) * 2  # trials: {count: 2}
    assert len(scored) == trials
    failed = [
        (e.payload["taskId"], e.payload["scoreLabel"]) for e in scored if not e.payload["passed"]
    ]
    assert failed == []
    assert ran.done.passed
    assert ran.of_type(TRIAL_FAILED) == []
    # Every trial talked to its user and ended on the user's stop, never on a miss.
    kinds = {e.payload["kind"] for e in ran.of_type(USER_TURN)}
    assert kinds == {"reply", "stop"}


@pytest.mark.slow  # 24 trials through the engine
async def test_33_6_flawed_fails_in_each_way_the_issue_lists(store: EventStore) -> None:
    ran = await _run(store, "flawed")
    reasons = _reasons(ran)
    labels = {e.payload["taskId"]: e.payload["scoreLabel"] for e in ran.of_type(EVAL_SCORED)}

    def has(task: str, text: str) -> bool:
        return any(text in reason for reason in reasons[task])

    # refunds twice: the back end pays again, the final state shows two refunds
    assert has("refund-after-wrong-order-number", "final-state: final state (subset) differs at "
               "/orders/A-1009/refunds: expected 1, got 2")  # fmt: skip
    # refunds before the customer said yes: the pinned turn does not hold
    assert has("refund-cracked-kettle", "trajectory: turn pin: expected call #1 shop:refund is "
               "pinned to turn 2, made in turn 1")  # fmt: skip
    assert reasons["refund-cracked-kettle"][0].startswith("trajectory: turn pin")
    # an unscripted question: user-miss, the user side's failure
    assert labels["change-address-before-shipping"] == "user-miss"
    question = '"For security, what is your date of birth?"'
    assert has("change-address-before-shipping", f"user-miss: user miss (onMiss: fail): the "
               f"user's script has no reply to {question}")  # fmt: skip
    # ends early: no cancellation, the order still processing
    assert has("cancel-processing-order", "trajectory: trajectory (in-order): missing shop:cancel")
    assert has("cancel-processing-order", '/orders/B-2002/status: expected "cancelled"')
    # a forbidden tool, and the credit it left in the state
    assert has("late-delivery-complaint", "trajectory: forbidden tool shop:goodwill-credit")
    # a wrong final state
    assert has("exchange-shoe-size", "/orders/C-3100/exchange/size: expected 43, got 44")
    # Every failed trial is one of these tasks, each of its two trials; the rest pass.
    failing = {
        "refund-after-wrong-order-number",
        "refund-cracked-kettle",
        "change-address-before-shipping",
        "cancel-processing-order",
        "late-delivery-complaint",
        "exchange-shoe-size",
    }
    failed = [e.payload["taskId"] for e in ran.of_type(EVAL_SCORED) if not e.payload["passed"]]
    assert sorted(failed) == sorted([*failing, *failing])
    side = ran.done.model_dump(by_alias=True)["x-wopeval-userSide"]
    assert side["userMiss"] == 2  # the two trials of the one task it asked its question in
    assert not ran.done.passed  # 12 of 24 trials pass: under passScore 0.8


def _wopeval(*args: str) -> tuple[int, dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, "-m", "wopeval.cli", *args],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    return done.returncode, json.loads(done.stdout)


def _cli(agent: str, store: Path) -> tuple[int, dict[str, Any]]:
    suite, agent_ref = str(SUITE.relative_to(ROOT)), f"examples.conversations.agents:{agent}"
    code, ran = _wopeval("run", suite, "--agent", agent_ref, "--json", "--store", str(store))
    # The stored run re-grades to the same summary (the pins and turns are read from the log);
    # in process: the run above is the one this test needs a real process for.
    regrade = CliRunner().invoke(app, ["grade", ran["runId"], "--json", "--store", str(store)])
    assert regrade.exit_code == 0, regrade.output
    summary = json.loads(regrade.stdout)
    assert summary == ran["summary"]
    return code, ran


@pytest.mark.slow
def test_33_6_both_agents_run_from_the_repository_root_with_json(tmp_path: Path) -> None:
    code, reference = _cli("reference", tmp_path / "a.db")
    assert code == 0
    assert reference["failures"] == []
    assert reference["summary"]["x-wopeval-userSide"]["passRate"] == 1.0
    code, flawed = _cli("flawed", tmp_path / "b.db")
    assert code == 1  # the run failed its gate: the agent's result
    kinds = {failure["kind"] for failure in flawed["failures"]}
    assert kinds == {"trajectory", "final-state", "user-miss"}
    assert flawed["summary"]["x-wopeval-userSide"]["userMiss"] == 2
