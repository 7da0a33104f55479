"""A suite prepared once for many runs: its stored document, the document's stored text and
its digests, made when the suite is parsed rather than at each create (the host's catalog)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from wopeval.events.tables import dumps_json
from wopeval.suite import suite_to_document
from wopeval.suite.digest import definition_digests
from wopeval.suite.models import AgentEvalSuite
from wopeval.wire.request import DefinitionDigests

__all__ = ["PreparedSuite", "prepare_suite"]


@dataclass(frozen=True)
class PreparedSuite:
    """A parsed suite with its stored document and digests made once, for a caller that plans
    many runs of one suite object (the host's suite catalog). A plan takes them only for that
    very object (:attr:`~wopeval.service.runs.RunPlan.prepared`); the document is shared: do
    not change it."""

    suite: AgentEvalSuite
    document: dict[str, Any]
    digests: DefinitionDigests
    document_json: str  # the document's stored text (``dumps_json``)


def prepare_suite(suite: AgentEvalSuite) -> PreparedSuite:
    document = suite_to_document(suite)
    digests = definition_digests(suite, document)
    return PreparedSuite(suite, document, digests, dumps_json(document))
