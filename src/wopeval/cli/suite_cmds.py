"""``wopeval validate``, ``wopeval schema`` and ``wopeval suite diff``: check suites, print the
JSON Schemas, and say what changed between two suites.

``validate`` reports every error of every file at once, each named by its field path, and
lists the RFC 0244 §G facets a valid suite needs from its host. Exit 0 when every file is
valid, 2 (bad input) when any is not. ``suite diff`` compares two suite files or the suites two
stored runs were given, task by task (added, removed, changed, and which of input, expected and
fixtures): exit 0 when no task differs, 1 when one does, 2 for bad input.
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

from wopeval.cli.common import (
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    EXIT_OK,
    fail_input,
    opened_store,
    store_option,
)
from wopeval.suite.digest import SuiteDiff, diff_documents
from wopeval.suite.errors import FieldError, SuiteError
from wopeval.suite.features import FeatureUse, used_features
from wopeval.suite.load import read_document, suite_to_document, validate_suite
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


@dataclass(frozen=True)
class SuiteSource:
    """A suite to diff: its document and where it came from (a file, or a stored run)."""

    label: str
    document: dict[str, object]


def _from_file(path: Path) -> SuiteSource:
    report = check_file(path)
    if report.suite is None or not report.valid:
        first = report.errors[0] if report.errors else None
        where = f"{first.path}: {first.message}" if first else "not a valid suite"
        fail_input(f"{path}: {where} (wopeval validate {path} lists every error)")
    return SuiteSource(
        f"{path} ({report.suite.suiteId} {report.suite.version})", suite_to_document(report.suite)
    )


async def _from_runs(store: str | None, run_ids: list[str]) -> dict[str, SuiteSource]:
    found: dict[str, SuiteSource] = {}
    async with opened_store(store, must_exist=True) as opened:
        for run_id in run_ids:
            record = await opened.get_run(run_id)
            if record is None or record.kind != "eval":
                fail_input(f"{run_id!r} is neither a suite file nor an eval run in the store")
            label = f"run {run_id} ({record.suite_id} {record.suite_version})"
            found[run_id] = SuiteSource(label, dict(record.suite_document))
    return found


def _sources(store: str | None, refs: tuple[str, str]) -> tuple[SuiteSource, SuiteSource]:
    files = {ref: _from_file(Path(ref)) for ref in refs if Path(ref).is_file()}
    runs = [ref for ref in refs if ref not in files]
    if runs:
        import anyio

        files.update(anyio.run(_from_runs, store, runs))
    return files[refs[0]], files[refs[1]]


def _print_diff(console: Console, a: SuiteSource, b: SuiteSource, diff: SuiteDiff) -> None:
    console.print(f"a: {a.label}", markup=False)
    console.print(f"b: {b.label}", markup=False)
    for name, ids in (("added", diff.added), ("removed", diff.removed)):
        for task_id in ids:
            console.print(f"  {name:<9} {task_id}", markup=False)
    for change in diff.changed:
        console.print(f"  changed   {change.task_id}: {', '.join(change.parts)}", markup=False)
    count = len(diff.unchanged)
    outside = not diff.same_suite and not diff.differs
    console.print(
        f"{len(diff.changed)} changed, {len(diff.added)} added, {len(diff.removed)} removed, "
        f"{count} unchanged task{'s' * (count != 1)}"
        + ("; the suites differ outside their tasks' definitions" if outside else ""),
        markup=False,
    )


def diff(
    a: Annotated[str, typer.Argument(metavar="A", help="A suite file or a stored run id.")],
    b: Annotated[str, typer.Argument(metavar="B", help="A suite file or a stored run id.")],
    store: Annotated[str | None, store_option()] = None,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json", help='Print {"a", "b", "sameSuite", "added", "removed", "changed", ...}.'
        ),
    ] = False,
) -> None:
    """Show what changed per task from suite A to suite B: added, removed, changed (which of
    input, expected, fixtures).

    A and B are suite files, or stored run ids (the exact suite the run was given).

    Exit 0 when no task differs, 1 when one does, 2 for bad input.
    """
    source_a, source_b = _sources(store, (a, b))
    result = diff_documents(source_a.document, source_b.document)
    if as_json:
        document = {"a": source_a.label, "b": source_b.label, **result.to_json()}
        typer.echo(json.dumps(document, indent=2, ensure_ascii=False))
    else:
        _print_diff(Console(highlight=False, soft_wrap=True), source_a, source_b, result)
    raise typer.Exit(EXIT_FAILED if result.differs else EXIT_OK)


def register(app: typer.Typer) -> None:
    """Add ``validate``, ``schema`` and ``suite diff`` to the ``wopeval`` app."""
    app.command("validate")(validate)
    app.command("schema")(schema)
    suite_app = typer.Typer(
        help="Compare suites: what changed per task between two suite files or runs.",
        no_args_is_help=True,
    )
    suite_app.command("diff")(diff)
    app.add_typer(suite_app, name="suite")
