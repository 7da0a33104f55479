"""``GET /.well-known/openwop``: the closed v2 discovery root (capabilities.md §1–§3).

Unauthenticated. The document is built from the configuration, so a facet switched off there is
absent here (truthful advertisement, RFC 0031; RFC 0244 §G). It carries a strong ``ETag`` (a
digest of its bytes) and answers a matching ``If-None-Match`` with ``304``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from fastapi import APIRouter, Request, Response

from wopeval import __version__
from wopeval.host.config import HostConfig
from wopeval.host.errors import PROTOCOL_VERSIONS, VERSION_HEADER
from wopeval.host.state import state_of
from wopeval.host.suites import SuiteCatalog
from wopeval.suite.extensions import ADVERTISEMENT_KEY, advertisement
from wopeval.wire.events import EVENT_LOG_SCHEMA_VERSION

ENGINE_VERSION = 1
WITNESS = "witnessable-gated"

router = APIRouter()


def _family(config: HostConfig, **facets: Any) -> dict[str, Any]:
    """A family record: experimental since this host's 2.0, until the configured date."""
    return {
        "status": "experimental",
        "since": PROTOCOL_VERSIONS[0],
        "until": config.familyUntil,
        "witness": WITNESS,
        **facets,
    }


def eval_suite_facet(config: HostConfig) -> dict[str, Any]:
    """``agents.evalSuite`` (RFC 0081 members, the RFC 0244 §G ones that are on, then wopeval's
    own suite members under the vendor member ``x-wopeval-extensions``)."""
    settings = config.evalSuite
    facet: dict[str, Any] = {"modes": config.advertised_modes()}
    if settings.maxTasksPerSuite is not None:
        facet["maxTasksPerSuite"] = settings.maxTasksPerSuite
    if settings.maxCostUsdPerSuite is not None:
        facet["maxCostUsdPerSuite"] = settings.maxCostUsdPerSuite
    if settings.trajectory:
        facet["trajectory"] = True
    if settings.trials is not None:
        facet["trials"] = {"maxTrials": settings.trials.maxTrials}
    if settings.fixtureMatching:
        facet["fixtureMatching"] = True
    if settings.regressionVerdict:
        facet["regressionVerdict"] = True
    if settings.baselineSelection:
        facet["baselineSelection"] = True
    if settings.recordedFixtures:
        facet["recordedFixtures"] = True
    extensions = settings.advertised_extensions()
    if extensions:
        facet[ADVERTISEMENT_KEY] = advertisement(extensions)
    return facet


def capabilities(
    config: HostConfig, catalog: SuiteCatalog, workflows: Sequence[str] = ()
) -> dict[str, Any]:
    """The root; ``fixtures`` lists the seeded workflow ids and, when eval runs are on, the
    served eval-suite fixtures (never a fixture the host would refuse to run)."""
    doc: dict[str, Any] = {
        "protocolVersions": list(PROTOCOL_VERSIONS),
        "preferredVersion": PROTOCOL_VERSIONS[0],
        "implementation": {"name": "wopeval", "version": __version__},
        "engineVersion": ENGINE_VERSION,
        "eventLogSchemaVersion": EVENT_LOG_SCHEMA_VERSION,
    }
    suites = catalog.fixture_ids() if config.evalSuite.enabled else []
    fixtures = sorted({*suites, *workflows})
    if fixtures:
        doc["fixtures"] = fixtures
    if config.evalSuite.enabled:
        doc["agents"] = _family(config, evalSuite=eval_suite_facet(config))
    doc["providerUsage"] = _family(config)
    return doc


def strong_etag(data: bytes) -> str:
    return '"' + hashlib.sha256(data).hexdigest()[:32] + '"'


def etag_matches(if_none_match: str | None, etag: str) -> bool:
    """RFC 9110 §13.1.2: weak comparison over a list of tags, or ``*``."""
    if not if_none_match:
        return False
    bare = etag.removeprefix("W/")
    for candidate in if_none_match.split(","):
        tag = candidate.strip()
        if tag == "*" or tag.removeprefix("W/") == bare:
            return True
    return False


def not_modified(etag: str) -> Response:
    return Response(status_code=304, headers={"ETag": etag, VERSION_HEADER: PROTOCOL_VERSIONS[0]})


@router.get("/.well-known/openwop")
async def get_capabilities(request: Request) -> Response:
    state = state_of(request)
    doc = capabilities(state.config, state.catalog, state.workflows.ids())
    body = json.dumps(doc, separators=(",", ":")).encode()
    etag = strong_etag(body)
    if etag_matches(request.headers.get("if-none-match"), etag):
        return not_modified(etag)
    return Response(
        body,
        media_type="application/json",
        headers={"ETag": etag, "Cache-Control": "no-cache"},
    )
