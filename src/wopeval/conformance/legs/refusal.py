"""Leg ``0244.unadvertised-feature-refused`` (RFC 0244 §G).

On a host advertising ``agents.evalSuite`` without ``trials`` but listing
``conformance-eval-trials``, creating a run of that suite (``trials.count: 3``) must be refused
with ``400 validation_error`` naming ``trials.count`` (in the message or the details). A host
MUST NOT silently grade such a suite as if the field were absent.
"""

from __future__ import annotations

import json

from wopeval.conformance.client import Reply
from wopeval.conformance.legs.common import Checker

FIELD = "trials.count"


def check_refusal(reply: Reply) -> Checker:
    """Check the host's answer to ``POST /runs`` for the trials fixture."""
    ck = Checker()
    body = reply.body if isinstance(reply.body, dict) else {}
    if reply.status in (200, 201, 202):
        ck.fail(
            f"the run was accepted ({reply.status}, runId {body.get('runId')!r}) although "
            "trials is not advertised"
        )
        return ck
    ck.check(reply.status == 400, f"answered {reply.status}, want 400")
    ck.check(
        body.get("error") == "validation_error",
        f"error code {body.get('error')!r}, want 'validation_error'",
    )
    named = FIELD in str(body.get("message", "")) or FIELD in json.dumps(body.get("details"))
    ck.check(named, f"the refusal does not name {FIELD!r} (message {body.get('message')!r})")
    return ck
