"""The core host legs (``--core``) against the host ``wopeval serve`` runs, on a real socket (served
in this process: tests/conformance/test_kit_against_serve.py runs the kit against the process
itself), on both stores.

With ``conformanceSeed: true`` every core leg is executed-pass under ``--require-behavior``, and
the RFC 0244 results are the ones the plain kit gives. Without seeding no workflow fixture is
listed: the core legs are skipped, and fail under ``--require-behavior``.
"""

from __future__ import annotations

import json

from typer.testing import CliRunner

from tests.conformance.test_kit_against_serve import KEY, hosting
from wopeval.cli.app import app
from wopeval.conformance import catalog as C
from wopeval.conformance import core as K


def _kit(base_url: str, *extra: str) -> tuple[int, dict[str, str], dict[str, object]]:
    args = ["conformance", "--base-url", base_url, "--api-key", KEY, "--json", *extra]
    result = CliRunner().invoke(app, args)
    doc = json.loads(result.output)
    statuses = {r["requirement"]: r["status"] for r in doc["results"]}
    return result.exit_code, statuses, doc


def test_core_legs_pass_wopeval_serve_with_seeded_fixtures(store_url: str) -> None:
    with hosting(store_url, {"conformanceSeed": True}) as base_url:
        code, statuses, doc = _kit(base_url, "--core", "--require-behavior")
    assert code == 0, {r: s for r, s in statuses.items() if s != "executed-pass"}
    assert doc["core"] is True
    assert list(statuses) == [*C.REQUIREMENTS, *K.CORE_REQUIREMENTS]
    assert {r: statuses[r] for r in K.CORE_REQUIREMENTS} == dict.fromkeys(
        K.CORE_REQUIREMENTS, "executed-pass"
    )
    assert statuses.pop(C.UNADVERTISED_REFUSED) == "inapplicable"
    assert set(statuses.values()) == {"executed-pass"}
    listed = doc["fixtures"]
    assert isinstance(listed, list)
    assert set(K.CORE_FIXTURES) <= set(listed)


def test_core_legs_without_seeding_are_skipped_or_fail_when_required(store_url: str) -> None:
    with hosting(store_url, {}) as base_url:
        soft_code, soft, _ = _kit(base_url, "--core")
        hard_code, hard, doc = _kit(base_url, "--core", "--require-behavior")
    assert soft_code == 0
    assert {r: soft[r] for r in K.CORE_REQUIREMENTS} == dict.fromkeys(
        K.CORE_REQUIREMENTS, "skipped"
    )
    assert hard_code == 1
    assert {r: hard[r] for r in K.CORE_REQUIREMENTS} == dict.fromkeys(
        K.CORE_REQUIREMENTS, "executed-fail"
    )
    listed = doc["fixtures"]
    assert isinstance(listed, list)
    assert not set(K.CORE_FIXTURES) & set(listed)
