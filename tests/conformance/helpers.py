"""Run the kit in process against a :class:`FakeHost` (``httpx.ASGITransport``)."""

from __future__ import annotations

import httpx

from tests.conformance.fake_host import API_KEY, FakeHost
from wopeval.conformance import ConformanceReport, run_conformance

BASE_URL = "http://fake-host.test"


async def run_kit(
    host: FakeHost, *, require: bool = False, key: str = API_KEY
) -> ConformanceReport:
    transport = httpx.ASGITransport(app=host.app())
    return await run_conformance(BASE_URL, key, require_behavior=require, transport=transport)


def statuses(report: ConformanceReport) -> dict[str, str]:
    return {result.requirement: result.status.value for result in report.results}
