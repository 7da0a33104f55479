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

On a task with a simulated user the graph converses (:mod:`wopeval.agents.conversing`): one
run per model turn over the state's ``messages`` plus the user's reply; a graph that declares
:func:`final_answer_tool` may end the conversation with it (the stream stops before the graph's
next step).

A model cassette is refused for a graph (:meth:`LangChainAdapter.check_cassette`): its nodes call
LangChain chat models of any provider, which wopeval cannot give a client of its own.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import aclosing
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, cast

from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.tools import BaseTool, StructuredTool
from langgraph.graph.state import CompiledStateGraph
from langgraph.prebuilt import ToolNode

from wopeval.agents.adapters.cassette_client import refuse
from wopeval.agents.adapters.common import TrialSpend, prompt_of, refuse_malformed, untrusted
from wopeval.agents.cassette import Cassette
from wopeval.agents.conversing import (
    FINAL_ANSWER_DESCRIPTION,
    FINAL_ANSWER_PARAMETERS,
    FINAL_ANSWER_TOOL,
    FinalAnswer,
    converses,
    user_reply,
)
from wopeval.agents.definition import Price
from wopeval.engine.agent import AgentContext, ToolSpec

PROVIDER = "langchain"
UNNAMED = "unnamed-tool"  # an invalid call whose name did not parse either
_MARK = "_wopeval_gateway_installed"
Execute = Callable[[Any], Awaitable[Any]]
# What the model is told of its final answer, and of a call after it (it never reads either:
# the graph stops before its next step).
ANSWER_TAKEN = "final answer taken"
NOT_MADE = '{"error": "not made: the conversation ended with the final answer"}'


@dataclass(frozen=True)
class _Trial:
    """The trial a graph runs for, and its final answer on a conversational task."""

    ctx: AgentContext
    final: FinalAnswer | None = None


_TRIAL: ContextVar[_Trial | None] = ContextVar("wopeval_trial", default=None)


def final_answer_tool() -> BaseTool:
    """:data:`~wopeval.agents.conversing.FINAL_ANSWER_TOOL` as a LangChain tool, for a graph
    that converses: a graph's tools are fixed when it is built, so it declares this one itself
    (``create_agent(model, tools=[..., final_answer_tool()])``). In a conversational trial its
    call ends the conversation with its ``answer``; outside one it returns the answer."""

    def final_answer(answer: Any) -> Any:
        return answer

    return StructuredTool.from_function(
        final_answer,
        name=FINAL_ANSWER_TOOL,
        description=FINAL_ANSWER_DESCRIPTION,
        args_schema=FINAL_ANSWER_PARAMETERS,
    )


async def _through_gateway(trial: _Trial, request: Any) -> ToolMessage:
    call, final = request.tool_call, trial.final
    if final is not None and final.given:  # after the final answer: not made
        return ToolMessage(content=NOT_MADE, tool_call_id=call["id"], name=call["name"])
    if final is not None and call["name"] == FINAL_ANSWER_TOOL:  # never a task call
        final.give(call.get("args"))
        return ToolMessage(content=ANSWER_TAKEN, tool_call_id=call["id"], name=call["name"])
    result = await trial.ctx.call_tool(call["name"], dict(call.get("args") or {}))
    content = json.dumps(untrusted(result), ensure_ascii=False)
    status = "success" if result.ok else "error"
    return ToolMessage(content=content, tool_call_id=call["id"], name=call["name"], status=status)


def _install(node: ToolNode) -> None:
    """Put the gateway innermost under the node's own wrapper (once per node)."""
    if getattr(node, _MARK, False):
        return
    original = node._awrap_tool_call

    async def wrapper(request: Any, execute: Execute) -> Any:
        trial = _TRIAL.get()
        if trial is None:  # not inside a wopeval trial: the graph as it was
            return await (original(request, execute) if original else execute(request))

        async def gateway(req: Any) -> Any:
            return await _through_gateway(trial, req)

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
        messages: list[Any] = [{"role": "user", "content": prompt_of(task_input)}]
        final = FinalAnswer() if converses(ctx) else None
        # The final answer is the graph's own tool, honoured on conversational tasks only.
        declared = any(FINAL_ANSWER_TOOL in node.tools_by_name for node in self.nodes)
        token = _TRIAL.set(_Trial(ctx, final if declared else None))
        try:
            state = await self._stream(spend, messages, final)
            if final is None:
                return _answer(state["messages"][-1])
            while not final.given:  # the conversation (wopeval.agents.conversing)
                said = _answer(state["messages"][-1])
                answered = await user_reply(ctx, said)
                if answered is None:
                    return said
                messages = [*state["messages"], HumanMessage(answered.text)]
                state = await self._stream(spend, messages, final)
            return final.value
        finally:
            _TRIAL.reset(token)

    async def _stream(
        self, spend: TrialSpend, messages: list[Any], final: FinalAnswer | None
    ) -> Any:
        """One run of the graph over ``messages`` (the state's history): the last state; it
        stops once a final answer is given, before the graph's next step."""
        state: Any = None
        stream = cast(
            AsyncGenerator[Any, None],
            self.graph.astream({"messages": messages}, stream_mode=["updates", "values"]),
        )
        async with aclosing(stream) as chunks:
            async for mode, chunk in chunks:
                if mode == "values":
                    state = chunk
                    continue
                for message in _new_messages(chunk):
                    await _observe(spend, message)
                if final is not None and final.given:
                    break
        return state


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
