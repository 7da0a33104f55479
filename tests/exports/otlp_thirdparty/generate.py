# mypy: ignore-errors
# (its packages live in a separate environment, not the project's)
"""Generate the vendored third-party traces: real instrumentation around real agent loops.

Run with a separate virtual environment holding the packages pinned in README.md (never the
project's own): ``/tmp/tracegen/bin/python tests/exports/otlp_thirdparty/generate.py``, from
the repository root with ``PYTHONPATH=src`` (the scripted model server is
``wopeval.agents.scripted_openai``, stdlib only). Each variant runs in its own process (the
instrumentations read their settings from the environment once) and writes
``<variant>.jsonl`` (the SDK's OTLP JSON file exporter) and ``<variant>.pb`` (the SDK's OTLP
protobuf encoder, one ``ExportTraceServiceRequest``).

Every variant runs one customer-support episode: the model calls ``lookup_order`` and
``issue_refund`` in parallel (``{"order_id": "A-100"}`` each), the tools answer, the model
says ``refunded``. A variant's tool calls are therefore known: the tests grade a suite that
must pass (that path) and tasks that must fail (``issue_refund`` forbidden; ``order_id``
``B-200`` expected).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ARGS = {"order_id": "A-100"}
PROMPT = "Order A-100 arrived crushed, please refund it."
CAPTURE = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
CONTENT = {"OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental", CAPTURE: "span_only"}
NO_CONTENT = {"OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental"}
HIDDEN = {
    "OPENINFERENCE_HIDE_INPUTS": "true",
    "OPENINFERENCE_HIDE_OUTPUTS": "true",
    "OPENINFERENCE_HIDE_INPUT_MESSAGES": "true",
    "OPENINFERENCE_HIDE_OUTPUT_MESSAGES": "true",
}

# variant → (runner, environment)
VARIANTS: dict[str, tuple[str, dict[str, str]]] = {
    "openai_v2_content": ("openai_v2", CONTENT),
    "openai_v2_nocontent": ("openai_v2", NO_CONTENT),
    "openai_v2_events_content": ("openai_v2", {**CONTENT, CAPTURE: "event_only"}),
    "openai_v2_tools_content": ("openai_v2_tools", CONTENT),
    "openai_v2_tools_nocontent": ("openai_v2_tools", NO_CONTENT),
    "openai_v2_noroot_content": ("openai_v2_noroot", CONTENT),
    "traceloop_content": ("traceloop", {"TRACELOOP_TRACE_CONTENT": "true"}),
    "traceloop_nocontent": ("traceloop", {"TRACELOOP_TRACE_CONTENT": "false"}),
    "oi_openai_content": ("oi_openai", {}),
    "oi_openai_nocontent": ("oi_openai", HIDDEN),
    "oi_agents_content": ("oi_agents", {}),
    "oi_agents_nocontent": ("oi_agents", HIDDEN),
    "oi_langchain_content": ("oi_langchain", {}),
    "oi_langchain_nocontent": ("oi_langchain", HIDDEN),
    "pydantic_ai_content": ("pydantic_ai", {"INCLUDE_CONTENT": "1"}),
    "pydantic_ai_nocontent": ("pydantic_ai", {}),
}


def lookup_order(order_id: str) -> dict[str, str]:
    """Look an order up by its id."""
    return {"orderId": order_id, "status": "damaged"}


def issue_refund(order_id: str) -> dict[str, str]:
    """Refund an order by its id."""
    return {"orderId": order_id, "refund": "issued"}


TOOLS = {"lookup_order": lookup_order, "issue_refund": issue_refund}
SPECS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": f"{name.replace('_', ' ')} by its id",
            "parameters": {
                "type": "object",
                "properties": {"order_id": {"type": "string"}},
                "required": ["order_id"],
            },
        },
    }
    for name in TOOLS
]


def _server() -> Any:
    from wopeval.agents.scripted_openai import Reply, ScriptedOpenAI, ToolCall

    calls = tuple(ToolCall(name, json.dumps(ARGS), id=f"call_{name}") for name in TOOLS)
    return ScriptedOpenAI([Reply(tool_calls=calls), Reply(content="refunded")])


def _provider() -> tuple[Any, Any]:
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    provider = TracerProvider(resource=Resource.create({"service.name": "support"}))
    memory = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    return provider, memory


def _openai_loop(base_url: str, on_tool: Any = None) -> None:
    import openai

    client = openai.OpenAI(base_url=base_url, api_key="test")
    messages: list[Any] = [{"role": "user", "content": PROMPT}]
    while True:
        answer = client.chat.completions.create(model="gpt-4o-mini", messages=messages, tools=SPECS)
        message = answer.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            return
        for tool_call in message.tool_calls:
            args = json.loads(tool_call.function.arguments)
            name = tool_call.function.name
            run = on_tool or (lambda name, _, args: TOOLS[name](**args))
            result = run(name, tool_call.id, args)
            messages.append(
                {"role": "tool", "tool_call_id": tool_call.id, "content": json.dumps(result)}
            )


def run_openai_v2(provider: Any, base_url: str, *, tools: bool = False, root: bool = True) -> None:
    from opentelemetry.instrumentation.openai_v2 import OpenAIInstrumentor

    OpenAIInstrumentor().instrument(tracer_provider=provider)
    on_tool = None
    if tools:  # the application's own execute_tool spans, through the GenAI util
        from opentelemetry.util.genai.handler import get_telemetry_handler

        handler = get_telemetry_handler(tracer_provider=provider)

        def on_tool(name: str, call_id: str, args: Any) -> Any:
            with handler.tool(name) as invocation:
                invocation.tool_call_id = call_id
                invocation.arguments = args
                result = TOOLS[name](**args)
                invocation.tool_result = result
                return result

    if root:
        with provider.get_tracer("support-app").start_as_current_span("support episode"):
            _openai_loop(base_url, on_tool)
    else:
        _openai_loop(base_url, on_tool)


def run_traceloop(provider: Any, base_url: str) -> None:
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor

    OpenAIInstrumentor().instrument(tracer_provider=provider)
    with provider.get_tracer("support-app").start_as_current_span("support episode"):
        _openai_loop(base_url)


def run_oi_openai(provider: Any, base_url: str) -> None:
    from openinference.instrumentation.openai import OpenAIInstrumentor

    OpenAIInstrumentor().instrument(tracer_provider=provider)
    with provider.get_tracer("support-app").start_as_current_span("support episode"):
        _openai_loop(base_url)


def run_oi_agents(provider: Any, base_url: str) -> None:
    import openai
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    import agents

    OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)
    client = openai.AsyncOpenAI(base_url=base_url, api_key="test")
    model = agents.OpenAIChatCompletionsModel(model="gpt-4o-mini", openai_client=client)
    agent = agents.Agent(
        name="support",
        instructions="Help with orders.",
        model=model,
        tools=[agents.function_tool(lookup_order), agents.function_tool(issue_refund)],
    )
    agents.Runner.run_sync(agent, PROMPT)
    agents.set_trace_processors([])  # flushes nothing more to the SDK's own exporter


def run_oi_langchain(provider: Any, base_url: str) -> None:
    from langchain.agents import create_agent
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI
    from openinference.instrumentation.langchain import LangChainInstrumentor

    LangChainInstrumentor().instrument(tracer_provider=provider)
    model = ChatOpenAI(model="gpt-4o-mini", base_url=base_url, api_key="test")
    agent = create_agent(model, tools=[tool(lookup_order), tool(issue_refund)], name="support")
    agent.invoke({"messages": [{"role": "user", "content": PROMPT}]})


def run_pydantic_ai(provider: Any, base_url: str) -> None:
    from pydantic_ai import Agent
    from pydantic_ai.models.instrumented import InstrumentationSettings
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    model = OpenAIChatModel("gpt-4o-mini", provider=OpenAIProvider(base_url=base_url, api_key="t"))
    settings = InstrumentationSettings(
        tracer_provider=provider, include_content=bool(os.environ.get("INCLUDE_CONTENT"))
    )
    agent = Agent(model, name="support")
    agent.instrument = settings
    agent.tool_plain(lookup_order)
    agent.tool_plain(issue_refund)
    agent.run_sync(PROMPT)


def one(variant: str) -> None:
    from opentelemetry.exporter.otlp.json.file.trace_exporter import FileSpanExporter
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    runner, _ = VARIANTS[variant]
    provider, memory = _provider()
    with _server() as server:
        if runner.startswith("openai_v2"):
            run_openai_v2(
                provider,
                server.base_url,
                tools=runner.endswith("_tools"),
                root=not runner.endswith("_noroot"),
            )
        else:
            globals()[f"run_{runner}"](provider, server.base_url)
    provider.force_flush()
    spans = memory.get_finished_spans()
    jsonl = HERE / f"{variant}.jsonl"
    jsonl.unlink(missing_ok=True)
    exporter = FileSpanExporter(jsonl)
    exporter.export(spans)
    exporter.shutdown()
    (HERE / f"{variant}.pb").write_bytes(encode_spans(spans).SerializeToString())
    print(f"{variant}: {len(spans)} spans")


def main() -> None:
    if os.environ.get("TRACEGEN_ONE"):
        one(os.environ["TRACEGEN_ONE"])
        return
    for variant, (_, env) in VARIANTS.items():
        if len(sys.argv) > 1 and variant not in sys.argv[1:]:
            continue
        subprocess.run(
            [sys.executable, __file__],
            env={**os.environ, **env, "TRACEGEN_ONE": variant},
            check=True,
        )


if __name__ == "__main__":
    main()
