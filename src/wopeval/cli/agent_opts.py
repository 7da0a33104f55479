"""``wopeval run`` options for real agents: ``--agent-file``, ``--model``/``--base-url``,
``--agent-cmd`` and ``--judge-model``. Each builds an agent (or judge) and registers it, so the
run itself is the same as for ``--agent``."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import anyio
import typer

from wopeval.cli.common import check_finite, fail_input
from wopeval.engine.judge import Judge
from wopeval.engine.registry import Registry
from wopeval.suite.models import AgentEvalSuite

if TYPE_CHECKING:  # imported when an option names an agent: --agent runs without them
    from wopeval.agents.definition import AgentDefinition

AgentFileOpt = Annotated[
    Path | None,
    typer.Option(help="Agent definition file (agent.yaml/.json; see `wopeval schema agent`)."),
]
ModelOpt = Annotated[
    str | None, typer.Option(help="Evaluate this model as an OpenAI-compatible tool-loop agent.")
]
BaseUrlOpt = Annotated[
    str | None, typer.Option(help="With --model/--judge-model: the server, e.g. http://h:8000/v1.")
]
ApiKeyEnvOpt = Annotated[
    str, typer.Option(help="With --model/--judge-model: the env var holding the API key.")
]
AgentCmdOpt = Annotated[
    str | None,
    typer.Option(help="Run this command per trial (task input on stdin, tools over MCP)."),
]
JudgeModelOpt = Annotated[
    str | None, typer.Option(help="LLM judge for rubric tasks (OpenAI-compatible model name).")
]
JudgeBaseUrlOpt = Annotated[
    str | None, typer.Option(help="The judge's server (default: --base-url).")
]
UserModelOpt = Annotated[
    str | None,
    typer.Option(help="The model of every LLM user (x-wopeval-user kind llm), over the suite's."),
]
UserBaseUrlOpt = Annotated[
    str | None,
    typer.Option(help="The server of every LLM user (x-wopeval-user kind llm), over the suite's."),
]
JudgePriceInOpt = Annotated[
    float | None,
    typer.Option(
        min=0, help="With --judge-model: USD per million input tokens (the judge's cost counts)."
    ),
]
JudgePriceOutOpt = Annotated[
    float | None,
    typer.Option(min=0, help="With --judge-model: USD per million output tokens."),
]
JudgeTrajectoryOpt = Annotated[
    bool,
    typer.Option(
        "--judge-trajectory", help="Also show the --judge-model judge the trial's tool calls."
    ),
]


@dataclass(frozen=True)
class AgentOptions:
    agent_file: Path | None = None
    model: str | None = None
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    agent_cmd: str | None = None


@dataclass(frozen=True)
class Chosen:
    """The agent these options registered, the MCP servers its definition lists, and what the
    run's settings record of it (a model's name and server, never a key)."""

    agent_id: str
    mcp: list[str] = field(default_factory=list)
    metadata: dict[str, str] = field(default_factory=dict)


def _definition(options: AgentOptions) -> AgentDefinition | None:
    given = [
        name
        for name, value in (
            ("--agent-file", options.agent_file),
            ("--model", options.model),
            ("--agent-cmd", options.agent_cmd),
        )
        if value is not None
    ]
    if len(given) > 1:
        fail_input(f"{' and '.join(given)} cannot be combined: give one agent")
    if not given:
        if options.base_url is not None:
            fail_input("--base-url needs --model (or --judge-model)")
        return None
    from wopeval.agents.build import command_definition, model_definition
    from wopeval.agents.definition import DefinitionError, load_definition

    try:
        if options.agent_file is not None:
            return load_definition(options.agent_file)
        if options.model is not None:
            return model_definition(options.model, options.base_url, options.api_key_env)
        if options.agent_cmd is not None:
            return command_definition(options.agent_cmd)
    except DefinitionError as exc:
        fail_input("\n".join(str(e) for e in exc.errors), title=f"invalid agent {exc.source}")
    return None


def install_cli_agent(
    registry: Registry,
    suite: AgentEvalSuite,
    options: AgentOptions,
    *,
    agent: str | None,
    timeout_s: float,
    max_cost_usd: float | None,
) -> Chosen | None:
    """Register the agent the options describe; ``None`` when they describe none."""
    definition = _definition(options)
    if definition is None:
        return None
    if agent is not None:
        fail_input("--agent cannot be combined with --agent-file, --model or --agent-cmd")
    from wopeval.agents.build import install_agent, model_server, preflight

    try:
        installed = install_agent(
            registry,
            definition,
            target=suite.targetAgentId,
            timeout_s=timeout_s,
            max_cost_usd=max_cost_usd,
        )
        anyio.run(preflight, installed.agent)  # a model the server does not have: refused
    except (ValueError, ImportError) as exc:
        fail_input(str(exc))
    metadata = {}
    if definition.kind == "openai-compatible" and definition.model is not None:
        metadata = {"model": definition.model, "modelServer": model_server(definition)}
    return Chosen(installed.agent_id, installed.mcp, metadata)


def cli_judge(
    judge_model: str | None,
    judge_base_url: str | None,
    options: AgentOptions,
    include_trajectory: bool = False,
    price: tuple[float | None, float | None] = (None, None),
) -> Judge | None:
    """The LLM judge ``--judge-model`` describes (its server defaults to ``--base-url``),
    priced by ``--judge-price-in``/``--judge-price-out`` (both or neither)."""
    if judge_model is None:
        if price != (None, None):
            fail_input("--judge-price-in/--judge-price-out price --judge-model: give it too")
        return None
    from wopeval.agents.build import model_definition
    from wopeval.agents.definition import DefinitionError, Price
    from wopeval.agents.judge_llm import LLMJudge

    base_url = judge_base_url or options.base_url
    try:
        definition = model_definition(judge_model, base_url, options.api_key_env)
    except DefinitionError as exc:
        fail_input("\n".join(str(e) for e in exc.errors), title="invalid --judge-model")
    price_in, price_out = price
    if (price_in is None) != (price_out is None):
        fail_input("--judge-price-in and --judge-price-out go together: give both")
    if price_in is not None and price_out is not None:
        check_finite("--judge-price-in", price_in)
        check_finite("--judge-price-out", price_out)
        priced = Price(inputPerMTok=price_in, outputPerMTok=price_out)
        definition = definition.model_copy(update={"price": priced})
    return LLMJudge(definition, include_trajectory=include_trajectory)
