"""The :class:`~wopeval.engine.agent.AgentContext` a trial's agents see: tool calls through the
trial's gateway under its limits, refused calls, usage reports and delegation, each recorded."""

from __future__ import annotations

import copy
from typing import Any

import anyio

from wopeval.engine.agent import (
    ToolResult,
    ToolSpec,
    TrialMemory,
    Usage,
    conversation_ended,
    usage_payload,
)
from wopeval.engine.gateway import TOOL_RESULT_CAP
from wopeval.engine.limits import jsonable, over_limit, sized_json
from wopeval.engine.toolspec import fixture_tool_names, merge_specs
from wopeval.engine.trial_state import TrialState, new_id
from wopeval.wire.events import (
    Decided,
    ErrorObject,
    Failure,
    InvocationCompleted,
    InvocationStarted,
    ToolCalled,
    ToolReturned,
    UserTurn,
)

__all__ = ["TrialContext"]


class TrialContext:
    """The :class:`~wopeval.engine.agent.AgentContext` one invocation sees."""

    def __init__(self, trial: TrialState, agent_id: str) -> None:
        self._trial = trial
        self._agent_id = agent_id

    @property
    def task_id(self) -> str:
        return self._trial.task.taskId

    @property
    def trial_index(self) -> int:
        fork = self._trial.env.fork  # a forked trial is the original one, relived
        return fork.trial_index if fork is not None else self._trial.trial_index

    @property
    def agent_id(self) -> str:
        return self._agent_id

    @property
    def memory(self) -> TrialMemory:
        return self._trial.memory

    @property
    def budget_exceeded(self) -> bool:
        return self._trial.env.meter.exceeded

    @property
    def has_user(self) -> bool:
        return self._trial.user is not None

    def tools(self) -> list[ToolSpec]:
        known = self._trial.env.registry.tool_specs.values()
        task = self._trial.task
        world = list(task.world.tools) if task.world is not None else []
        return merge_specs(known, [*fixture_tool_names([task]), *world])

    async def call_tool(self, tool: str, args: Any = None) -> ToolResult:
        trial = self._trial
        gateway = trial.gateway
        if not await gateway.admit():  # over the cap: refused, not recorded
            refusal = gateway.refusal()
            trial.went_over(Failure(exceptionType="ToolCallCap", message=refusal.error_message))
            return refusal
        call_id = new_id("call")
        base = {"agentId": self._agent_id, "toolName": tool, "callId": call_id}
        await trial.record(ToolCalled.build(**base, inputs=jsonable(args)))
        served = await gateway.call(tool, args)  # flushes before a live call
        result = served.result
        outcome = None
        if result.ok:
            cap = trial.env.limits.maxToolResultBytes
            outcome, size = sized_json(result.value, cap)
            if size > cap:
                message = over_limit("the tool's result", size, "maxToolResultBytes", cap)
                trial.went_over(Failure(exceptionType="ToolResultCap", message=message))
                result = ToolResult(ok=False, error_code=TOOL_RESULT_CAP, error_message=message)
        error = None
        if not result.ok:
            error = ErrorObject(
                code=result.error_code or "error", message=result.error_message or ""
            )
        returned = ToolReturned.build(
            **base,
            status="ok" if result.ok else "error",
            outcome=outcome if result.ok else None,
            error=error,
            durationMs=served.duration_ms,
            fixture=served.fixture,
            fixture_index=served.index,
            world_rule=served.world_rule,
        )
        await trial.record(returned)
        return result

    async def refuse_call(self, tool: str, inputs: Any, code: str, message: str) -> ToolResult:
        call_id = new_id("call")
        base = {"agentId": self._agent_id, "toolName": tool, "callId": call_id}
        await self._trial.record(ToolCalled.build(**base, inputs=jsonable(inputs)))
        error = ErrorObject(code=code, message=message)
        await self._trial.record(ToolReturned.build(**base, status="error", error=error))
        return ToolResult(ok=False, error_code=code, error_message=message)

    async def report_usage(self, usage: Usage) -> None:
        if usage.cost_usd is not None:
            self._trial.env.meter.add(usage.cost_usd)
        await self._trial.emit(usage_payload(usage))

    async def ask_user(self, message: Any) -> Any:
        """The user's answer, recorded as ``wopeval.user-turn`` (:mod:`wopeval.engine.user`)."""
        user = self._trial.user
        if user is None:
            raise RuntimeError(f"task {self.task_id} has no simulated user (x-wopeval-user)")
        answer = await user.respond(message)
        turn = UserTurn.build(
            agentId=self._agent_id,
            turn=answer.turn,
            kind=answer.kind,
            message=jsonable(message),
            replyIndex=answer.index,
            reply=answer.reply,
            cause=answer.cause,
            error=answer.error,
        )
        await self._trial.record(turn)
        if answer.kind == "reply":
            return answer.reply
        raise conversation_ended(user.ended or "stop", answer.reply)

    async def delegate(self, agent_id: str, task_input: Any) -> Any:
        agent = self._trial.env.registry.resolve(agent_id)
        ids = {"invocationId": new_id("inv"), "agentId": agent_id}
        await self._trial.record(InvocationStarted.build(**ids, source="run-api"))
        completed = False
        try:
            output = await agent(copy.deepcopy(task_input), TrialContext(self._trial, agent_id))
            cap = self._trial.env.limits.maxOutputBytes
            decision, size = sized_json(output, cap)
            if size > cap:  # not recorded; the delegate's caller still gets it
                message = over_limit(f"{agent_id}'s output", size, "maxOutputBytes", cap)
                self._trial.went_over(Failure(exceptionType="OutputCap", message=message))
            await self._trial.record(Decided.build(agentId=agent_id, decision=decision))
            completed = True
            return output
        finally:
            with anyio.CancelScope(shield=True):
                outcome = "completed" if completed else "failed"
                await self._trial.record(InvocationCompleted.build(**ids, outcome=outcome))
