"""JSON that parses but cannot be stored is the caller's mistake: ``400 validation_error`` naming
the member, never ``500 internal_error`` (NaN, infinities, overflowing numbers, oversized integer
literals, lone surrogates, runaway nesting), on ``POST /runs`` and on the cancel body."""

from __future__ import annotations

import json

import httpx
import pytest

from tests.host.helpers import DEMO_REF, SCRIPTED, TENANT_A, Host, auth, running_host, segment
from tests.host.wire_schemas import validate_error
from wopeval.host.jsonbody import MAX_DEPTH

JSON_HEADERS = {**auth(), "Content-Type": "application/json"}
PREFIX = f'{{"mode":"eval","evalSuiteRef":"{DEMO_REF}","agentId":"{SCRIPTED}"'.encode()


def create_body(**members: bytes) -> bytes:
    """A valid create body plus raw JSON ``members`` (spliced in as written)."""
    extra = b"".join(b',"' + key.encode() + b'":' + value for key, value in members.items())
    return PREFIX + extra + b"}"


def nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def assert_refused(response: httpx.Response, field: str) -> None:
    assert response.status_code == 400, response.text
    body = response.json()
    validate_error(body)
    assert body["error"] == "validation_error"
    assert body["details"]["field"] == field
    assert response.headers["openwop-version"] == "2.0"


async def post(host: Host, raw: bytes, **headers: str) -> httpx.Response:
    return await host.client.post("/runs", content=raw, headers={**JSON_HEADERS, **headers})


async def run_count(host: Host) -> int:
    return len(await host.state.store.list_runs(tenant=TENANT_A, limit=10_000))


UNSTORABLE: list[tuple[str, bytes, str, str]] = [  # id, body, field, words of the message
    ("nan", create_body(metadata=b'{"a":NaN}'), "metadata.a", "NaN is not a JSON number"),
    ("infinity", create_body(metadata=b'{"a":Infinity}'), "metadata.a", "is not a JSON number"),
    ("minus-infinity", create_body(metadata=b'{"a":[1,-Infinity]}'), "metadata.a[1]", "NaN and"),
    ("overflow", create_body(metadata=b'{"a":1e999}'), "metadata.a", "1e999 is out of the range"),
    ("negative-overflow", create_body(metadata=b'{"b":{"c":-1e999}}'), "metadata.b.c", "range"),
    ("huge-int", create_body(metadata=b'{"n":' + b"7" * 5000 + b"}"), "metadata.n", "digits"),
    ("surrogate-escape", create_body(metadata=b'{"a":"\\ud800"}'), "metadata.a", "surrogate"),
    ("surrogate-raw", create_body(metadata=b'{"a":"x\xed\xa0\x80"}'), "metadata.a", "surrogate"),
    ("surrogate-key", create_body(metadata=b'{"\\udc00k":1}'), "metadata.\\udc00k", "name"),
    ("surrogate-tag", create_body(tags=b'["ok","\\ud83d"]'), "tags[1]", "Unicode"),
    ("root-nan", b"NaN", "$", "NaN"),
    ("deep-100000", create_body(metadata=nested(100_000)), "$", f"deeper than {MAX_DEPTH}"),
    (
        "deep-limit",
        create_body(metadata=b'{"a":' + nested(MAX_DEPTH - 1) + b"}"),
        "metadata",
        f"deeper than {MAX_DEPTH}",
    ),
]


@pytest.mark.parametrize(
    ("raw", "field", "words"), [c[1:] for c in UNSTORABLE], ids=[c[0] for c in UNSTORABLE]
)
async def test_unstorable_json_is_a_validation_error_naming_the_member(
    store_url: str, raw: bytes, field: str, words: str
) -> None:
    async with running_host(store_url) as host:
        before = await run_count(host)
        response = await post(host, raw)
        keyed = await post(host, raw, **{"Idempotency-Key": "strict-body-key-0123456789"})
        after = await run_count(host)
    assert_refused(response, field)
    assert_refused(keyed, field)  # the replay digest is never computed over such a body
    assert words in response.json()["message"]
    assert len(response.json()["message"]) < 300  # a 5000-digit literal is not echoed whole
    assert after == before


async def test_nesting_just_inside_the_limit_and_ordinary_numbers_are_accepted(
    store_url: str,
) -> None:
    metadata = {"a": 1.5, "b": -0.0, "c": 1e300, "d": 10**30, "e": "snow ☃ \U0001f600"}
    raw = create_body(
        metadata=json.dumps(metadata, ensure_ascii=True).encode(),
        configurable=b'{"version":1,"extensions":{"deep":{"a":' + nested(MAX_DEPTH - 4) + b"}}}",
    )
    async with running_host(store_url) as host:
        response = await post(host, raw)
        assert response.status_code == 201, response.text
        snapshot = (await host.get(f"/runs/{segment(response.json()['runId'])}")).json()
    assert snapshot["metadata"] == metadata


@pytest.mark.parametrize(
    "version", [b"true", b"false", b"1.0", b'"1"', b"2", b"null"], ids=lambda v: v.decode()
)
async def test_configurable_version_must_be_the_integer_1(store_url: str, version: bytes) -> None:
    async with running_host(store_url) as host:
        response = await post(host, create_body(configurable=b'{"version":' + version + b"}"))
    assert_refused(response, "configurable.version")


async def test_configurable_version_1_is_accepted(store_url: str) -> None:
    async with running_host(store_url) as host:
        response = await post(host, create_body(configurable=b'{"version":1,"run":{}}'))
        snapshot = (await host.get(f"/runs/{segment(response.json()['runId'])}")).json()
    assert response.status_code == 201, response.text
    assert snapshot["configurable"] == {"version": 1, "run": {}}


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        (b'{"reason":NaN}', "reason"),
        (b'{"reason":"\\udfff"}', "reason"),
        (b'{"reason":' + b"9" * 5000 + b"}", "reason"),
        (nested(100_000), "$"),
    ],
    ids=["nan", "surrogate", "huge-int", "deep"],
)
async def test_cancel_body_is_parsed_as_strictly(store_url: str, raw: bytes, field: str) -> None:
    async with running_host(store_url) as host:
        run_id = await host.run_id()
        response = await host.client.post(
            f"/runs/{segment(run_id)}/cancel", content=raw, headers=JSON_HEADERS
        )
        status = (await host.get(f"/runs/{segment(run_id)}")).json()["status"]
    assert_refused(response, field)
    assert status != "cancelled"


def test_the_deep_case_really_exceeds_the_parser() -> None:
    """The 100,000-deep body is beyond what ``json`` can parse: the tests above exercise the
    ``RecursionError`` path, not the depth walk."""
    with pytest.raises(RecursionError):
        json.loads(nested(100_000))
