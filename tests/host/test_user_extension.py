"""``x-wopeval-user`` on the host: advertised under ``x-wopeval-extensions`` by default, and a
suite using it refused with ``400 validation_error`` naming the member where it is not
advertised (RFC 0244 §G applied to wopeval's own members)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.host.helpers import eval_body, host_config, running_host
from tests.host.test_create_refusals import refused

REF = "suite://core.wopeval.evals.talk"
SUITE = {
    "suiteId": "core.wopeval.evals.talk",
    "version": "1.0.0",
    "modes": ["golden"],
    "tasks": [
        {
            "taskId": "echo",
            "input": {"output": "hello"},
            "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "hello"}},
            "x-wopeval-user": {
                "kind": "scripted",
                "replies": [{"when": {"literal": "ref?"}, "reply": "ABC"}],
            },
        }
    ],
}


def _suites(tmp_path: Path) -> list[str]:
    (tmp_path / "talk.json").write_text(json.dumps(SUITE), encoding="utf-8")
    return [str(tmp_path)]


async def test_33_2_0244_G_unadvertised_user_refused_naming_the_field(
    store_url: str, tmp_path: Path
) -> None:
    config = host_config(
        eval_suite={"extensions": ["x-wopeval-adaptive"]}, suiteDirectories=_suites(tmp_path)
    )
    async with running_host(store_url, config) as host:
        response = await host.create(eval_body(REF, evalModes=["golden"]))
        discovery = (await host.client.get("/.well-known/openwop")).json()
    details = refused(response, 400, "validation_error", "tasks[0].x-wopeval-user")
    assert "x-wopeval-user is not advertised by this host" in response.json()["message"]
    assert [e["field"] for e in details["errors"]] == ["tasks[0].x-wopeval-user"]
    advertised = discovery["agents"]["evalSuite"]["x-wopeval-extensions"]
    assert "x-wopeval-user" not in advertised


async def test_33_2_0244_G_advertised_user_is_accepted_and_runs(
    store_url: str, tmp_path: Path
) -> None:
    async with running_host(store_url, host_config(suiteDirectories=_suites(tmp_path))) as host:
        discovery = (await host.client.get("/.well-known/openwop")).json()
        response = await host.create(eval_body(REF, evalModes=["golden"]))
        assert response.status_code == 201, response.text
        final = await host.wait_terminal(response.json()["runId"])
    assert final["status"] == "completed"
    advertised = discovery["agents"]["evalSuite"]["x-wopeval-extensions"]
    assert advertised["x-wopeval-user"] == {
        "kinds": ["scripted", "llm"],
        "order": ["in-order", "keyed"],
    }
