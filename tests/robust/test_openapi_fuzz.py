"""Fuzz the served OpenAPI document with schemathesis (issue 14, point 9): 0 × 5xx.

The host runs on a loopback socket; schemathesis generates requests for every operation of
``/openapi.json`` (bounded: a fixed number of derandomized examples each), sent with a valid
key. Every answer must be below 500, and every 4xx a closed error envelope; a
``validation_error`` names its field.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import httpx
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.core import NotSet

from tests.host.helpers import auth, serving

EXAMPLES = 25


def fuzz_openapi(
    base_url: str, examples: int = EXAMPLES, headers: dict[str, str] | None = None
) -> Counter[str]:
    """Fuzz every operation (sent with ``headers``, default a valid key of the test config);
    return outcome counts (``"<status> <error code>"``)."""
    sent = headers if headers is not None else auth()
    doc = httpx.get(base_url + "/openapi.json", timeout=10).json()
    schema = schemathesis.openapi.from_dict(doc)
    outcomes: Counter[str] = Counter()
    with httpx.Client(base_url=base_url, timeout=30) as client:
        for result in schema.get_all_operations():
            operation = result.ok()  # type: ignore[union-attr]  # an Err raises: the doc is bad

            @given(case=operation.as_strategy())
            @settings(max_examples=examples, deadline=None, database=None, derandomize=True,
                      suppress_health_check=list(HealthCheck))  # fmt: skip
            def one(case: Any) -> None:
                outcomes[_send(client, case, sent)] += 1

            one()
    return outcomes


def _send(client: httpx.Client, case: Any, sent: dict[str, str]) -> str:
    headers = {**sent, **(case.headers or {})}
    kwargs: dict[str, Any] = {"params": case.query, "headers": headers}
    if not isinstance(case.body, NotSet):
        kwargs["json"] = case.body
    response = client.request(case.method, case.formatted_path, **kwargs)
    assert response.status_code < 500, (case.method, case.formatted_path, response.text)
    if response.status_code < 400:
        return str(response.status_code)
    body = response.json()
    assert set(body) <= {"error", "message", "details"}, body
    if body["error"] == "validation_error":
        assert body["details"]["field"], body
    return f"{response.status_code} {body['error']}"


def test_fuzzing_the_served_openapi_document_gives_no_5xx(tmp_path: Path) -> None:
    with serving(str(tmp_path / "store.db")) as server:
        outcomes = fuzz_openapi(server.base_url)
    assert sum(outcomes.values()) >= EXAMPLES  # something was really sent
    assert not any(key.startswith("5") for key in outcomes)
