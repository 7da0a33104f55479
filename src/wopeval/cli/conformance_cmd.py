"""``wopeval conformance``: check an OpenWOP host against RFC 0244 over HTTP.

Runs the kit (:func:`wopeval.conformance.run_conformance`) and prints one result per
requirement id as a table, or as JSON with ``--json``. ``--extended`` adds the opt-in extension
legs (ids ``wopeval.ext.<name>``, docs/conformance.md "Extension legs") after the RFC results;
``--core`` the core host legs (ids ``core.<name>``, docs/conformance.md "Core host legs").
Exit 0 when nothing failed, 1 on any ``executed-fail``, 2 when the kit cannot start
(unreachable host, unusable discovery, refused key).
"""

from __future__ import annotations

import json
from typing import Annotated

import anyio
import typer
from rich.console import Console

from wopeval.cli.common import fail_input
from wopeval.conformance import ConformanceInputError, run_conformance
from wopeval.conformance.report import ConformanceReport, render


def _run(
    base_url: str,
    api_key: str,
    require_behavior: bool,
    extended: bool,
    timeout: float,
    core: bool = False,
) -> ConformanceReport:
    async def main() -> ConformanceReport:
        return await run_conformance(
            base_url,
            api_key,
            require_behavior=require_behavior,
            extended=extended,
            core=core,
            run_timeout_s=timeout,
        )

    return anyio.run(main)


def conformance(
    base_url: Annotated[
        str, typer.Option("--base-url", envvar="OPENWOP_BASE_URL", help="The host's origin.")
    ],
    api_key: Annotated[
        str, typer.Option("--api-key", envvar="OPENWOP_API_KEY", help="Sent as Bearer.")
    ],
    require_behavior: Annotated[
        bool,
        typer.Option(
            "--require-behavior",
            envvar="OPENWOP_REQUIRE_BEHAVIOR",
            help="A leg whose facet is advertised but which cannot run fails instead of skipping.",
        ),
    ] = False,
    extended: Annotated[
        bool,
        typer.Option(
            "--extended",
            help="Also run wopeval's opt-in extension legs (ids wopeval.ext.*), which probe "
            "RFC 0244 rows the official suite leaves unprobed.",
        ),
    ] = False,
    core: Annotated[
        bool,
        typer.Option(
            "--core",
            help="Also run the core host legs (ids core.*): run lifecycle, cancel, idempotency, "
            "poll, SSE and snapshot on the workflow fixtures (conformance-noop, …).",
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    timeout: Annotated[
        float, typer.Option("--timeout", min=1.0, help="Seconds to wait for each fixture run.")
    ] = 120.0,
) -> None:
    """Check an OpenWOP host against RFC 0244 (trajectories, trials, fail-closed fixtures)."""
    try:
        report = _run(base_url, api_key, require_behavior, extended, timeout, core)
    except ConformanceInputError as exc:
        fail_input(str(exc), title="cannot run the conformance kit")
    if as_json:
        typer.echo(json.dumps(report.to_json(), indent=2))
    else:
        render(report, Console())
    raise typer.Exit(report.exit_code)


def register(app: typer.Typer) -> None:
    """Add ``wopeval conformance`` to the application."""
    app.command("conformance")(conformance)
