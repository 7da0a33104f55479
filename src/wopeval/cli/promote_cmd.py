"""``wopeval promote``: write one stored trial as a suite task that replays it (docs/promote.md)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Annotated, Any, Literal

import anyio
import typer
import yaml

from wopeval.cli.common import fail_input, opened_store, store_option, write_text
from wopeval.errors import UserError
from wopeval.exports.promote import Promoted, PromoteError, PromoteOptions, promote_trial
from wopeval.service.runs import fold_log
from wopeval.suite import SuiteError, parse_suite

_TERMINAL = ("completed", "failed", "cancelled")
_IMPORTED = "otlp-import"  # the tag a run stored from OTLP traces carries (POST /v1/traces)


async def _promote(url: str | None, run_id: str, options: dict[str, Any]) -> Promoted:
    async with opened_store(url, must_exist=True) as store:
        found = await store.get_run(run_id)
        if found is None:
            fail_input(f"RUN: run {run_id!r} is not in the store")
        if found.kind != "eval":
            fail_input(f"RUN: run {run_id!r} is not an eval run (kind {found.kind})")
        tags = found.request.get("tags") or []
        made = PromoteOptions(
            run_id=run_id,
            target_agent_id=found.agent_id,
            imported=_IMPORTED in tags,
            **options,
        )
        document = found.suite_document
        return await fold_log(store, run_id, lambda log: promote_trial(document, log, made))


def _format(output: Path | None, chosen: str | None) -> Literal["yaml", "json"]:
    if chosen is not None:
        return "json" if chosen == "json" else "yaml"
    if output is not None and output.suffix.lower() == ".json":
        return "json"
    return "yaml"


def _dump(made: Promoted, form: Literal["yaml", "json"]) -> str:
    if form == "json":
        return json.dumps(made.document, indent=2, ensure_ascii=False) + "\n"
    head = "".join(f"# {part}\n" for line in made.provenance for part in textwrap.wrap(line, 76))
    plain = json.loads(json.dumps(made.document))  # no shared objects, so no YAML aliases
    return head + yaml.safe_dump(plain, sort_keys=False, allow_unicode=True)


def _said(made: Promoted, output: Path | None, turns: int | None) -> dict[str, Any]:
    said: dict[str, Any] = {
        "output": str(output) if output is not None else None,
        "suiteId": made.document["suiteId"],
        "taskId": made.task_id,
        "passed": made.passed,
        "failureKind": made.failure_kind,
        "calls": made.calls,
        "toolResponses": made.fixtures,
        "toolErrors": made.tool_errors,
        "forbidden": made.forbidden,
    }
    if turns is not None:
        said["modelTurns"] = turns
    return said


def promote(
    run_id: Annotated[str, typer.Argument(metavar="RUN", help="The stored run.")],
    task: Annotated[str, typer.Option("--task", help="The task whose trial to promote.")],
    trial: Annotated[int, typer.Option("--trial", min=0, help="The trial index.")],
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="The suite file to write (default: stdout)."),
    ] = None,
    form: Annotated[
        str | None,
        typer.Option(
            "--format", help="yaml or json (default: by the file's extension, else yaml)."
        ),
    ] = None,
    forbid_call: Annotated[
        int | None,
        typer.Option(
            "--forbid-call",
            min=0,
            metavar="N",
            help="Call N (0-based) went wrong: forbid its tool instead of expecting it.",
        ),
    ] = None,
    as_failure: Annotated[
        bool,
        typer.Option(
            "--as-failure", help="Keep the original task's expectation (a failed trial only)."
        ),
    ] = False,
    expect_output: Annotated[
        bool, typer.Option("--expect-output", help="Expect the trial's own output, exactly.")
    ] = False,
    task_id: Annotated[
        str | None, typer.Option("--task-id", help="The new task's id (default: TASK-trial-I).")
    ] = None,
    suite_id: Annotated[
        str | None,
        typer.Option("--suite-id", help="The new suite's id (default: SUITE-promoted)."),
    ] = None,
    cassette: Annotated[
        Path | None,
        typer.Option("--cassette", help="The model cassette the run recorded (--record-model)."),
    ] = None,
    cassette_out: Annotated[
        Path | None,
        typer.Option("--cassette-out", help="Write the trial's model turns here (a new dir)."),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite --output.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Say what was written as JSON.")] = False,
    store: Annotated[str | None, store_option()] = None,
) -> None:
    """Promote a stored trial into a suite task: its tool results as fixtures, its path.

    The task replays the trial: its recorded tool results become fixtures (onMiss: fail), its
    calls the expected path (match: exact). --forbid-call N forbids the call that went wrong;
    --as-failure keeps the original expectation, so the task fails as the trial did. Exit 2,
    naming what is missing, when the trial did not finish or its log lacks an argument or a
    result."""
    if form is not None and form not in ("yaml", "json"):
        fail_input(f"--format {form!r}: expected yaml or json")
    if output is not None and output.exists() and not force:
        fail_input(f"--output: {output} exists (pass --force to overwrite it)")
    if (cassette is None) != (cassette_out is None):
        fail_input("--cassette and --cassette-out: give both (the run's cassette, a new dir)")
    options = {
        "task_id": task,
        "trial_index": trial,
        "forbid_call": forbid_call,
        "as_failure": as_failure,
        "expect_output": expect_output,
        "new_task_id": task_id,
        "suite_id": suite_id,
    }
    try:
        made = anyio.run(_promote, store, run_id, options)
        parse_suite(made.document, source=f"promoted from {run_id}")
    except PromoteError as exc:
        fail_input(str(exc), title="cannot promote")
    except SuiteError as exc:
        fail_input("\n".join(str(e) for e in exc.errors), title="promoted suite is invalid")
    turns = None
    if cassette is not None and cassette_out is not None:
        from wopeval.exports.promote_cassette import copy_trial_cassette

        try:
            turns = copy_trial_cassette(cassette, cassette_out, task, trial, made.task_id)
        except UserError as exc:
            fail_input(str(exc), title="cannot promote")
    text = _dump(made, _format(output, form))
    said = _said(made, output, turns)
    if output is None:
        said["suite"] = made.document
    if output is not None:
        write_text(output, text)
    elif not as_json:
        typer.echo(text, nl=False)
        return
    if as_json:
        typer.echo(json.dumps(said, ensure_ascii=False))
        return
    _print(said)


def _print(said: dict[str, Any]) -> None:
    outcome = "passed" if said["passed"] else f"failed ({said['failureKind']})"
    typer.echo(f"{said['taskId']}: from a trial that {outcome}")
    typer.echo(
        f"  {said['calls']} call(s), {said['toolResponses']} tool response(s) "
        f"({said['toolErrors']} error(s))"
    )
    if said["forbidden"] is not None:
        typer.echo(f"  forbidden: {json.dumps(said['forbidden'])}")
    if "modelTurns" in said:
        typer.echo(f"  {said['modelTurns']} model turn(s) in the cassette")
    typer.echo(f"wrote {said['output']}")


def register(app: typer.Typer) -> None:
    app.command()(promote)


__all__ = ["register"]
