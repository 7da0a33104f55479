"""LangChain v1 / LangGraph adapter: a compiled agent graph whose tool calls go through the
gateway.

Every ``ToolNode`` of the graph (``create_agent``'s ``tools`` node, or one in a graph you built)
gets a tool-call wrapper that, while a wopeval trial runs the graph, replaces the tool's
execution with a call to that trial's gateway: the model still sees the declared tools, any
``wrap_tool_call`` middleware still runs around the call, but the result comes from the fixture
(or fails closed), and the call is recorded. Outside a trial the graph behaves as before. The
current trial is a ``ContextVar``, so concurrent trials share the graph safely. The graph is
streamed (``stream_mode`` updates and values): each new AI message with ``usage_metadata`` is one
``provider.usage`` as it arrives (priced with the definition's ``price``), each of its
``invalid_tool_calls`` (argument text the model integration could not parse, which no
``ToolNode`` ever sees) is recorded as the attempted call, marked malformed, and the cost
ceilings are checked once tools have run, before the next model call. Needs
``langchain``/``langgraph`` (``wopeval[langchain]``).

A model cassette is refused for a graph (:meth:`LangChainAdapter.check_cassette`): its nodes call
LangChain chat models of any provider, which wopeval cannot give a client of its own.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from typing import Any

from langchain_core.messages import AIMessage, ToolMessage
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode

from wopeval.agents.adapters.cassette_client import refuse
from wopeval.agents.adapters.common import TrialSpend, prompt_of, refuse_malformed, untrusted
from wopeval.agents.cassette import Cassette
from wopeval.agents.definition import Price
from wopeval.engine.agent import AgentContext, ToolSpec

PROVIDER = "langchain"
UNNAMED = "unnamed-tool"  # an invalid call whose name did not parse either
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

    def __init__(
        self,
        graph: CompiledStateGraph[Any, Any, Any, Any],
        *,
        price: Price | None = None,
        max_cost_usd: float | None = None,
    ) -> None:
        self.graph = graph
        self.price = price
        self.max_cost_usd = max_cost_usd
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

    def check_cassette(self, cassette: Cassette) -> None:
        """Refuse a model cassette: the graph's chat models make their own clients."""
        why = "a LangGraph graph calls its LangChain chat models with clients they make themselves"
        raise refuse(cassette, self.__name__, why)

    async def __call__(self, task_input: Any, ctx: AgentContext) -> Any:
        spend = TrialSpend(ctx, PROVIDER, self.price, self.max_cost_usd)
        prompt = {"messages": [{"role": "user", "content": prompt_of(task_input)}]}
        state: Any = None
        token = _TRIAL.set(ctx)
        try:
            async for mode, chunk in self.graph.astream(prompt, stream_mode=["updates", "values"]):
                if mode == "values":
                    state = chunk
                    continue
                for message in _new_messages(chunk):
                    await _observe(spend, message)
        finally:
            _TRIAL.reset(token)
        return _answer(state["messages"][-1])


def _new_messages(update: Any) -> list[Any]:
    """The messages one step added (``{node: {"messages": [...]}}``)."""
    found: list[Any] = []
    for delta in update.values() if isinstance(update, dict) else ():
        messages = delta.get("messages") if isinstance(delta, dict) else None
        if isinstance(messages, list):
            found.extend(messages)
        elif messages is not None:
            found.append(messages)
    return found


async def _observe(spend: TrialSpend, message: Any) -> None:
    """Usage and unreadable calls of a new AI message; the ceilings after tools ran."""
    if isinstance(message, ToolMessage):
        spend.check()
        return
    if not isinstance(message, AIMessage):
        return
    usage = message.usage_metadata
    if usage:
        model = str(message.response_metadata.get("model_name") or PROVIDER)
        await spend.report(model, usage["input_tokens"], usage["output_tokens"])
    for invalid in message.invalid_tool_calls:
        args = invalid.get("args")
        text = (
            args if isinstance(args, str) else "" if args is None else json.dumps(args, default=str)
        )
        name = str(invalid.get("name") or "") or UNNAMED
        await refuse_malformed(spend.ctx, name, text)


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
