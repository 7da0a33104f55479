"""UK AISI Inspect AI (``inspect_ai``) as the in-process peer of the engine benchmark.

Both workloads are built as Inspect tasks in code and run with ``inspect_ai.eval(...)`` in this
process, ``display="none"``, logging to a fresh temporary directory (Inspect's default ``.eval``
log format with samples, so log writes are counted as our store's writes are). The wall time is
measured around ``eval()`` only; importing ``inspect_ai`` in a fresh interpreter is reported apart
(``importSeconds``).

Overhead workload, two modes (``bench/README.md`` explains the choice):

- ``"solver"`` (default, closest to our scripted agent): a custom solver appends three assistant
  turns, each with one tool call, and dispatches each through Inspect's own tool executor
  (``execute_tools``), which records the tool events and messages; the three ``@tool`` functions
  return canned JSON at once. No model call is made.
- ``"mockllm"``: ``use_tools(...)`` + ``generate()`` against ``mockllm/model`` whose scripted
  outputs call the three tools in turn and then answer; every output carries ``usage`` so
  mockllm never counts tokens (counting would download a tokenizer file, offline it fails).

Both score with ``match()`` against the target ``"ok"``. Repetition is Inspect's ``epochs``:
``trials`` scored trials are ``samples`` dataset samples x ``trials // samples`` epochs.
A run that is not ``success`` or whose sample count is off raises instead of being timed.
"""

from __future__ import annotations

import functools
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from typing import Any, Literal, ParamSpec

import anyio
from inspect_ai import Task
from inspect_ai import eval as inspect_eval
from inspect_ai.dataset import Sample
from inspect_ai.log import EvalLog
from inspect_ai.model import (
    ChatMessage,
    ChatMessageAssistant,
    ChatMessageTool,
    GenerateConfig,
    Model,
    ModelOutput,
    ModelUsage,
    execute_tools,
    get_model,
)
from inspect_ai.scorer import match
from inspect_ai.solver import Generate, Solver, TaskState, generate, solver, use_tools
from inspect_ai.tool import Tool, ToolCall, ToolChoice, ToolInfo, tool

__all__ = ["import_seconds", "run_concurrency", "run_overhead", "version"]

OverheadMode = Literal["solver", "mockllm"]

_MODEL = "mockllm/model"
_ANSWER = "ok"
_USAGE = ModelUsage(input_tokens=10, output_tokens=5, total_tokens=15)


@functools.cache
def import_seconds() -> float:
    """Seconds a fresh interpreter takes to import what this module imports (start-up cost)."""
    code = (
        "import time; t = time.perf_counter(); "
        "import inspect_ai, inspect_ai.model, inspect_ai.solver, inspect_ai.scorer; "
        "print(time.perf_counter() - t)"
    )
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True)
    return float(out.stdout.strip())


P = ParamSpec("P")


def _as_tool(factory: Callable[P, Tool]) -> Callable[P, Tool]:
    """``@tool``, typed even where inspect_ai is absent (mypy then sees it as untyped)."""
    registered: Callable[P, Tool] = tool(factory)
    return registered


def _as_solver(factory: Callable[P, Solver]) -> Callable[P, Solver]:
    """``@solver``, typed even where inspect_ai is absent (mypy then sees it as untyped)."""
    registered: Callable[P, Solver] = solver(factory)
    return registered


def version() -> str:
    """The installed ``inspect_ai`` version."""
    from importlib.metadata import version as dist_version

    return dist_version("inspect_ai")


@_as_tool
def lookup_order() -> Tool:
    async def execute(order_id: str) -> str:
        """Look up an order (canned fixture).

        Args:
            order_id: The order to look up.
        """
        return '{"orderId": "A1", "status": "shipped"}'

    return execute


@_as_tool
def get_customer() -> Tool:
    async def execute(customer_id: str) -> str:
        """Fetch a customer record (canned fixture).

        Args:
            customer_id: The customer to fetch.
        """
        return '{"customerId": "C1", "tier": "gold"}'

    return execute


@_as_tool
def quote_refund() -> Tool:
    async def execute(order_id: str, amount: float) -> str:
        """Quote a refund (canned fixture).

        Args:
            order_id: The order to refund.
            amount: The amount asked for.
        """
        return '{"approved": true}'

    return execute


def _tools() -> list[Tool]:
    return [lookup_order(), get_customer(), quote_refund()]


_CALLS: tuple[tuple[str, dict[str, Any]], ...] = (
    ("lookup_order", {"order_id": "A1"}),
    ("get_customer", {"customer_id": "C1"}),
    ("quote_refund", {"order_id": "A1", "amount": 12.5}),
)


@_as_solver
def fixtured_calls() -> Solver:
    """Three sequential tool calls through Inspect's tool executor, then the answer."""
    tools = _tools()

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        for index, (name, args) in enumerate(_CALLS):
            call = ToolCall(id=f"call-{index}", function=name, arguments=args)
            state.messages.append(ChatMessageAssistant(content="", tool_calls=[call]))
            result = await execute_tools(state.messages, tools)
            for message in result.messages:
                if isinstance(message, ChatMessageTool) and message.error is not None:
                    raise RuntimeError(f"tool {name} failed: {message.error.message}")
            state.messages.extend(result.messages)
        state.output = ModelOutput.from_content(_MODEL, _ANSWER)
        return state

    return solve


@_as_solver
def sleeper(sleep_s: float) -> Solver:
    """The concurrency workload's agent: sleep, then answer."""

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        await anyio.sleep(sleep_s)
        state.output = ModelOutput.from_content(_MODEL, _ANSWER)
        return state

    return solve


def _scripted_output(
    messages: list[ChatMessage],
    tools: list[ToolInfo],
    tool_choice: ToolChoice,
    config: GenerateConfig,
) -> ModelOutput:
    """mockllm script: the n-th call asks for tool n (n = tool results so far), then answers."""
    done = sum(isinstance(m, ChatMessageTool) for m in messages)
    if done < len(_CALLS):
        name, args = _CALLS[done]
        output = ModelOutput.for_tool_call(_MODEL, name, args, tool_call_id=f"call-{done}")
    else:
        output = ModelOutput.from_content(_MODEL, _ANSWER)
    output.usage = _USAGE
    return output


def _task(trials: int, samples: int, plan: Solver | Sequence[Solver]) -> Task:
    if trials < 1 or samples < 1 or trials % samples:
        raise ValueError(f"trials ({trials}) must be a positive multiple of samples ({samples})")
    dataset = [Sample(input=f"case {i}", target=_ANSWER, id=i) for i in range(samples)]
    return Task(dataset=dataset, solver=plan, scorer=match(), epochs=trials // samples)


def _timed_eval(task: Task, model: Model | str, concurrency: int) -> tuple[float, EvalLog]:
    with tempfile.TemporaryDirectory(prefix="wopeval-bench-inspect-") as log_dir:
        started = time.perf_counter()
        logs = inspect_eval(
            task,
            model=model,
            log_dir=log_dir,
            display="none",
            max_samples=concurrency,
            max_connections=concurrency,
        )
        seconds = time.perf_counter() - started
    return seconds, logs[0]


def _measure(
    build: Callable[[int], Task], model: Model | str, trials: int, concurrency: int, warmup: int
) -> dict[str, float]:
    """Run an untimed ``warmup``-trial eval first (one-time set-up), then the timed one."""
    if warmup > 0:
        _check(_timed_eval(build(warmup), model, concurrency)[1], warmup)
    seconds, log = _timed_eval(build(trials), model, concurrency)
    _check(log, trials)
    return {
        "trials": float(trials),
        "seconds": seconds,
        "trialsPerSecond": trials / seconds,
        "warmupTrials": float(warmup),
        "importSeconds": import_seconds(),
    }


def _round_up(count: int, multiple: int) -> int:
    return -(-count // multiple) * multiple if count > 0 else 0


def _check(log: EvalLog, trials: int) -> None:
    if log.status != "success":
        raise RuntimeError(f"inspect eval ended {log.status}: {log.error}")
    completed = log.results.completed_samples if log.results else 0
    if completed != trials:
        raise RuntimeError(f"inspect eval completed {completed} trials, expected {trials}")


def run_overhead(
    trials: int,
    *,
    samples: int = 1,
    mode: OverheadMode = "solver",
    concurrency: int = 16,
    warmup: int = 10,
) -> dict[str, float]:
    """Harness overhead: ``trials`` trials of 3 instant fixtured tool calls each.

    ``concurrency`` is Inspect's ``max_samples`` (and ``max_connections``); the agent never
    waits, so it only bounds how many trials are in flight at once (16, as ``bench/engine.py``
    runs ours). ``warmup`` trials, rounded up to a multiple of ``samples``, run untimed first;
    ``warmup=0`` times the process's first eval, one-time set-up included.
    """
    if mode == "solver":
        plan: Solver | list[Solver] = fixtured_calls()
        model: Model | str = _MODEL
    else:
        plan = [use_tools(_tools()), generate()]
        model = get_model(_MODEL, custom_outputs=_scripted_output, memoize=False)
    build = functools.partial(_task, samples=samples, plan=plan)
    return _measure(build, model, trials, concurrency, _round_up(warmup, samples))


def run_concurrency(
    trials: int = 2000,
    sleep_s: float = 0.05,
    concurrency: int = 200,
    *,
    samples: int = 1,
    warmup: int = 10,
) -> dict[str, float]:
    """Concurrency: ``trials`` trials of an agent that sleeps ``sleep_s``, ``concurrency`` at once.

    ``measuredOverIdeal`` is measured wall time / ideal (``trials * sleep_s / concurrency``);
    1.0 is perfect, larger is worse.
    """
    from . import ideal_seconds

    build = functools.partial(_task, samples=samples, plan=sleeper(sleep_s))
    figures = _measure(build, _MODEL, trials, concurrency, _round_up(warmup, samples))
    ideal = ideal_seconds(trials, sleep_s, concurrency)
    figures["idealSeconds"] = ideal
    figures["measuredOverIdeal"] = figures["seconds"] / ideal
    return figures
