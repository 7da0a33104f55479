"""``x-wopeval-pin`` on the host: advertised under ``x-wopeval-extensions`` by default, and a
suite using it refused with ``400 validation_error`` naming the expected call's member where it
is not advertised (RFC 0244 §G applied to wopeval's own members), even with the user advertised."""

from __future__ import annotations

import json
from pathlib import Path

from tests.host.helpers import eval_body, host_config, running_host
from tests.host.test_create_refusals import refused

REF = "suite://core.wopeval.evals.pinned"
PIN = "x-wopeval-pin"
SUITE = {
    "suiteId": "core.wopeval.evals.pinned",
    "version": "1.0.0",
    "modes": ["golden"],
    "tasks": [
        {
            "taskId": "echo",
            "input": {"output": "hello"},
            "expected": {
                "kind": "golden",
                "match": {"strategy": "exact", "value": "hello"},
                "trajectory": {"match": "subset", "calls": [{"tool": "a", PIN: {"turn": 0}}]},
            },
            "x-wopeval-user": {
                "kind": "scripted",
                "replies": [{"when": {"literal": "ref?"}, "reply": "ABC"}],
            },
        }
    ],
}
FIELD = f"tasks[0].expected.trajectory.calls[0].{PIN}"


def _suites(tmp_path: Path) -> list[str]:
    (tmp_path / "pinned.json").write_text(json.dumps(SUITE), encoding="utf-8")
    return [str(tmp_path)]


async def test_33_5_0244_G_unadvertised_pin_refused_naming_the_field(
    store_url: str, tmp_path: Path
) -> None:
    config = host_config(
        eval_suite={"extensions": ["x-wopeval-user"]}, suiteDirectories=_suites(tmp_path)
    )
    async with running_host(store_url, config) as host:
        response = await host.create(eval_body(REF, evalModes=["golden"]))
        discovery = (await host.client.get("/.well-known/openwop")).json()
    details = refused(response, 400, "validation_error", FIELD)
    assert f"{PIN} is not advertised by this host" in response.json()["message"]
    assert [e["field"] for e in details["errors"]] == [FIELD]
    advertised = discovery["agents"]["evalSuite"]["x-wopeval-extensions"]
    assert PIN not in advertised
    assert "x-wopeval-user" in advertised


async def test_33_5_0244_G_pin_is_advertised_by_default(store_url: str, tmp_path: Path) -> None:
    async with running_host(store_url, host_config(suiteDirectories=_suites(tmp_path))) as host:
        discovery = (await host.client.get("/.well-known/openwop")).json()
    advertised = discovery["agents"]["evalSuite"]["x-wopeval-extensions"]
    assert advertised[PIN] == {"pins": ["turn"]}
