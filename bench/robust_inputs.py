"""The hostile inputs of ``bench/robust_fuzz.py`` that need no host, and the bodies it sends.

Each function returns what it tried and the figures that must stay at zero (see that module).
"""

from __future__ import annotations

import random
import re
from pathlib import Path
from typing import Any, Final
from xml.etree import ElementTree as ET

import anyio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from tests.robust.hostile import write_hostile
from typer.testing import CliRunner

from wopeval.cli.app import app
from wopeval.engine.agent import AgentContext
from wopeval.engine.registry import Registry
from wopeval.engine.run import RunSettings
from wopeval.engine.sink import EventSink
from wopeval.events.store import EventStore
from wopeval.events.tables import dumps_json
from wopeval.exports.textsafe import markdown_text, xml_text
from wopeval.service.runs import RunService
from wopeval.suite import parse_suite
from wopeval.suite.models import Task
from wopeval.wire.request import TrialLimits

MALFORMED_SEGMENTS = [
    "~", "~~", "acme~", "acme~2", "acme~zz", "acme~2Fr~zz0123456789abcdef",
    "r0123456789abcdef0123", "acme~7E2Fr0123456789abcdef", "acme~257E2Fr0123456789abcdef",
    "acme~2F", "~2Fr0123456789abcdef", "acme~FF~2Fr0123456789abcdef", "acme~2Fshort",
]  # fmt: skip

HOSTILE_TEXT = (
    "\x1b[31mred\x1b[0m \x00\x07\x0b\ufffe\ud800 <img src=x onerror=alert(1)> "
    "![p](https://evil.example/p.png) [l](https://evil.example) <script>alert(1)</script> "
    "| a | b |\n# heading\n---\n@someone **bold** `code` &amp; \u202eevil"
)
_SECTIONS: dict[str, dict[str, str]] = {
    "run": {"recursionLimit": "i", "runTimeoutMs": "i", "maxLoopIterations": "i",
            "escalationThreshold": "i"},
    "ai": {"provider": "s", "model": "s", "temperature": "n", "maxTokens": "i",
           "credentialRef": "s", "maxRefusals": "i"},
    "distillation": {"tokenBudget": "i"},
    "budget": {"maxTokens": "i", "maxCostUsd": "n", "maxToolCalls": "i", "maxRetries": "i",
               "thresholdPercent": "n"},
}  # fmt: skip
_WRONG: dict[str, list[Any]] = {"s": [1, True, None, [], {}], "i": ["1", True, None, -1, 1.5, []],
          "n": ["1", True, None, -1, []]}  # fmt: skip


def bad_configurables(rng: random.Random, count: int) -> list[dict[str, Any]]:
    """``count`` configurables, each wrong in one member of one section (a typo, a dotted
    key, or a reserved member of the wrong type)."""
    out: list[dict[str, Any]] = []
    for _ in range(count):
        section = rng.choice(list(_SECTIONS))
        member, kind = rng.choice(list(_SECTIONS[section].items()))
        how = rng.randrange(3)
        if how == 0:
            typo = member[:-1] if len(member) > 3 else member + "x"
            typo = typo if typo not in _SECTIONS[section] else typo + "x"
            value: dict[str, Any] = {typo: 1}
        elif how == 1:
            value = {f"{member}.{rng.choice(['x', 'value', 'min'])}": 1}
        else:
            value = {member: rng.choice(_WRONG[kind])}
        out.append({"version": 1, section: value})
    return out


def fuzz_validate(directory: Path) -> tuple[int, dict[str, Any]]:
    named = write_hostile(directory)
    runner = CliRunner()
    exits: dict[str, int] = {}
    tracebacks = unnamed = 0
    for name, field in sorted(named.items()):
        result = runner.invoke(app, ["validate", str(directory / name)])
        exits[str(result.exit_code)] = exits.get(str(result.exit_code), 0) + 1
        tracebacks += "Traceback" in result.output or (
            result.exception is not None and not (isinstance(result.exception, SystemExit))
        )
        unnamed += field not in result.output
    return len(named), {"exitCodes": exits, "tracebacks": tracebacks, "fieldNotNamed": unnamed}


class Unprintable(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no text")


async def _agent(task_input: Any, ctx: AgentContext) -> Any:
    kind = task_input["kind"]
    if kind == "unprintable":
        raise Unprintable
    if kind == "text":
        raise ValueError(HOSTILE_TEXT)
    if kind == "tool":
        result = await ctx.call_tool("crm:lookup", {})
        return {"ok": result.ok}
    if kind == "huge-output":
        return "x" * HUGE
    if kind == "huge-result":
        await ctx.call_tool("crm:dump", {})
    if kind == "flood":  # past the cap every call is refused at once: the loop ends
        for index in range(FLOOD):
            await ctx.call_tool("crm:echo", {"n": index})
    return "done"


async def _tool(args: Any) -> Any:
    raise Unprintable


async def _dump(args: Any) -> Any:
    return "y" * HUGE


async def _echo(args: Any) -> Any:
    return args


# The caps of the hostile run, and what its agents produce past them (the run's store stays
# near its caps whatever they produce: storeBytes against hostileBytes).
LIMITS = TrialLimits(maxToolCalls=200, maxOutputBytes=100_000, maxToolResultBytes=100_000)
HUGE = 2_000_000
FLOOD = 5_000
_CAPPED = {"huge-output": "maxOutputBytes", "huge-result": "maxToolResultBytes",
           "flood": "maxToolCalls"}  # fmt: skip


class _Judge:
    evaluator_type: Final = "llm_judge"

    async def score(self, task: Task, output: Any, sink: EventSink, run_id: str) -> float:
        raise Unprintable


def _suite() -> dict[str, Any]:
    golden: dict[str, Any] = {"kind": "golden", "match": {"strategy": "exact", "value": "done"}}
    rubric: dict[str, Any] = {"kind": "rubric", "rubric": [{"criterion": "polite", "weight": 1.0}]}
    tasks: list[dict[str, Any]] = [{"taskId": kind, "input": {"kind": kind}, "expected": golden}
             for kind in ("unprintable", "text", "ok")]  # fmt: skip
    tasks.append({"taskId": "tool", "input": {"kind": "tool"}, "expected": golden,
                  "fixtures": {"onMiss": "live", "toolResponses": []}})  # fmt: skip
    tasks.append({"taskId": "judge", "input": {"kind": "ok"}, "expected": rubric})
    tasks += [{"taskId": kind, "input": {"kind": kind}, "expected": golden} for kind in _CAPPED]
    return {"suiteId": "core.bench.evals.hostile", "version": "1.0.0",
            "modes": ["golden", "rubric"], "trials": {"count": 3, "k": 1},
            "tasks": tasks}  # fmt: skip


def fuzz_trials(path: Path) -> tuple[dict[str, Any], tuple[str, str]]:
    async def go() -> tuple[dict[str, Any], str]:
        registry = Registry()
        registry.register_agent("bench.hostile", _agent)
        registry.register_tool("crm:lookup", _tool)
        registry.register_tool("crm:dump", _dump)
        registry.register_tool("crm:echo", _echo)
        suite = parse_suite(_suite())
        async with await EventStore.open(str(path)) as store:
            service = RunService(store, registry, _Judge())
            plan = await service.plan(suite, "bench.hostile", RunSettings(limits=LIMITS))
            record, summary = await service.run(plan)
            stored = await store.get_run(record.run_id)
            events = await store.events(record.run_id)
        reasons = [e.payload for e in events if e.type == "wopeval.trial-failed"]
        assert stored is not None
        passed = {t.taskId: t.passed for t in summary.tasks} if summary else {}
        named = sum("Unprintable" in r["message"] or "ValueError" in r["message"]
                    for r in reasons)  # fmt: skip
        capped = [r for r in reasons if r["taskId"] in _CAPPED]
        failed = int(stored.status != "completed")
        trials = suite.trial_plan.effective_count
        return {"tried": len(suite.tasks) * trials, "runStatus": stored.status,
                "runsFailed": failed, "tasksPassed": passed, "reasons": len(reasons),
                "reasonsNamingTheType": named,
                # each capped trial fails naming its cap (capTrials of capsNamed)
                "capTrials": len(_CAPPED) * trials,
                "capsNamed": sum(_CAPPED[r["taskId"]] in r["message"] for r in capped),
                "hostileBytes": 2 * HUGE * trials,
                "largestEventBytes": max(len(dumps_json(e.payload)) for e in events),
                "storeBytes": sum(f.stat().st_size for f in path.parent.glob(path.name + "*")),
                }, record.run_id  # fmt: skip

    figures, run_id = anyio.run(go)
    return figures, (str(path), run_id)


# What the Markdown export itself renders; any other element came from a reason's text.
_TAG = re.compile(r"<(?!/?(p|ul|li|h4|h3|table|thead|tbody|tr|th|td|code|strong)\b)[a-zA-Z/]")


def fuzz_exports(run: tuple[str, str], examples: int) -> tuple[int, dict[str, Any]]:
    store, run_id = run
    runner = CliRunner()
    junit = runner.invoke(app, ["export", run_id, "--store", store, "-f", "junit"])
    try:
        ET.fromstring(junit.output.encode("utf-8", "surrogateescape"))
        well_formed = True
    except ET.ParseError:
        well_formed = False
    md = runner.invoke(app, ["export", run_id, "--store", store, "-f", "markdown"])
    html = MarkdownIt("commonmark").enable("table").render(md.output)
    failures = 0

    @given(st.text())
    @settings(max_examples=examples, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))  # fmt: skip
    def texts(text: str) -> None:
        nonlocal failures
        element = ET.Element("failure", message=xml_text(text))
        element.text = xml_text(text)
        try:
            ET.fromstring(ET.tostring(element, encoding="unicode"))
        except ET.ParseError:
            failures += 1
        rendered = MarkdownIt("commonmark").render("- " + markdown_text(text))
        failures += bool(_TAG.search(rendered.replace("<ul>", "").replace("<li>", "")))

    texts()
    return 2 + examples, {"junitExit": junit.exit_code, "xmlWellFormed": well_formed,
                          "markdownExit": md.exit_code, "markdownTags": len(_TAG.findall(html)),
                          "texts": examples, "textFailures": failures}  # fmt: skip
