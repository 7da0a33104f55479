"""``GET /.well-known/openwop``: the closed v2 root, built from the configuration."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from tests.host.helpers import host_config, running_host
from tests.host.wire_schemas import validate_agents_record
from wopeval.host.discovery import capabilities, etag_matches
from wopeval.host.suites import SuiteCatalog

# capabilities.schema.json: the 17 metadata keys plus the family records (SDK 2.7.0 lists).
METADATA_KEYS = {
    "protocolVersion", "protocolVersions", "preferredVersion", "extensions", "implementation",
    "engineVersion", "eventLogSchemaVersion", "configurable", "observability",
    "minClientVersion", "runtimeCapabilities", "testing", "conformance", "fixtures",
    "compliance", "discovery", "signingKeys",
}  # fmt: skip


def _root_is_closed(doc: dict[str, Any]) -> None:
    from openwop_client._generated import CAPABILITY_FAMILY_KEYS

    for key, value in doc.items():
        assert key in METADATA_KEYS or key in CAPABILITY_FAMILY_KEYS, key
        if key in CAPABILITY_FAMILY_KEYS:
            assert value["since"] in doc["protocolVersions"]
            assert value["status"] == "experimental"
            assert date.fromisoformat(value["until"]) > date.today()  # until_in_past


async def test_discovery_default_advertises_every_implemented_facet(store_url: str) -> None:
    async with running_host(store_url) as host:
        response = await host.client.get("/.well-known/openwop")
    doc = response.json()
    _root_is_closed(doc)
    assert doc["protocolVersions"] == ["2.0"]
    assert doc["preferredVersion"] == "2.0"
    assert doc["implementation"]["name"] == "wopeval"
    assert doc["eventLogSchemaVersion"] == 3
    assert isinstance(doc["engineVersion"], int)
    assert doc["fixtures"] == ["conformance-eval-hosttest"]
    assert doc["agents"]["evalSuite"] == {
        "modes": ["golden", "live-shadow", "regression"],
        "maxTasksPerSuite": 1000,
        "trajectory": True,
        "trials": {"maxTrials": 10},
        "fixtureMatching": True,
        "regressionVerdict": True,
        "baselineSelection": True,
        "recordedFixtures": True,
        "x-wopeval-extensions": {
            "x-wopeval-adaptive": {"rules": ["sprt"]},
            "x-wopeval-world": {
                "operations": ["read", "set", "merge", "append", "increment", "remove"],
                "finalState": ["exact", "subset"],
            },
            "x-wopeval-user": {"kinds": ["scripted", "llm"], "order": ["in-order", "keyed"]},
            "x-wopeval-pin": {"pins": ["turn"]},
        },
    }
    assert doc["providerUsage"]["witness"] == "witnessable-gated"
    validate_agents_record(doc["agents"])
    assert response.headers["openwop-version"] == "2.0"


async def test_discovery_etag_and_if_none_match(store_url: str) -> None:
    async with running_host(store_url) as host:
        first = await host.client.get("/.well-known/openwop")
        etag = first.headers["ETag"]
        cached = await host.client.get("/.well-known/openwop", headers={"If-None-Match": etag})
        listed = await host.client.get(
            "/.well-known/openwop", headers={"If-None-Match": f'"nope", {etag}'}
        )
        stale = await host.client.get("/.well-known/openwop", headers={"If-None-Match": '"x"'})
    assert cached.status_code == listed.status_code == 304
    assert cached.content == b""
    assert cached.headers["ETag"] == etag
    assert cached.headers["openwop-version"] == "2.0"
    assert stale.status_code == 200


@pytest.mark.parametrize(
    ("facets", "expected"),
    [
        ({"trajectory": False}, {"trajectory": None}),
        ({"trials": False}, {"trials": None}),
        ({"trials": {"maxTrials": 3}}, {"trials": {"maxTrials": 3}}),
        ({"fixtureMatching": False}, {"fixtureMatching": None}),
        ({"regressionVerdict": True}, {"regressionVerdict": True}),
        ({"regressionVerdict": False}, {"regressionVerdict": None}),
        (
            {"baselineSelection": False, "regressionVerdict": False, "modes": ["golden"]},
            {"baselineSelection": None, "modes": ["golden"]},
        ),
        (
            {"baselineSelection": True, "modes": ["golden", "regression"]},
            {"baselineSelection": True, "modes": ["golden", "regression"]},
        ),
        (
            {"maxCostUsdPerSuite": 2.5, "maxTasksPerSuite": None},
            {"maxCostUsdPerSuite": 2.5, "maxTasksPerSuite": None},
        ),
        ({"extensions": []}, {"x-wopeval-extensions": None}),
        (
            {"extensions": ["x-wopeval-adaptive"]},
            {"x-wopeval-extensions": {"x-wopeval-adaptive": {"rules": ["sprt"]}}},
        ),
    ],
)
def test_0244_G_facets_follow_the_configuration(
    facets: dict[str, Any], expected: dict[str, Any]
) -> None:
    config = host_config(eval_suite=facets)
    doc = capabilities(config, SuiteCatalog(config.suiteDirectories, builtins=False))
    advertised = doc["agents"]["evalSuite"]
    for name, value in expected.items():
        assert advertised.get(name) == value
    validate_agents_record(doc["agents"])


def test_discovery_builtin_suites_advertise_conformance_fixtures() -> None:
    config = host_config(builtinSuites=True, suiteDirectories=[])
    doc = capabilities(config, SuiteCatalog([], builtins=True))
    assert {
        "conformance-eval-trajectory",
        "conformance-eval-trials",
        "conformance-eval-fixture-miss",
    } <= set(doc["fixtures"])


def test_discovery_without_eval_drops_the_agents_record() -> None:
    config = host_config(eval_suite={"enabled": False})
    doc = capabilities(config, SuiteCatalog([], builtins=False))
    assert "agents" not in doc
    assert "fixtures" not in doc
    assert "providerUsage" in doc


@pytest.mark.parametrize(
    ("header", "matches"),
    [
        (None, False),
        ('"a"', True),
        ('W/"a"', True),
        ('"b", "a"', True),
        ("*", True),
        ('"b"', False),
    ],
)
def test_etag_matching(header: str | None, matches: bool) -> None:
    assert etag_matches(header, '"a"') is matches
