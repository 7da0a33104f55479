"""How an ``--agent-cmd`` process reports its model usage: ``POST $WOPEVAL_USAGE_URL``.

The trial's endpoint (the same loopback server and bearer token as its MCP endpoint) answers
``POST /usage`` with a JSON body ``{"model", "inputTokens", "outputTokens", "costUsd"?,
"provider"?}``, one per model call. Each report is one ``provider.usage`` of the trial: its
``costUsd`` when given, else its tokens priced with the agent definition's ``price``, else no
cost (counted as 0). The answer is ``{"ok": true, "trialCostUsd", "stop"}``; a body that is not
such an object gets ``400`` with every error, each naming its field. Once the run's ceilings or
the definition's ``maxCostUsd`` are passed the answer says ``"stop": true`` and the process is
stopped: the trial fails with ``AgentStopped``. A definition with ``maxCostUsd`` whose process
never reports fails its trial (its cost is unknown, so the ceiling was never enforced).
"""

from __future__ import annotations

import json
import math
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from wopeval.agents.openai_compat import AgentStopped
from wopeval.engine.agent import AgentContext, Usage
from wopeval.errors import RunError

if TYPE_CHECKING:
    from wopeval.agents.definition import Price

USAGE_ENV = "WOPEVAL_USAGE_URL"
USAGE_PATH = "/usage"
PROVIDER = "command"
MAX_BODY = 64 * 1024
Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
Asgi = Callable[[Scope, Receive, Send], Awaitable[None]]


class UsageNotReported(RunError):
    """A command agent with ``maxCostUsd`` that never reported its usage: cost unknown."""


class UsageReport(BaseModel):
    """One model call of the agent's process."""

    model_config = ConfigDict(extra="forbid", strict=True)

    model: str = Field(min_length=1, max_length=200)
    inputTokens: int = Field(ge=0)
    outputTokens: int = Field(ge=0)
    costUsd: float | None = Field(default=None, ge=0)
    provider: str = Field(default=PROVIDER, min_length=1, max_length=200)

    @field_validator("costUsd")
    @classmethod
    def _finite(cls, value: float | None) -> float | None:
        if value is not None and not math.isfinite(value):
            raise ValueError("must be a finite number")
        return value


@dataclass
class CommandSpend:
    """One trial's reported usage against its ceilings."""

    ctx: AgentContext
    price: Price | None = None
    ceiling: float | None = None
    spent: float = 0.0
    reports: int = 0
    stopped: str | None = None
    on_stop: Callable[[], None] | None = None

    async def report(self, report: UsageReport) -> dict[str, Any]:
        cost = report.costUsd
        if cost is None and self.price is not None:
            cost = self.price.cost(report.inputTokens, report.outputTokens)
        usage = Usage(report.provider, report.model, report.inputTokens, report.outputTokens, cost)
        await self.ctx.report_usage(usage)
        self.reports += 1
        self.spent += cost or 0.0
        if self.stopped is None:
            self.stopped = self._over()
        return {"ok": True, "trialCostUsd": self.spent, "stop": self.stopped is not None}

    def _over(self) -> str | None:
        if self.ctx.budget_exceeded:
            return (
                f"cost ceiling: the run's spend passed its ceiling (this trial spent "
                f"${self.spent:.6f}); the agent command was stopped"
            )
        if self.ceiling is not None and self.spent > self.ceiling:
            return f"maxCostUsd: the trial spent ${self.spent:.6f}, over its ${self.ceiling:g}"
        return None

    def stop_if_over(self) -> None:
        if self.stopped is not None and self.on_stop is not None:
            self.on_stop()

    def outcome(self, must_report: bool) -> None:
        """Raise why the trial cannot stand on its spend (stopped, or never reported)."""
        if self.stopped is not None:
            raise AgentStopped(self.stopped)
        if must_report and self.reports == 0:
            raise UsageNotReported(
                f"maxCostUsd: the agent command never reported its usage (POST ${USAGE_ENV}), "
                "so its cost is unknown and the ceiling was not enforced"
            )


def usage_route(app: Asgi, spend: CommandSpend) -> Asgi:
    """``POST /usage`` reports to ``spend``; every other request goes to ``app``."""

    async def routed(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("path") != USAGE_PATH:
            await app(scope, receive, send)
            return
        if scope.get("method") != "POST":
            await respond(send, 405, {"error": "POST a usage report"})
            return
        body = await read_body(receive)
        if body is None:
            await respond(send, 413, {"error": f"a usage report is at most {MAX_BODY} bytes"})
            return
        try:
            report = UsageReport.model_validate_json(body)
        except ValidationError as exc:
            await respond(send, 400, {"error": "invalid usage report", "errors": _named(exc)})
            return
        await respond(send, 200, await spend.report(report))
        spend.stop_if_over()

    return routed


def _named(exc: ValidationError) -> list[str]:
    return [
        f"{'.'.join(str(p) for p in error['loc']) or '$'}: {error['msg']}" for error in exc.errors()
    ]


async def read_body(receive: Receive) -> bytes | None:
    body = b""
    while True:
        message = await receive()
        body += bytes(message.get("body", b""))
        if len(body) > MAX_BODY:
            return None
        if not message.get("more_body"):
            return body


async def respond(send: Send, status: int, doc: dict[str, Any]) -> None:
    body = json.dumps(doc).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
