"""The served OpenAPI document is generated from the typed bodies the host really answers with."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema

from tests.host.helpers import eval_body, running_host, segment
from wopeval.host.create import ALLOWED_KEYS
from wopeval.wire.api import CreatedRun, PollPage, RunSnapshot

VENDORED = Path(__file__).resolve().parents[1] / "data" / "openwop-v2"


def _resolve(doc: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if ref is None:
        return schema
    node: Any = doc
    for part in ref.removeprefix("#/").split("/"):
        node = node[part]
    return dict(node)


async def test_openapi_describes_create_snapshot_poll_and_errors(tmp_path: Path) -> None:
    async with running_host(str(tmp_path / "s.db")) as host:
        response = await host.client.get("/openapi.json")
        assert response.status_code == 200
        doc = response.json()
        assert doc["openapi"].startswith("3.")
        create = doc["paths"]["/runs"]["post"]
        body = create["requestBody"]["content"]["application/json"]["schema"]
        # The closed create body: exactly the members the host's own check accepts.
        assert set(body["properties"]) == set(ALLOWED_KEYS)
        assert body["additionalProperties"] is False
        created = _resolve(doc, create["responses"]["201"]["content"]["application/json"]["schema"])
        assert set(created["required"]) == {"runId", "status", "eventsUrl", "statusUrl"}
        assert "400" in create["responses"]
        assert "404" in create["responses"]
        # … and what the host answers validates against what the document says.
        answer = await host.create(eval_body())
        CreatedRun.model_validate(answer.json())
        run_id = answer.json()["runId"]
        poll = await host.get(f"/runs/{segment(run_id)}/events/poll?timeout=5")
        PollPage.model_validate(poll.json())
        snap = await host.get(f"/runs/{segment(run_id)}")
        RunSnapshot.model_validate(snap.json())
        refused = await host.create({**eval_body(), "nonsense": 1})
        envelope = doc["components"]["schemas"]["ErrorEnvelope"]
        jsonschema.validate(refused.json(), envelope)


def test_the_snapshot_model_is_within_the_upstream_run_snapshot_schema() -> None:
    upstream = json.loads((VENDORED / "run-snapshot.schema.json").read_text(encoding="utf-8"))
    ours = RunSnapshot.model_json_schema()
    assert set(ours["properties"]) <= set(upstream["properties"])  # no member upstream lacks
    assert set(upstream["required"]) <= set(ours["required"])  # every required member filled


def test_the_poll_page_is_the_wire_digests_closed_object() -> None:
    # openwop-wire.md §4.3: {runId, events, lastSequence, status, isTerminal}, closed.
    schema = PollPage.model_json_schema()
    assert set(schema["properties"]) == {"runId", "events", "lastSequence", "status", "isTerminal"}
    assert schema["additionalProperties"] is False
