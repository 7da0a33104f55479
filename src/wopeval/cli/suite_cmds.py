"""``wopeval validate`` and ``wopeval schema``: check suites, print the JSON Schemas.

``validate`` reports every error of every file at once, each named by its field path, and
lists the RFC 0244 §G facets a valid suite needs from its host. Exit 0 when every file is
valid, 2 (bad input) when any is not.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.text import Text

from wopeval.cli.common import EXIT_BAD_INPUT, EXIT_OK
from wopeval.suite.errors import FieldError, SuiteError
from wopeval.suite.features import FeatureUse, used_features
from wopeval.suite.load import read_document, validate_suite
from wopeval.suite.models import AgentEvalSuite


class SchemaName(StrEnum):
    """Which generated JSON Schema ``wopeval schema`` prints."""

    suite = "suite"
    summary = "summary"
    agent = "agent"


@dataclass(frozen=True)
class FileReport:
    """The outcome of validating one suite file."""

    path: str
    errors: list[FieldError]
    suite: AgentEvalSuite | None = None
    features: list[FeatureUse] = field(default_factory=list)

    @property
    def valid(self) -> bool:
        return not self.errors

    def to_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "valid": self.valid,
            "errors": [{"path": e.path, "message": e.message} for e in self.errors],
            "suiteId": self.suite.suiteId if self.suite else None,
            "taskCount": len(self.suite.tasks) if self.suite else None,
            "features": [{"facet": f.facet, "path": f.path} for f in self.features],
        }


def check_file(path: Path) -> FileReport:
    """Read and validate one file: parse errors, then schema errors, then rule errors."""
    try:
        data = read_document(path)
    except SuiteError as exc:
        return FileReport(str(path), exc.errors)
    suite, errors = validate_suite(data)
    features = used_features(suite) if suite is not None else []
    return FileReport(str(path), errors, suite, features)


def _facets(features: list[FeatureUse]) -> str:
    names = sorted({feature.facet for feature in features})
    return ", ".join(names) if names else "none"


def _print_report(console: Console, report: FileReport) -> None:
    if report.valid and report.suite is not None:
        suite = report.suite
        tasks = len(suite.tasks)
        line = Text("✓ ", style="bold green")
        line.append(report.path, style="bold")
        line.append(f"  {suite.suiteId} {suite.version}, {tasks} task{'s' * (tasks != 1)}")
        line.append(f", RFC 0244 facets: {_facets(report.features)}", style="dim")
        console.print(line)
        return
    count = len(report.errors)
    line = Text("✗ ", style="bold red")
    line.append(report.path, style="bold")
    line.append(f"  {count} error{'s' * (count != 1)}", style="red")
    console.print(line)
    for error in report.errors:
        entry = Text("    ")
        entry.append(error.path, style="cyan")
        entry.append(f": {error.message}")
        console.print(entry)


def validate(
    suites: Annotated[
        list[Path],
        typer.Argument(
            metavar="SUITE",
            help="Suite files to check (.json, .yaml or .yml).",
            show_default=False,
        ),
    ],
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help='Print {"files": [{path, valid, errors, suiteId, taskCount, features}]}.',
        ),
    ] = False,
) -> None:
    """Check eval suites against the schema and the RFC 0244 suite rules.

    Every error of every file is reported at once, named by its field path.

    A valid suite also lists the RFC 0244 facets its host must advertise.

    Exit 0 if all files are valid, 2 if any is not.
    """
    reports = [check_file(path) for path in suites]
    if as_json:
        document = {"files": [report.to_json() for report in reports]}
        typer.echo(json.dumps(document, indent=2, ensure_ascii=False))
    else:
        console = Console(highlight=False, soft_wrap=True)
        for report in reports:
            _print_report(console, report)
        invalid = sum(not report.valid for report in reports)
        if len(reports) > 1:
            console.print(
                f"{len(reports)} files: {len(reports) - invalid} valid, {invalid} invalid"
            )
    code = EXIT_OK if all(report.valid for report in reports) else EXIT_BAD_INPUT
    raise typer.Exit(code)


def schema(
    name: Annotated[
        SchemaName,
        typer.Argument(
            metavar="SCHEMA",
            help="suite (AgentEvalSuite), summary (EvalSummary) or agent (agent.yaml).",
            show_default=False,
        ),
    ],
) -> None:
    """Print the JSON Schema (draft 2020-12) of a suite, a summary or an agent file.

    Generated from wopeval's models: the upstream OpenWOP v2 schema plus the RFC 0244 fields.

    Every upstream-valid document is valid against it too.
    """
    from wopeval.suite.schema import suite_json_schema, summary_json_schema

    if name is SchemaName.agent:
        from wopeval.agents.definition import definition_json_schema

        typer.echo(json.dumps(definition_json_schema(), indent=2, ensure_ascii=False))
        return
    generated = suite_json_schema() if name is SchemaName.suite else summary_json_schema()
    typer.echo(json.dumps(generated, indent=2, ensure_ascii=False))


def register(app: typer.Typer) -> None:
    """Add ``validate`` and ``schema`` to the ``wopeval`` app."""
    app.command("validate")(validate)
    app.command("schema")(schema)
