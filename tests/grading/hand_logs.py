"""Hand-built run logs for store-free grading tests: one bracket and ``eval.scored`` a trial."""

from __future__ import annotations

from typing import Any

from wopeval.suite.models import AgentEvalSuite
from wopeval.wire.events import RunEvent
from wopeval.wire.vocab import EVAL_SCORED, INVOCATION_COMPLETED, INVOCATION_STARTED, X_TASK_ID

AGENT = "core.acme.agent"


def golden_suite(tasks: int, thresholds: dict[str, Any] | None = None) -> AgentEvalSuite:
    """Tasks t0, t1, … expecting the output "ok"."""
    doc: dict[str, Any] = {
        "suiteId": "core.acme.evals.hand",
        "version": "1.0.0",
        "modes": ["golden"],
        "tasks": [
            {
                "taskId": f"t{i}",
                "input": "hi",
                "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "ok"}},
            }
            for i in range(tasks)
        ],
    }
    if thresholds is not None:
        doc["thresholds"] = thresholds
    return AgentEvalSuite.model_validate(doc)


class Log:
    """Events appended in order; each trial's bracket starts at 09:00:00."""

    def __init__(self) -> None:
        self.events: list[RunEvent] = []

    def add(self, type_: str, payload: dict[str, Any], at_ms: int, cause: str | None) -> str:
        event_id = f"evt-hand-{len(self.events):08d}"
        seconds, ms = divmod(at_ms, 1000)
        self.events.append(
            RunEvent(
                eventId=event_id,
                runId="run-hand",
                type=type_,
                payload=payload,
                timestamp=f"2026-12-01T09:00:{seconds:02d}.{ms:03d}Z",
                sequence=len(self.events),
                causationId=cause,
            )
        )
        return event_id

    def trial(self, task: str, index: int = 0, latency_ms: int = 0, passed: bool = True) -> None:
        """One trial of ``task``: its bracket ``latency_ms`` long, then its ``eval.scored``."""
        invocation = f"inv-{task}-{index}-{len(self.events)}"
        started = {"invocationId": invocation, "agentId": AGENT, "source": "run-api",
                   X_TASK_ID: task, "x-wopeval-trialIndex": index}  # fmt: skip
        root = self.add(INVOCATION_STARTED, started, 0, None)
        done = {"invocationId": invocation, "agentId": AGENT, "outcome": "completed"}
        self.add(INVOCATION_COMPLETED, done, latency_ms, root)
        scored = {"taskId": task, "trialIndex": index, "score": float(passed), "passed": passed}
        self.add(EVAL_SCORED, scored, latency_ms, None)
