"""What ``wopeval run`` runs a suite against: the agent, its live tools and the judge, each
resolved from the command's options and checked against the suite before anything runs."""

from __future__ import annotations

from typing import NamedTuple

from wopeval.agents.cassette import active_cassette
from wopeval.cli.agent_opts import AgentOptions, cli_judge, install_cli_agent
from wopeval.cli.common import fail_input
from wopeval.engine.judge import Judge, JudgeRequired
from wopeval.engine.registry import AgentNotFound, Registry, import_object
from wopeval.engine.run import check_runnable
from wopeval.suite.models import AgentEvalSuite


class RunTarget(NamedTuple):
    """What the suite runs against: the agent, its live tools and the judge."""

    registry: Registry
    agent_id: str
    judge: Judge | None
    mcp_specs: list[tuple[str, list[str]]]
    metadata: dict[str, str]


def resolve_target(
    suite: AgentEvalSuite,
    options: AgentOptions,
    agent: str | None,
    override_target: bool,
    tool: list[str] | None,
    mcp: list[str] | None,
    trial_timeout: float,
    max_cost: float | None,
    judge: str | None,
    judge_model: str | None,
    judge_base_url: str | None,
    judge_trajectory: bool,
    judge_price: tuple[float | None, float | None],
) -> RunTarget:
    """The agent (an id, an import path or one built from the agent options), the live tools
    and the judge, each checked against the suite; a bad one exits 2 naming its option."""
    registry = Registry()
    chosen = install_cli_agent(
        registry, suite, options, agent=agent, timeout_s=trial_timeout, max_cost_usd=max_cost
    )
    if chosen is not None:
        agent, override_target, mcp = chosen.agent_id, True, [*chosen.mcp, *(mcp or ())]
    if judge and judge_model:
        fail_input("--judge and --judge-model cannot be combined")
    try:
        agent_id = choose_agent(suite, agent, override_target, registry)
        if active_cassette() is not None:  # --record-model/--replay-model
            from wopeval.agents.build import check_cassette  # the agents' builders: not before

            check_cassette(registry.resolve(agent_id))
        for spec in tool or ():
            name, _, ref = spec.partition("=")
            if not name or not ref:
                fail_input(f"--tool: {spec!r} is not NAME=package.module:attr")
            registry.register_tool(name, import_object(ref))
        llm_judge = cli_judge(judge_model, judge_base_url, options, judge_trajectory, judge_price)
        judge_obj: Judge | None = import_object(judge) if judge else llm_judge
        check_runnable(suite, judge_obj)
        mcp_specs = mcp_server_specs(mcp)
    except (AgentNotFound, JudgeRequired, ValueError) as exc:
        fail_input(str(exc))
    metadata = dict(chosen.metadata) if chosen is not None else {}
    return RunTarget(registry, agent_id, judge_obj, mcp_specs, metadata)


def choose_agent(
    suite: AgentEvalSuite, agent: str | None, override: bool, registry: Registry
) -> str:
    chosen = agent or suite.targetAgentId
    if chosen is None:
        fail_input("--agent is required: the suite declares no targetAgentId")
    registry.resolve(chosen)  # an unknown agent is reported as such, before any target advice
    if suite.targetAgentId and chosen != suite.targetAgentId and not override:
        fail_input(
            f"targetAgentId: the suite is authored for {suite.targetAgentId!r}, not {chosen!r} "
            "(pass --override-target to run it anyway)"
        )
    return chosen


def mcp_server_specs(mcp: list[str] | None) -> list[tuple[str, list[str]]]:
    if not mcp:
        return []
    from wopeval.engine.mcp_tools import parse_mcp_spec

    return [parse_mcp_spec(spec) for spec in mcp]


__all__ = ["RunTarget", "choose_agent", "mcp_server_specs", "resolve_target"]
