"""Invariant 1: an imported trace (no wopeval markers) grades like the stored run it came from."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from tests.engine.helpers import make_suite, run_suite, scripted_task
from wopeval.cli.app import app
from wopeval.engine.run import RunSettings
from wopeval.events.store import EventStore
from wopeval.grading.summary import GradingOptions, build_summary
from wopeval.suite import suite_to_document
from wopeval.wire.events import RunEvent

LOOKUP = {"tool": "crm:lookup", "args": {"id": 1}}
TRAJ = {"kind": "trajectory", "trajectory": {"match": "exact", "calls": [{"tool": "crm:lookup"}]}}


def _foreign(event: RunEvent) -> dict[str, Any]:
    """What another host would have written: no causationId, no x-wopeval-* keys."""
    doc = event.to_wire()
    doc.pop("causationId", None)
    if isinstance(doc["payload"], dict):
        doc["payload"] = {k: v for k, v in doc["payload"].items() if not k.startswith("x-")}
    return doc


async def test_positional_attribution_reproduces_the_summary(
    store: EventStore, tmp_path: Path
) -> None:
    script = {"calls": [LOOKUP], "trials": {"1": {"calls": [LOOKUP, LOOKUP]}}}
    delegate = {
        "calls": [
            {
                "delegate": {
                    "agentId": "core.conformance.agents.scripted.sub",
                    "input": {"calls": [LOOKUP]},
                }
            },
            LOOKUP,
        ]
    }
    suite = make_suite(
        [scripted_task("a", script, TRAJ), scripted_task("b", delegate, TRAJ)], trials={"count": 2}
    )
    ran = await run_suite(store, suite, settings=RunSettings(concurrency=1))
    foreign = [RunEvent.model_validate(_foreign(e)) for e in ran.events]
    options = GradingOptions(target_agent_id="core.conformance.agents.scripted")
    assert build_summary(suite, foreign, options).to_json() == ran.done.to_json()
    vendor = [
        RunEvent.model_validate(
            {**e.to_wire(), "payload": {**e.payload, "x-host-judge": "v3"}}
            if e.type == "eval.scored"
            else e.to_wire()
        )
        for e in foreign
    ]  # v2 eval payloads admit vendor keys; grading ignores them
    assert build_summary(suite, vendor, options).to_json() == ran.done.to_json()

    log = tmp_path / "log.jsonl"
    log.write_text("\n".join(json.dumps(_foreign(e)) for e in ran.events))
    suite_file = tmp_path / "suite.json"
    suite_file.write_text(json.dumps(suite_to_document(suite)))
    result = CliRunner().invoke(
        app,
        [
            "grade-log",
            str(log),
            "--suite",
            str(suite_file),
            "--agent",
            "core.conformance.agents.scripted",
            "--json",
        ],
    )
    assert result.output.strip() == ran.done.to_json()
    assert result.exit_code == (0 if ran.done.passed else 1)
