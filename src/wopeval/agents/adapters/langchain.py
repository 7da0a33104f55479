"""LangChain v1 / LangGraph adapter: a compiled agent graph whose tool calls go through the
gateway.

Every ``ToolNode`` of the graph (``create_agent``'s ``tools`` node, or one in a graph you built)
gets a tool-call wrapper that, while a wopeval trial runs the graph, replaces the tool's
execution with a call to that trial's gateway: the model still sees the declared tools, any
``wrap_tool_call`` middleware still runs around the call, but the result comes from the fixture
(or fails closed), and the call is recorded. Outside a trial the graph behaves as before. The
current trial is a ``ContextVar``, so concurrent trials share the graph safely. Usage is one
``provider.usage`` per AI message with ``usage_metadata``. Needs ``langchain``/``langgraph``
(``wopeval[langchain]``).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode

from wopeval.agents.adapters.common import prompt_of, untrusted
from wopeval.engine.agent import AgentContext, ToolSpec, Usage

PROVIDER = "langchain"
_TRIAL: ContextVar[AgentContext | None] = ContextVar("wopeval_trial", default=None)
_MARK = "_wopeval_gateway_installed"
Execute = Callable[[Any], Awaitable[Any]]


async def _through_gateway(ctx: AgentContext, request: Any) -> ToolMessage:
    call = request.tool_call
    result = await ctx.call_tool(call["name"], dict(call.get("args") or {}))
    content = json.dumps(untrusted(result), ensure_ascii=False)
    status = "success" if result.ok else "error"
    return ToolMessage(content=content, tool_call_id=call["id"], name=call["name"], status=status)


def _install(node: ToolNode) -> None:
    """Put the gateway innermost under the node's own wrapper (once per node)."""
    if getattr(node, _MARK, False):
        return
    original = node._awrap_tool_call

    async def wrapper(request: Any, execute: Execute) -> Any:
        ctx = _TRIAL.get()
        if ctx is None:  # not inside a wopeval trial: the graph as it was
            return await (original(request, execute) if original else execute(request))

        async def gateway(req: Any) -> Any:
            return await _through_gateway(ctx, req)

        return await (original(request, gateway) if original else gateway(request))

    node._awrap_tool_call = wrapper
    setattr(node, _MARK, True)


def tool_nodes(graph: CompiledStateGraph[Any, Any, Any, Any]) -> list[ToolNode]:
    found = []
    for node in graph.nodes.values():
        bound = getattr(node, "bound", None)
        if isinstance(bound, ToolNode):
            found.append(bound)
    return found


class LangChainAdapter:
    """A wopeval agent running a compiled LangGraph agent graph (``create_agent``'s, or yours)."""

    def __init__(self, graph: CompiledStateGraph[Any, Any, Any, Any]) -> None:
        self.graph = graph
        self.nodes = tool_nodes(graph)
        for node in self.nodes:
            _install(node)
        self.__name__ = self.__qualname__ = f"langgraph:{graph.name}"

    def declared_tools(self) -> list[ToolSpec] | None:
        specs = []
        for node in self.nodes:
            for tool in node.tools_by_name.values():
                schema = tool.tool_call_schema
                parameters = schema if isinstance(schema, dict) else _schema_of(schema)
                specs.append(ToolSpec(tool.name, tool.description or "", parameters))
        return specs

    async def __call__(self, task_input: Any, ctx: AgentContext) -> Any:
        token = _TRIAL.set(ctx)
        try:
            state = await self.graph.ainvoke(
                {"messages": [{"role": "user", "content": prompt_of(task_input)}]}
            )
        finally:
            _TRIAL.reset(token)
        messages = state["messages"]
        for message in messages:
            usage = getattr(message, "usage_metadata", None)
            if isinstance(message, AIMessage) and usage:
                model = str(message.response_metadata.get("model_name") or PROVIDER)
                tokens = Usage(PROVIDER, model, usage["input_tokens"], usage["output_tokens"])
                await ctx.report_usage(tokens)
        return _answer(messages[-1])


def _answer(message: Any) -> Any:
    content = getattr(message, "content", message)
    if isinstance(content, list):  # content blocks: the text parts
        content = "".join(b.get("text", "") for b in content if isinstance(b, dict))
    return content


def _schema_of(model: Any) -> dict[str, Any]:
    """A pydantic (v2, or v1 as LangChain may still use) model's JSON Schema."""
    if hasattr(model, "model_json_schema"):
        return dict(model.model_json_schema())
    return dict(model.schema())
