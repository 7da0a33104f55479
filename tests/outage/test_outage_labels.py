"""Which trial failures are the infrastructure's: through the real engine on both stores, and the
pure pieces (the cause search, the run's exit code, the model probe against a real socket)."""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest
import typer

from tests.agents.helpers import AgentRan
from tests.engine.helpers import make_suite, run_suite
from tests.outage.model_server import ModelServer
from wopeval.agents.build import model_definition
from wopeval.agents.openai_compat import ModelNotFound, ModelUnavailable, OpenAICompatAgent
from wopeval.cli.outage import run_exit_code, store_outage_exits
from wopeval.engine.agent import AgentContext
from wopeval.engine.cmd_agent import CommandAgent
from wopeval.engine.mcp_tools import McpServerFailed, mcp_live_tools
from wopeval.engine.outage import infrastructure_cause, waiting_on
from wopeval.engine.registry import Registry
from wopeval.engine.run import RunSettings
from wopeval.errors import InfrastructureError, StoreError
from wopeval.events.store import EventStore
from wopeval.grading.detail import RunDetail, TaskDetail, TrialCell
from wopeval.wire.events import TrialFailed
from wopeval.wire.vocab import INVOCATION_COMPLETED, TRIAL_FAILED, X_ERROR

AGENT_ID = "core.test.agents.outage"
DYING_MCP = Path(__file__).with_name("dying_mcp_server.py")


# More than a pipe holds: a command that exits without reading it always finds it unread.
UNREAD = "x" * 300_000


async def _run_agent(
    store: EventStore, agent: Any, *, timeout_s: float = 30.0, task_input: Any = "hi"
) -> AgentRan:
    registry = Registry()
    registry.register_agent(AGENT_ID, agent)
    expected = {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}}
    task = {"taskId": "t", "input": task_input, "expected": expected}
    settings = RunSettings(trial_timeout_s=timeout_s)
    ran = await run_suite(
        store, make_suite([task]), agent_id=AGENT_ID, registry=registry, settings=settings
    )
    return AgentRan(ran.run_id, ran.summary, ran.events)


def _label_and_reason(ran: AgentRan) -> tuple[str | None, str, str]:
    (completed,) = [e.payload for e in ran.of_type(INVOCATION_COMPLETED)]
    (reason,) = [e.payload for e in ran.of_type(TRIAL_FAILED)]
    return completed.get(X_ERROR), reason["kind"], reason["message"]


# --- through the engine -------------------------------------------------------------------------


async def test_an_infrastructure_error_wrapped_by_a_framework_is_infrastructure(
    store: EventStore,
) -> None:
    async def wrapped(task_input: Any, ctx: AgentContext) -> Any:
        try:
            raise ModelUnavailable("the model server at http://h/v1 answered HTTP 503")
        except ModelUnavailable as exc:
            raise ExceptionGroup(
                "the framework's task group", [RuntimeError("run failed")]
            ) from exc

    ran = await _run_agent(store, wrapped)
    label, kind, message = _label_and_reason(ran)
    assert (label, kind) == ("infrastructure", "infrastructure")
    assert message == (
        "infrastructure: ModelUnavailable: the model server at http://h/v1 answered HTTP 503"
    )
    assert ran.done.passed is False


async def test_an_agents_own_error_stays_an_agent_error(store: EventStore) -> None:
    async def broken(task_input: Any, ctx: AgentContext) -> Any:
        raise RuntimeError("a bug in the agent")

    label, kind, _ = _label_and_reason(await _run_agent(store, broken))
    assert (label, kind) == ("agent-error", "agent-error")


async def test_a_timeout_while_waiting_on_a_component_is_infrastructure(store: EventStore) -> None:
    async def stuck(task_input: Any, ctx: AgentContext) -> Any:
        with waiting_on("the model server at http://h/v1"):
            await anyio.sleep_forever()

    label, kind, message = _label_and_reason(await _run_agent(store, stuck, timeout_s=0.2))
    assert (label, kind) == ("infrastructure", "infrastructure")
    assert message == (
        "infrastructure: TimeoutError: the model server at http://h/v1 did not answer within the "
        "trial timeout of 0.2s"
    )


async def test_a_timeout_after_the_component_answered_is_the_agents(store: EventStore) -> None:
    async def slow_after(task_input: Any, ctx: AgentContext) -> Any:
        with waiting_on("the model server at http://h/v1"):
            await anyio.lowlevel.checkpoint()  # it answered
        await anyio.sleep_forever()  # then the agent itself went on too long

    label, kind, _ = _label_and_reason(await _run_agent(store, slow_after, timeout_s=0.2))
    assert (label, kind) == ("timeout", "timeout")


async def test_an_agent_command_killed_by_a_signal_is_infrastructure(store: EventStore) -> None:
    killed = CommandAgent(f"{sys.executable} -c 'import os; os.kill(os.getpid(), 9)'")
    label, kind, message = _label_and_reason(await _run_agent(store, killed, task_input=UNREAD))
    assert (label, kind) == ("infrastructure", "infrastructure")
    assert "was killed by SIGKILL mid-run" in message


async def test_an_agent_command_exiting_non_zero_is_the_agents(store: EventStore) -> None:
    failed = CommandAgent(f"{sys.executable} -c 'import sys; sys.exit(1)'")
    label, kind, message = _label_and_reason(await _run_agent(store, failed, task_input=UNREAD))
    assert (label, kind) == ("agent-error", "agent-error")
    assert "exited with status 1" in message


def test_an_agent_command_not_on_path_is_refused_when_made() -> None:
    with pytest.raises(ValueError, match="'no-such-agent-cmd' is not an executable found on PATH"):
        CommandAgent("no-such-agent-cmd --flag")


# --- the cause search ---------------------------------------------------------------------------


def test_infrastructure_cause_searches_causes_contexts_and_groups() -> None:
    infra = InfrastructureError("the MCP server 'x' exited mid-run")
    assert infrastructure_cause(infra) is infra
    caused = RuntimeError("wrapped")
    caused.__cause__ = infra
    assert infrastructure_cause(caused) is infra
    assert infrastructure_cause(ExceptionGroup("g", [ValueError("v"), caused])) is infra
    assert infrastructure_cause(RuntimeError("plain")) is None
    looping = RuntimeError("a")
    other = RuntimeError("b")
    looping.__context__, other.__context__ = other, looping  # a cycle ends the search
    assert infrastructure_cause(looping) is None


def test_waiting_on_outside_a_trial_does_nothing() -> None:
    with waiting_on("the model server at http://h/v1"):
        pass


# --- the run's exit code ------------------------------------------------------------------------


def _detail(*kinds: str | None) -> RunDetail:
    """One task whose trials passed (None) or failed with these reason kinds."""
    cells = []
    for index, kind in enumerate(kinds):
        if kind is None:
            cells.append(TrialCell(index, "pass", 1.0, None))
            continue
        message = f"{kind}: the model server at x"
        reason = TrialFailed(taskId="t", trialIndex=index, kind=kind, message=message)
        cells.append(TrialCell(index, "error", 0.0, reason))
    return RunDetail([TaskDetail("t", cells, 0.0, False)], 0.0, 1.0, False, True, False)


def test_the_outage_line_stays_one_printable_line(capsys: pytest.CaptureFixture[str]) -> None:
    reason = TrialFailed(taskId="t", trialIndex=0, kind="infrastructure",
                         message="infrastructure: \x1b[2Jserver\r\nTraceback\x07 gone")  # fmt: skip
    detail = RunDetail([TaskDetail("t", [TrialCell(0, "error", 0.0, reason)], 0.0, False)],
                       0.0, 1.0, False, True, False)  # fmt: skip
    assert run_exit_code("local/r1", False, detail) == 3
    (line,) = capsys.readouterr().err.splitlines()
    assert line.endswith(": [2Jserver Traceback gone")
    assert line.isprintable()


@pytest.mark.parametrize(
    ("passed", "kinds", "code", "said"),
    [
        (False, ("agent-error",), 1, None),
        (False, ("infrastructure",), 3, "1 of 1 trial(s)"),
        (False, ("agent-error", "infrastructure"), 3, "1 of 2 trial(s)"),  # cannot be judged
        (True, (None, None, "infrastructure"), 0, "1 of 3 trial(s)"),  # passed in spite of it
        (True, (None,), 0, None),
    ],
)
def test_run_exit_code(
    passed: bool,
    kinds: tuple[str | None, ...],
    code: int,
    said: str | None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert run_exit_code("local/r1", passed, _detail(*kinds)) == code
    err = capsys.readouterr().err
    if said is None:
        assert err == ""
    else:
        (line,) = err.splitlines()
        assert line.startswith(f"outage: {said} of run local/r1 failed for infrastructure")
        assert line.endswith(": the model server at x")
        assert ("could not be judged (exit 3)" in line) is (not passed)


# --- the model probe ------------------------------------------------------------------------------


def _agent(base_url: str, model: str) -> OpenAICompatAgent:
    return OpenAICompatAgent(model_definition(model, base_url, None), timeout_s=5.0)


async def test_the_probe_refuses_only_a_404_that_names_the_model() -> None:
    for style in ("openai", "vllm"):
        with ModelServer("answer", models=("m1",), not_found=style) as server:
            await _agent(server.base_url, "m1").preflight()  # it has it
            with pytest.raises(ModelNotFound, match="has no model 'm2'"):
                await _agent(server.base_url, "m2").preflight()
            with pytest.raises(ModelNotFound, match="has no model 'a'"):  # a short name
                await _agent(server.base_url, "a").preflight()
    with ModelServer("answer", not_found="route") as server:  # no such route: proves nothing
        await _agent(server.base_url, "m2").preflight()
        assert server.requests == [("GET", "/v1/models/m2")]
    with ModelServer("error-500") as server:  # failing now: the trials will say so
        await _agent(server.base_url, "m1").preflight()
        assert server.requests == [("GET", "/v1/models/m1")]  # no retry, no completion


# --- the store lost under a command ---------------------------------------------------------------


LOST = "could not append to run 'local/r1': the connection is closed"


def _log_store_failure() -> None:
    try:
        raise StoreError(LOST)
    except StoreError:
        logging.getLogger("wopeval.engine").error("run local/r1 failed", exc_info=True)


def _run_losing_the_store(store_url: str) -> None:
    """What a run does when its store is lost: logs it, then raises it in a task group."""
    with store_outage_exits(store_url):
        _log_store_failure()
        raise ExceptionGroup("the run's task group", [StoreError(LOST)])


def test_a_store_lost_under_a_command_is_one_line_and_exit_3(
    capsys: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    with pytest.raises(typer.Exit) as stopped:
        _run_losing_the_store("postgresql://u:secret@db/x")
    assert stopped.value.exit_code == 3
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("outage: the event store postgresql://u:***@db/x failed mid-run")
    assert "secret" not in line
    assert caplog.records == []  # its traceback is not logged: the line says it


def test_a_store_failure_the_command_survives_is_still_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with store_outage_exits(None):
        _log_store_failure()
    (record,) = caplog.records
    assert record.getMessage() == "run local/r1 failed"
    assert record.exc_info is not None


def _inner_handler_exits() -> None:
    """What a handler inside the command does: says how the run ended, and exits 3."""
    with store_outage_exits(None):
        try:
            raise StoreError(LOST)
        except StoreError:
            raise typer.Exit(3) from None


def test_an_exit_already_decided_passes_through(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(typer.Exit) as stopped:
        _inner_handler_exits()
    assert stopped.value.exit_code == 3
    assert capsys.readouterr().err == ""  # no second line


# --- an MCP server that never answers -------------------------------------------------------------


async def test_an_mcp_server_that_never_answers_is_refused_within_its_start_up_time() -> None:
    command = [sys.executable, str(DYING_MCP), "--hang-at-start"]
    with pytest.raises(McpServerFailed, match=r"did not start: no answer to initialize .* 0.5s"):
        async with mcp_live_tools(command, startup_timeout_s=0.5):
            pytest.fail("a server that never answers yields no tools")


async def test_a_timeout_while_an_mcp_server_hangs_is_infrastructure(store: EventStore) -> None:
    async def calls_stall(task_input: Any, ctx: AgentContext) -> Any:
        return (await ctx.call_tool("crm:stall", {"orderId": "A1"})).value

    command = [sys.executable, str(DYING_MCP)]
    async with mcp_live_tools(command, prefix="crm:") as tools:
        registry = Registry()
        registry.register_agent(AGENT_ID, calls_stall)
        registry.register_tool("crm:stall", tools["crm:stall"])
        expected = {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}}
        suite = make_suite([{"taskId": "t", "input": "hi", "expected": expected}])
        settings = RunSettings(trial_timeout_s=0.5)
        ran = await run_suite(store, suite, agent_id=AGENT_ID, registry=registry, settings=settings)
    label, kind, message = _label_and_reason(AgentRan(ran.run_id, ran.summary, ran.events))
    assert (label, kind) == ("infrastructure", "infrastructure")
    assert message.startswith("infrastructure: TimeoutError: the MCP server '")
    assert message.endswith("' did not answer within the trial timeout of 0.5s")
