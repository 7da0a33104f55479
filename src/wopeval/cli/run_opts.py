"""``wopeval run``'s own options (the agent and judge ones are in ``agent_opts``) and the checks
made of them before the suite is read."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from wopeval.cli.common import check_finite, fail_input, store_option
from wopeval.errors import UserError
from wopeval.wire.request import RetryPolicy, TrialLimits

if TYPE_CHECKING:  # imported where used: ``wopeval run`` reaches its first trial without them
    from wopeval.agents.cassette import Cassette
    from wopeval.cli.merge_cmd import ShardOption

SuiteArg = Annotated[Path | None, typer.Argument(metavar="SUITE", help="Suite file (.json/.yaml).")]
AgentOpt = Annotated[
    str | None,
    typer.Option(help="Agent id or import path 'package.module:attr' (default: targetAgentId)."),
]
ConcurrencyOpt = Annotated[int, typer.Option(min=1, help="Trials running at once.")]
TrialTimeoutOpt = Annotated[float, typer.Option(min=0.001, help="Seconds per trial.")]


def _least(field: str) -> int:
    """The lower bound of a :class:`TrialLimits` field (its option's ``min``)."""
    (bound,) = [m.ge for m in TrialLimits.model_fields[field].metadata if hasattr(m, "ge")]
    return int(bound)


# The per-trial caps: each option is one field of TrialLimits, with its default and bound.
DEFAULT_LIMITS = TrialLimits()
MaxToolCallsOpt = Annotated[
    int,
    typer.Option(
        min=_least("maxToolCalls"), help="Tool calls per trial (past it: refused, the trial fails)."
    ),
]
MaxOutputBytesOpt = Annotated[
    int,
    typer.Option(
        min=_least("maxOutputBytes"),
        help="Bytes of JSON an agent's output may hold (past it: not kept, the trial fails).",
    ),
]
MaxToolResultBytesOpt = Annotated[
    int,
    typer.Option(
        min=_least("maxToolResultBytes"),
        help="Bytes of JSON one tool result may hold (past it: the agent gets a tool error, the "
        "trial fails).",
    ),
]
MaxReasonCharsOpt = Annotated[
    int,
    typer.Option(
        min=_least("maxReasonChars"),
        help="Characters of JSON a failure reason keeps (longer texts in it are clipped).",
    ),
]
MaxCostOpt = Annotated[
    float | None, typer.Option(min=0, help="Run-wide cost ceiling in USD (counts every trial).")
]
JudgeOpt = Annotated[
    str | None, typer.Option(help="Judge for rubric tasks: 'package.module:attr'.")
]
ToolOpt = Annotated[
    list[str] | None,
    typer.Option(help="Live tool NAME=package.module:attr (repeatable)."),
]
McpOpt = Annotated[
    list[str] | None,
    typer.Option(
        help="Live tools from an MCP server over stdio: '[PREFIX=]COMMAND [ARG ...]', e.g. "
        "'crm:=python3 -m crm_server' (repeatable)."
    ),
]
OverrideTargetOpt = Annotated[bool, typer.Option(help="Run against another agent.")]
BaselineOpt = Annotated[
    str | None,
    typer.Option(help="Regression mode: compare against this completed run of the same suite."),
]
MethodOpt = Annotated[str, typer.Option(help="Regression method (with --baseline).")]
AlphaOpt = Annotated[float, typer.Option(min=0.0, max=1.0, help="Regression alpha.")]
ExecutorOpt = Annotated[
    str,
    typer.Option(help="Where trials run: 'local' (this process) or 'ray' (Ray workers)."),
]
RayAddressOpt = Annotated[
    str | None,
    typer.Option(help="With --executor ray: the Ray cluster to join (default: a local one)."),
]
ResumeOpt = Annotated[
    str | None,
    typer.Option(
        metavar="RUN",
        help="Finish this interrupted run with its stored suite, agent and settings; give "
        "its live tools (--tool) and judge (--judge) again.",
    ),
]
ShardOpt = Annotated[
    str | None,
    typer.Option(
        metavar="i/N",
        help="Run only shard i of N (0-based: 0 ≤ i < N) of the trials; grade the shards "
        "together with `wopeval merge` (docs/distributed.md).",
    ),
]
GroupOpt = Annotated[
    str | None,
    typer.Option(help="With --shard: the run group (default: from the suite and settings)."),
]
RetryInfraOpt = Annotated[
    int,
    typer.Option(
        "--retry-infrastructure",
        min=0,
        metavar="N",
        help="Run a trial again, up to N more times, when it failed for infrastructure only "
        "(its model server, MCP server or agent process failed, not the agent), never for a "
        "wrong answer or a low score, nor once it reached a live tool. Retried attempts stay "
        "in the log, superseded. 0: never (docs/design.md, Retries).",
    ),
]
RetryBudgetOpt = Annotated[
    int | None,
    typer.Option(
        min=0, metavar="M", help="With --retry-infrastructure: at most M retries in the run."
    ),
]
RetryBackoffOpt = Annotated[
    float,
    typer.Option(
        min=0.0,
        max=3600.0,
        metavar="S",
        help="With --retry-infrastructure: seconds before a trial's first retry, doubled for "
        "each next one (at most 30 s), half of it jittered.",
    ),
]
RecordModelOpt = Annotated[
    Path | None,
    typer.Option(
        metavar="DIR",
        help="Record every model request and response of the run (agent and judge) into a new "
        "cassette directory, one file per trial, no header or key (docs/cassettes.md).",
    ),
]
ReplayModelOpt = Annotated[
    Path | None,
    typer.Option(
        metavar="DIR",
        help="Answer every model request from this cassette, opening no socket; a request it "
        "has no recording of fails its trial closed (model-miss), naming the field that differs.",
    ),
]
StoreOpt = Annotated[str | None, store_option()]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON only.")]

# What --resume takes: the run keeps its stored suite, agent and settings; the live tools and
# the judge are this process's own, so they are given again.
RESUME_TAKES = frozenset({"resume", "tool", "judge", "store", "as_json"})


def refuse_with_resume(ctx: typer.Context, shard: str | None, group: str | None) -> None:
    """Options --resume would ignore are refused, naming them (the run's are kept)."""
    if shard is not None or group is not None:
        fail_input("--shard/--group cannot be combined with --resume (a shard resumes as one)")
    given = []
    for param in ctx.command.params:
        name = param.name
        if name is None or name in RESUME_TAKES:
            continue
        source = ctx.get_parameter_source(name)
        if source is not None and source.name in ("COMMANDLINE", "ENVIRONMENT"):
            given.append("SUITE" if name == "suite_path" else param.opts[-1])
    if given:
        fail_input(
            f"{', '.join(given)}: cannot be combined with --resume, which keeps the run's own "
            "suite, agent and settings (give only --tool, --judge, --store, --json)"
        )


def check_run_options(
    executor: str,
    ray_address: str | None,
    mcp: list[str] | None,
    trial_timeout: float,
    max_cost: float | None,
    shard: str | None,
    group: str | None,
) -> ShardOption | None:
    """The checks made before the suite is read; the shard asked for, if any."""
    sharded = None
    if shard is not None or group is not None:
        from wopeval.cli.merge_cmd import shard_option

        sharded = shard_option(shard, group)
    check_executor(executor, ray_address, mcp)
    check_finite("--trial-timeout", trial_timeout)
    check_finite("--max-cost", max_cost)
    return sharded


def trial_limits(
    max_tool_calls: int, max_output_bytes: int, max_tool_result_bytes: int, max_reason_chars: int
) -> TrialLimits:
    """The caps of --max-tool-calls, --max-output-bytes, --max-tool-result-bytes and
    --max-reason-chars (their bounds are the options' own)."""
    return TrialLimits(
        maxToolCalls=max_tool_calls,
        maxOutputBytes=max_output_bytes,
        maxToolResultBytes=max_tool_result_bytes,
        maxReasonChars=max_reason_chars,
    )


def retry_policy(
    retries: int, budget: int | None, backoff_s: float, executor: str
) -> RetryPolicy | None:
    """The policy of --retry-infrastructure, --retry-budget and --retry-backoff (None: off)."""
    if retries == 0:
        if budget is not None:
            fail_input("--retry-budget needs --retry-infrastructure N")
        return None
    if executor != "local":
        fail_input("--retry-infrastructure runs with --executor local only")
    return RetryPolicy(maxRetries=retries, budget=budget, backoffS=backoff_s)


def model_cassette(
    record: Path | None, replay: Path | None, executor: str, suite_id: str | None = None
) -> Cassette | None:
    """The cassette of --record-model or --replay-model (None: neither) for the suite
    ``suite_id``, checked before any trial: a replayed one is read whole, so a corrupt file or
    one recorded for another suite refuses the run."""
    if record is None and replay is None:
        return None
    if record is not None and replay is not None:
        fail_input("--record-model and --replay-model cannot be combined")
    if executor != "local":
        fail_input("--record-model and --replay-model run with --executor local only")
    from wopeval.agents.cassette import Cassette

    try:
        if record is not None:
            return Cassette.for_recording(record, suite_id)
        assert replay is not None
        return Cassette.for_replay(replay, suite_id)
    except UserError as exc:
        fail_input(str(exc))


def check_executor(executor: str, ray_address: str | None, mcp: list[str] | None) -> None:
    if executor not in ("local", "ray"):
        fail_input(f"--executor: {executor!r} is not one of local, ray")
    if executor != "ray" and ray_address is not None:
        fail_input("--ray-address needs --executor ray")
    if executor == "ray" and mcp:
        fail_input("--mcp cannot be used with --executor ray: MCP sessions live in this process")


__all__ = [
    "DEFAULT_LIMITS",
    "RESUME_TAKES",
    "check_executor",
    "check_run_options",
    "model_cassette",
    "refuse_with_resume",
    "retry_policy",
    "trial_limits",
]
