"""Hostile suite files (issue 14, point 2): each with the field its refusal must name."""

from __future__ import annotations

import json
import os
from pathlib import Path

from wopeval.suite.bounds import MAX_FIXTURE_RESPONSE_BYTES, MAX_SUITE_BYTES, MAX_TASKS


def _task(extra: object = None) -> dict[str, object]:
    task: dict[str, object] = {
        "taskId": "t",
        "input": {"output": "x"} if extra is None else extra,
        "expected": {"kind": "golden", "match": {"strategy": "exact", "value": "x"}},
    }
    return task


def _suite(**members: object) -> dict[str, object]:
    return {"suiteId": "core.hostile.evals.x", "version": "1.0.0", "modes": ["golden"],
            "tasks": [_task()], **members}  # fmt: skip


def _yaml_suite(member: str) -> str:
    """A one-task YAML suite whose input holds ``member`` (one line of YAML)."""
    return (
        "suiteId: core.hostile.evals.x\nversion: 1.0.0\nmodes: [golden]\ntasks:\n"
        f"  - taskId: t\n    input:\n      {member}\n"
        "    expected: {kind: golden, match: {strategy: exact, value: x}}\n"
    )


def _bomb(levels: int = 12) -> str:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels):
        prev = f"*a{i - 1}"
        lines.append(f"a{i}: &a{i} [{', '.join([prev] * 9)}]")
    return "\n".join(lines) + "\n"


def write_hostile(directory: Path) -> dict[str, str]:
    """Write the hostile files into ``directory``; return file name → the field named."""
    directory.mkdir(parents=True, exist_ok=True)
    files: dict[str, tuple[str, str]] = {
        "digits.json": (
            json.dumps(_suite()).replace('"x"}', '"x", "n": ' + "9" * 5000 + "}", 1),
            "tasks[0].input.n",
        ),
        "digits.yaml": (_yaml_suite("n: " + "9" * 5000), "tasks[0].input.n"),
        "digits-hex.yaml": (_yaml_suite("n: -0x" + "f_" * 2000), "tasks[0].input.n"),
        "deep.json": ("[" * 2000 + "]" * 2000, "$"),
        "deepish.json": (json.dumps(_suite(tasks=[_task(_nest(100))])), "tasks[0].input"),
        "deep.yaml": ("a: " + "[" * 700 + "]" * 700 + "\n", "$"),  # past the composer's ~500 levels
        "bomb.yaml": (_bomb(), "$"),
        "many.json": (json.dumps(_suite(tasks=[_task()] * (MAX_TASKS + 1))), "tasks"),
        "trials.json": (json.dumps(_suite(trials={"count": 10**9})), "trials.count"),
        "dupes.json": ('{"suiteId": "a", "suiteId": "b"}', "suiteId"),
        "binary.json": ("\udcff", "$"),
        "fixture.json": (
            json.dumps(_suite(tasks=[_big_fixture()])),
            "tasks[0].fixtures.toolResponses[0].response",
        ),
    }
    named: dict[str, str] = {}
    for name, (text, field) in files.items():
        data = text.encode("utf-8", "surrogateescape")
        (directory / name).write_bytes(data)
        named[name] = field
    fifo = directory / "fifo.json"
    os.mkfifo(fifo)
    named["fifo.json"] = "$"
    with open(directory / "huge.json", "wb") as huge:  # sparse: cheap to make
        huge.truncate(MAX_SUITE_BYTES + 1)
    named["huge.json"] = "$"
    return named


def _big_fixture() -> dict[str, object]:
    canned = {"tool": "lookup", "response": {"text": "x" * (MAX_FIXTURE_RESPONSE_BYTES + 1)}}
    return {**_task(), "fixtures": {"toolResponses": [canned]}}


def _nest(depth: int) -> object:
    value: object = 1
    for _ in range(depth):
        value = {"a": value}
    return value
