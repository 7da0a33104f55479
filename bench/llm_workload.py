"""The LLM workload: N trials x 2 model calls at concurrency C against a fake OpenAI-compatible
server answering each call after 100 ms, wopeval against the direct-SDK floor and the peers.

The server is a raw asyncio HTTP/1.1 server in its own process (``serve``): a request without a
tool result is answered with one ``lookup`` tool call, one with a tool result with ``"ok"``; it
counts requests and accepted TCP connections and reports its own CPU time (``GET /stats``).
Each contender runs in a fresh child process (``child``) that times its workload in process
(wall and CPU around the workload only: its packages are imported before the clock starts,
``PRELOAD``) and is reaped with ``os.wait4`` for its peak RSS:

* ``floor``: one ``openai.AsyncOpenAI`` client, an asyncio loop of N trials under a semaphore
  of C, each: call, answer the tool call locally, call again (the SDK's documented use);
* ``wopeval`` (this checkout's ``src``) and ``wopeval-before`` (``git archive BASE src``, as
  ``bench/scale.py --base`` does): ``wopeval.evaluate`` of an N-task suite (the tool served by a
  fixture, golden ``"ok"``) with the OpenAI-compatible agent, concurrency C, a fresh SQLite store;
* ``inspect``: Inspect AI, ``use_tools(lookup) + generate()`` on ``openai/<model>`` with
  ``model_base_url``, ``max_connections`` and ``max_samples`` C, ``match()`` scorer;
* ``pydantic-evals``: a ``Dataset`` of N cases, the task a pydantic-ai ``Agent`` on
  ``OpenAIChatModel`` with the ``lookup`` tool, ``max_concurrency`` C.

The peers need packages wopeval does not depend on: they run under ``--peers-python`` (default
``$WOPEVAL_PEERS_PYTHON``), a Python with ``inspect-ai``, ``pydantic-evals`` and ``openai``
installed (``bench/README.md``); a peer that cannot be imported there is reported as
``{"unavailable": why}``, never estimated. Repeats are interleaved (every contender once per
round); each figure is the median with min and max. The load average is recorded before and
after. Prints one JSON document.

Usage: ``python3 bench/llm_workload.py [--quick] [--repeats R] [--base REF] [--no-before]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, cast

ROOT = Path(__file__).resolve().parents[1]
MODEL = "bench-model"
DELAY_S = 0.1
TOOL = {
    "type": "function",
    "function": {
        "name": "lookup",
        "description": "Look a record up.",
        "parameters": {"type": "object", "properties": {"id": {"type": "string"}}},
    },
}

# ---------------------------------------------------------------- the fake model server


def _completion(body: dict[str, Any], serial: int) -> dict[str, Any]:
    messages = body.get("messages") or []
    answered = any(m.get("role") == "tool" for m in messages)
    tools = body.get("tools") or [TOOL]
    name = tools[0]["function"]["name"]
    message: dict[str, Any] = {"role": "assistant", "content": "ok" if answered else None}
    if not answered:
        function = {"name": name, "arguments": json.dumps({"id": "1"})}
        message["tool_calls"] = [{"id": f"call_{serial}", "type": "function", "function": function}]
    usage = {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25}
    return {
        "id": f"chatcmpl-{serial}", "object": "chat.completion", "created": 0,
        "model": body.get("model") or MODEL, "usage": usage,
        "choices": [{"index": 0, "message": message,
                     "finish_reason": "stop" if answered else "tool_calls"}],
    }  # fmt: skip


async def _serve() -> None:
    stats: dict[str, float] = {"requests": 0, "connections": 0, "other": 0}

    async def reply(writer: asyncio.StreamWriter, status: int, doc: Any) -> None:
        data = json.dumps(doc).encode()
        head = (f"HTTP/1.1 {status} X\r\ncontent-type: application/json\r\n"
                f"content-length: {len(data)}\r\n\r\n")  # fmt: skip
        writer.write(head.encode() + data)
        await writer.drain()

    async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        stats["connections"] += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                method, path = lines[0].split(" ")[:2]
                length = 0
                for line in lines[1:]:
                    if line.lower().startswith("content-length:"):
                        length = int(line.split(":", 1)[1])
                raw = await reader.readexactly(length) if length else b""
                if path == "/stats":
                    await reply(writer, 200, {**stats, "cpuS": time.process_time()})
                elif method == "POST" and path.endswith("/chat/completions"):
                    stats["requests"] += 1
                    serial = int(stats["requests"])
                    await asyncio.sleep(DELAY_S)
                    await reply(writer, 200, _completion(json.loads(raw or b"{}"), serial))
                elif path.endswith(f"/models/{MODEL}"):
                    stats["other"] += 1
                    await reply(writer, 200, {"id": MODEL, "object": "model", "owned_by": "b"})
                else:
                    stats["other"] += 1
                    await reply(writer, 404, {"error": {"message": f"no route {path}"}})
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    server = await asyncio.start_server(connection, "127.0.0.1", 0, backlog=1024)
    print(server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()


# ---------------------------------------------------------------- the contenders (children)


async def _floor(url: str, trials: int, concurrency: int) -> int:
    import openai

    client = openai.AsyncOpenAI(base_url=url, api_key="bench", max_retries=2)
    gate = asyncio.Semaphore(concurrency)

    async def trial(i: int) -> bool:
        async with gate:
            messages: list[Any] = [{"role": "user", "content": f"q{i}"}]
            first = await client.chat.completions.create(
                model=MODEL, messages=messages, tools=cast(Any, [TOOL])
            )
            message = first.choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            for call in message.tool_calls or ():
                messages.append({"role": "tool", "tool_call_id": call.id, "content": '{"v": 1}'})
            second = await client.chat.completions.create(
                model=MODEL, messages=messages, tools=cast(Any, [TOOL])
            )
            return second.choices[0].message.content == "ok"

    async with client:
        done = await asyncio.gather(*(trial(i) for i in range(trials)))
    return sum(done)


def _suite(trials: int) -> dict[str, Any]:
    fixture = {"tool": "lookup", "args": {"id": "1"}, "argsMatch": "exact", "response": {"v": 1}}
    task = {
        "input": "",
        "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}},
        "fixtures": {"toolResponses": [fixture], "onMiss": "fail"},
    }
    tasks = [dict(task, taskId=f"t{i}", input=f"q{i}") for i in range(trials)]
    return {"suiteId": "core.bench.evals.llm", "version": "1.0.0", "modes": ["golden"],
            "tasks": tasks}  # fmt: skip


async def _wopeval(url: str, trials: int, concurrency: int, db: str) -> int:
    from wopeval import RunSettings, evaluate
    from wopeval.agents.definition import parse_definition
    from wopeval.agents.openai_compat import OpenAICompatAgent
    from wopeval.suite import parse_suite

    definition = parse_definition(
        {"kind": "openai-compatible", "model": MODEL, "baseUrl": url, "tools": [
            {"name": "lookup", "description": "Look a record up.",
             "parameters": TOOL["function"]["parameters"]}]}  # type: ignore[index]
    )  # fmt: skip
    agent = OpenAICompatAgent(definition)
    suite = parse_suite(_suite(trials))
    settings = RunSettings(concurrency=concurrency)
    result = await evaluate(suite, agent, agent_id="bench.llm", store=db, settings=settings)
    return int(result.summary.passedCount)


def _inspect(url: str, trials: int, concurrency: int, logs: str) -> int:
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.scorer import match
    from inspect_ai.solver import generate, use_tools
    from inspect_ai.tool import tool

    @tool  # type: ignore[untyped-decorator]  # (not installed where mypy runs)
    def lookup() -> Any:
        async def execute(id: str) -> str:
            """Look a record up.

            Args:
              id: the record's id.
            """
            return '{"v": 1}'

        return execute

    os.environ.setdefault("OPENAI_API_KEY", "bench")
    samples = [Sample(input=f"q{i}", target="ok") for i in range(trials)]
    task = Task(dataset=samples, solver=[use_tools(lookup()), generate()], scorer=match())
    (log,) = inspect_eval(
        task, model=f"openai/{MODEL}", model_base_url=url, max_connections=concurrency,
        model_args={"responses_api": False},  # the chat-completions API, as the others use
        max_samples=concurrency, log_dir=logs, display="none",
    )  # fmt: skip
    if log.status != "success" or log.results is None:
        message = log.error.message if log.error is not None else "no results"
        raise RuntimeError(f"inspect run ended {log.status}: {message[:300]}")
    return sum(1 for s in log.samples or () if s.scores and s.scores["match"].value == "C")


def _pydantic_evals(url: str, trials: int, concurrency: int) -> int:
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider
    from pydantic_evals import Case, Dataset
    from pydantic_evals.evaluators import EqualsExpected

    model = OpenAIChatModel(MODEL, provider=OpenAIProvider(base_url=url, api_key="bench"))
    agent = Agent(model)

    @agent.tool_plain
    def lookup(id: str) -> str:
        """Look a record up."""
        return '{"v": 1}'

    async def task(inputs: str) -> str:
        return (await agent.run(inputs)).output

    cases = [Case(name=f"t{i}", inputs=f"q{i}", expected_output="ok") for i in range(trials)]
    dataset = Dataset(name="llm", cases=cases, evaluators=[EqualsExpected()])
    report = dataset.evaluate_sync(task, max_concurrency=concurrency, progress=False)
    return sum(1 for case in report.cases if all(a.value for a in case.assertions.values()))


# What each contender imports before its clock starts (imports are not the workload).
PRELOAD = {
    "floor": ["openai"],
    "wopeval": ["openai", "wopeval.service.api", "wopeval.agents.openai_compat", "wopeval.suite",
                "wopeval.events.store"],
    "inspect": ["openai", "inspect_ai", "inspect_ai.dataset", "inspect_ai.scorer",
                "inspect_ai.solver", "inspect_ai.tool"],
    "pydantic-evals": ["openai", "pydantic_ai", "pydantic_ai.models.openai",
                       "pydantic_ai.providers.openai", "pydantic_evals",
                       "pydantic_evals.evaluators"],
}  # fmt: skip


def _child(name: str, url: str, trials: int, concurrency: int) -> None:
    import importlib

    for module in PRELOAD["wopeval" if name.startswith("wopeval") else name]:
        importlib.import_module(module)
    with tempfile.TemporaryDirectory() as tmp:
        wall, cpu = time.perf_counter(), time.process_time()
        if name == "floor":
            passed = asyncio.run(_floor(url, trials, concurrency))
        elif name.startswith("wopeval"):
            db = str(Path(tmp) / "wopeval.db")
            passed = asyncio.run(_wopeval(url, trials, concurrency, db))
        elif name == "inspect":
            passed = _inspect(url, trials, concurrency, tmp)
        elif name == "pydantic-evals":
            passed = _pydantic_evals(url, trials, concurrency)
        else:
            raise SystemExit(f"unknown contender {name}")
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(json.dumps({"wallS": wall, "cpuS": cpu, "passed": passed}), flush=True)


# ---------------------------------------------------------------- the parent


def _stats(port: int) -> dict[str, float]:
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", "/stats")
        return dict(json.loads(conn.getresponse().read()))
    finally:
        conn.close()


def _run_child(
    python: str, src: Path | None, name: str, port: int, trials: int, concurrency: int
) -> dict[str, Any]:
    env = {**os.environ, "NO_COLOR": "1", "OPENAI_API_KEY": "bench"}
    env["PYTHONPATH"] = str(src) if src is not None else ""
    url = f"http://127.0.0.1:{port}/v1"
    before = _stats(port)
    me = str(Path(__file__).resolve())
    args = [python, me, "child", name, url, str(trials), str(concurrency)]
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(args, stdout=out, stderr=err, env=env, cwd=tempfile.gettempdir())
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        lines = out.read().strip().splitlines()
        if proc.returncode != 0 or not lines:
            tail = err.read().strip().splitlines()[-3:]
            return {"error": (" | ".join(tail) or f"exit {proc.returncode}")[-400:]}
    after = _stats(port)
    result: dict[str, Any] = json.loads(lines[-1])
    result["cpuMsPerTrial"] = result["cpuS"] * 1000 / trials
    result["peakRssMb"] = usage.ru_maxrss / 1024
    result["requests"] = after["requests"] - before["requests"]
    # Less the connection of the ``/stats`` request that read ``after``.
    result["connections"] = after["connections"] - before["connections"] - 1
    result["otherRequests"] = after["other"] - before["other"]
    # The server's CPU for this contender's requests, and the wall the two processes' CPU
    # alone would need on the machine's cores (the client's loop is one thread): above the
    # ideal wall (every call 100 ms, C at a time), the workload is CPU-bound.
    result["serverCpuS"] = after["cpuS"] - before["cpuS"]
    cores = os.cpu_count() or 1
    result["cpuBoundWallS"] = max(result["cpuS"], (result["cpuS"] + result["serverCpuS"]) / cores)
    result["loadAverage1m"] = os.getloadavg()[0]
    return result


def _available(python: str | None, module: str) -> str | None:
    """``None`` when ``module`` imports under ``python``, else why not."""
    if python is None:
        return "no --peers-python (or $WOPEVAL_PEERS_PYTHON) given"
    done = subprocess.run([python, "-c", f"import {module}"], capture_output=True, text=True)
    if done.returncode != 0:
        return f"{module} does not import under {python}: {done.stderr.strip()[-200:]}"
    return None


def _base_tree(ref: str, into: Path) -> Path:
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "src"], capture_output=True,
                             check=True).stdout  # fmt: skip
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into / "src"


FIGURES = ("wallS", "cpuMsPerTrial", "peakRssMb", "requests", "connections", "serverCpuS",
           "cpuBoundWallS", "loadAverage1m")  # fmt: skip


def _summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    ok = [r for r in runs if "error" not in r]
    if not ok:
        return {"error": runs[0].get("error") if runs else "not run", "runs": runs}
    out: dict[str, Any] = {"runs": len(ok)}
    for key in FIGURES:
        values = [float(r[key]) for r in ok]
        out[key] = {"median": statistics.median(values), "min": min(values), "max": max(values)}
    out["passed"] = [r["passed"] for r in ok]
    if len(ok) < len(runs):
        out["errors"] = [r["error"] for r in runs if "error" in r]
    return out


def _ratios(results: dict[str, Any]) -> dict[str, Any]:
    floor = results.get("floor", {})
    if "wallS" not in floor:
        return {}
    ratios: dict[str, Any] = {}
    for name, figures in results.items():
        if name == "floor" or "wallS" not in figures:
            continue
        ratios[name] = {
            key: round(figures[key]["median"] / floor[key]["median"], 3)
            for key in ("wallS", "cpuMsPerTrial", "peakRssMb")
        }
    return ratios


def _goal(results: dict[str, Any], ratios: dict[str, Any]) -> dict[str, Any]:
    ours = ratios.get("wopeval")
    if ours is None:
        return {"met": False, "note": "wopeval or the floor did not run"}
    checks = {
        "wall <= 1.1x floor": ours["wallS"] <= 1.1,
        "cpu/trial <= 1.5x floor": ours["cpuMsPerTrial"] <= 1.5,
        "peak RSS <= 1.5x floor": ours["peakRssMb"] <= 1.5,
    }
    for peer in ("inspect", "pydantic-evals"):
        if peer in ratios:
            theirs = ratios[peer]
            checks[f"wall ahead of {peer}"] = ours["wallS"] < theirs["wallS"]
            checks[f"cpu/trial ahead of {peer}"] = ours["cpuMsPerTrial"] < theirs["cpuMsPerTrial"]
        else:
            checks[f"ahead of {peer}"] = False  # not measured: not met
    return {"checks": checks, "met": all(checks.values())}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="200 trials, concurrency 20")
    parser.add_argument("--trials", type=int, default=None)
    parser.add_argument("--concurrency", type=int, default=None)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--base", default="main", help="the 'before' tree's git ref")
    parser.add_argument("--no-before", action="store_true")
    parser.add_argument("--no-peers", action="store_true")
    parser.add_argument("--peers-python", default=os.environ.get("WOPEVAL_PEERS_PYTHON"))
    parser.add_argument("--only", default=None, help="contenders, comma-separated")
    args = parser.parse_args()
    trials = args.trials or (200 if args.quick else 1000)
    concurrency = args.concurrency or (20 if args.quick else 100)

    report: dict[str, Any] = {
        "workload": {"trials": trials, "modelCallsPerTrial": 2, "concurrency": concurrency,
                     "serverDelayS": DELAY_S, "repeats": args.repeats,
                     "idealWallS": round(-(-trials // concurrency) * 2 * DELAY_S, 6),
                     "cores": os.cpu_count()},
        "loadAverage": list(os.getloadavg()),
    }  # fmt: skip
    with tempfile.TemporaryDirectory() as tmp:
        contenders: dict[str, tuple[str, Path | None]] = {
            "floor": (sys.executable, None),
            "wopeval": (sys.executable, ROOT / "src"),
        }
        if not args.no_before:
            base = _base_tree(args.base, Path(tmp))
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(base)], check=True)
            contenders["wopeval-before"] = (sys.executable, base)
            report["base"] = args.base
        unavailable: dict[str, str] = {}
        for peer, module in (("inspect", "inspect_ai"), ("pydantic-evals", "pydantic_evals")):
            why = "--no-peers" if args.no_peers else _available(args.peers_python, module)
            if why is None:
                contenders[peer] = (str(args.peers_python), None)
            else:
                unavailable[peer] = why
        if args.only:
            chosen = set(args.only.split(","))
            contenders = {k: v for k, v in contenders.items() if k in chosen}
        server = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "serve"],
                                  stdout=subprocess.PIPE, text=True)  # fmt: skip
        try:
            assert server.stdout is not None
            port = int(server.stdout.readline())
            runs: dict[str, list[dict[str, Any]]] = {name: [] for name in contenders}
            for round_ in range(args.repeats):  # interleaved: every contender once per round
                for name, (python, src) in contenders.items():
                    print(f"round {round_ + 1}: {name}", file=sys.stderr, flush=True)
                    runs[name].append(_run_child(python, src, name, port, trials, concurrency))
        finally:
            server.terminate()
            server.wait()
    results: dict[str, Any] = {name: _summary(r) for name, r in runs.items()}
    for peer, why in unavailable.items():
        results[peer] = {"unavailable": why}
    ratios = _ratios(results)
    report["results"] = results
    report["ratiosToFloor"] = ratios
    report["goal"] = _goal(results, ratios)
    report["loadAverageAfter"] = list(os.getloadavg())
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "serve":
        asyncio.run(_serve())
    elif len(sys.argv) > 1 and sys.argv[1] == "child":
        _child(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
    else:
        main()
