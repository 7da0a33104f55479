"""Every output says why a trial failed in the same words, all of its reasons, most decisive first:
``run`` and ``show``, ``run --json``, the Markdown and JUnit exports, the pytest plugin, the
viewer's run and trial pages and the HTML report (one function words them all).

What is compared is text, not a process: the commands run in process (typer's runner), the
plugin in a pytest session of its own in this process (tests/cli/test_pytest_plugin.py pins
the exit codes of real processes)."""

from __future__ import annotations

import asyncio
import contextlib
import html
import json
import re
from dataclasses import dataclass
from pathlib import Path
from xml.etree import ElementTree as ET

import httpx
import pytest

from tests.cli.in_process import Done, wopeval
from tests.grading.reason_cases import EXPECTED, SCRIPTED, SUITE, in_order
from wopeval.events.store import EventStore
from wopeval.exports.textsafe import markdown_text
from wopeval.viewer import create_viewer_app

# No narrow terminal here: each reason stays on one line, whole, so the texts compare as they are.
_WIDE = "400"


@dataclass(frozen=True)
class Ran:
    cwd: Path
    run_id: str
    doc: dict[str, object]


def _wopeval(cwd: Path, *args: str) -> Done:
    return wopeval(cwd, {"COLUMNS": _WIDE, "CI": "true", "WOPEVAL_STORE": str(cwd / "s.db")}, *args)


@pytest.fixture(scope="module")
def ran(tmp_path_factory: pytest.TempPathFactory) -> Ran:
    cwd = tmp_path_factory.mktemp("reasons")
    (cwd / "suite.json").write_text(json.dumps(SUITE), encoding="utf-8")
    done = _wopeval(cwd, "run", "suite.json", "--json")
    assert done.returncode == 1, done.stderr
    doc = json.loads(done.stdout)
    return Ran(cwd, str(doc["runId"]), doc)


def _text(markup: str) -> str:
    """An HTML fragment's text, tags dropped and entities read."""
    return html.unescape(re.sub(r"<[^>]+>", " ", markup))


def test_0244_A_run_and_show_print_every_reason_in_order(ran: Ran) -> None:
    shown = _wopeval(ran.cwd, "show", ran.run_id)
    assert shown.returncode == 0, shown.stderr
    for out in (_wopeval(ran.cwd, "run", "suite.json").stdout, shown.stdout):
        body = out[out.index("why trials failed") :]
        for task, (_, texts) in EXPECTED.items():
            assert in_order(body, [f"{task} #0: {texts[0]}", *texts[1:]]), (task, body)


def test_0244_A_run_json_lists_every_reason(ran: Ran) -> None:
    failures = {f["taskId"]: f for f in ran.doc["failures"]}  # type: ignore[attr-defined]
    assert {task: (f["status"], f["reasons"]) for task, f in failures.items()} == EXPECTED
    assert failures["both"]["message"] == " · ".join(EXPECTED["both"][1])
    assert failures["forbidden-miss"]["kind"] == "fixture-miss"
    assert "forbidden tool" not in json.dumps(ran.doc["summary"])  # the summary stays content-free


def test_0244_A_markdown_and_junit_carry_every_reason(ran: Ran) -> None:
    markdown = _wopeval(ran.cwd, "export", ran.run_id, "-f", "markdown").stdout
    for task, (status, texts) in EXPECTED.items():
        # The same reasons, escaped for GitHub-flavoured Markdown (agent text never renders).
        first, *more = (markdown_text(text) for text in texts)
        head = f"- `{task}` trial 0 ({status}): {first}"
        assert in_order(markdown, [head, *(f"  - {text}" for text in more)]), task
    junit = _wopeval(ran.cwd, "export", ran.run_id, "-f", "junit").stdout
    cases = {c.get("name"): c.find("failure") for c in ET.fromstring(junit).iter("testcase")}
    for task, (status, texts) in EXPECTED.items():
        failure = cases[task]
        assert failure is not None
        line = f"trial 0 {status}: " + " · ".join(texts)
        assert failure.get("message", "").startswith(line)
        assert failure.text == line


def test_0244_A_the_pytest_plugin_fails_each_task_with_every_reason(
    ran: Ran, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WOPEVAL_STORE", str(ran.cwd / "plugin.db"))
    with contextlib.chdir(ran.cwd):
        code = pytest.main(
            ["-p", "no:cacheprovider", "-p", "no:asyncio", "-p", "no:langsmith_plugin",
             "-p", "no:schemathesis", "-p", "no:hypothesispytest", "--wopeval-suite",
             "suite.json", "--wopeval-agent", SCRIPTED, "--junitxml", "plugin.xml", "-q"],
        )  # fmt: skip
    assert code == 1
    tree = ET.parse(ran.cwd / "plugin.xml")
    cases = {c.get("name"): c.find("failure") for c in tree.iter("testcase")}
    for task, (_, texts) in EXPECTED.items():
        failure = cases[task]
        assert failure is not None
        assert in_order(failure.text or "", [f"trial 0: {texts[0]}", *texts[1:]]), task


def test_0244_A_the_html_report_lists_every_reason(ran: Ran) -> None:
    page = ran.cwd / "report.html"
    made = _wopeval(ran.cwd, "report", ran.run_id, "-o", str(page))
    assert made.returncode == 0, made.stderr
    text = page.read_text()
    for task, (_, texts) in EXPECTED.items():
        item = re.search(rf'<li data-task="{task}" data-trial="0">(.*?)</li>\n', text, re.S)
        assert item is not None, task
        assert in_order(_text(item.group(1)), texts), task
        title = re.search(rf'<tr data-task="{task}".*?title="([^"]*)"', text, re.S)
        assert title is not None
        assert html.unescape(title.group(1)).endswith(" · ".join(texts))


async def test_0244_A_the_viewer_shows_every_reason_on_the_trial_and_run_pages(ran: Ran) -> None:
    store = await EventStore.open(str(ran.cwd / "s.db"))
    try:
        transport = httpx.ASGITransport(app=create_viewer_app(store=store))
        async with httpx.AsyncClient(transport=transport, base_url="http://view") as client:
            grid = (await client.get("/run", params={"id": ran.run_id})).text
            kinds = {f["taskId"]: f["kind"] for f in ran.doc["failures"]}  # type: ignore[attr-defined]
            for task, (status, texts) in EXPECTED.items():
                params = {"run": ran.run_id, "task": task, "i": "0"}
                page = (await client.get("/trial", params=params)).text
                listed = re.search(r'<ol id="reasons">(.*?)</ol>', page, re.S)
                assert listed is not None, task
                items = re.findall(r"<li>(.*?)</li>", listed.group(1), re.S)
                assert [html.unescape(item) for item in items] == texts
                assert f'id="trial-status" class="badge c-{status}"' in page
                titles = {html.unescape(t) for t in re.findall(r'title="([^"]*)"', grid)}
                title = f"trial 0: {status} ({kinds[task]}): " + " · ".join(texts)
                assert title in titles, task
    finally:
        await store.close()


HOSTILE_TOOL = "<i>evil</i>|x"
OTHER_TOOL = "<u>t</u>"
HOSTILE = {
    "suiteId": "core.test.evals.hostile",
    "version": "1.0.0",
    "targetAgentId": SCRIPTED,
    "modes": ["golden"],
    "tasks": [
        {
            "taskId": "hostile",
            "input": {
                "calls": [
                    {"tool": HOSTILE_TOOL},
                    {"tool": OTHER_TOOL, "args": {"</ol><b>k": "<b>v"}},
                ],
                "output": "<script>x</script>",
            },
            "expected": {
                "kind": "golden",
                "match": {"strategy": "exact", "value": "ok"},
                "trajectory": {
                    "match": "any-order",
                    "calls": [{"tool": OTHER_TOOL, "args": {"</ol><b>k": 1}, "argsMatch": "exact"}],
                    "forbidden": [HOSTILE_TOOL],
                },
            },
        }
    ],
}


async def _trial_page(store_url: str, run_id: str) -> str:
    store = await EventStore.open(store_url)
    try:
        transport = httpx.ASGITransport(app=create_viewer_app(store=store))
        async with httpx.AsyncClient(transport=transport, base_url="http://view") as client:
            params = {"run": run_id, "task": "hostile", "i": "0"}
            return (await client.get("/trial", params=params)).text
    finally:
        await store.close()


def test_hostile_tool_names_and_keys_stay_text_in_every_page(tmp_path: Path) -> None:
    (tmp_path / "suite.json").write_text(json.dumps(HOSTILE), encoding="utf-8")
    done = _wopeval(tmp_path, "run", "suite.json", "--json")
    run_id = json.loads(done.stdout)["runId"]
    reasons = json.loads(done.stdout)["failures"][0]["reasons"]
    assert reasons[0] == f"forbidden tool {HOSTILE_TOOL}"
    assert reasons[1] == (
        f'called {OTHER_TOOL} with different arguments: ["</ol><b>k"]: expected 1, got "<b>v"'
    )
    assert reasons[2].startswith("output does not match")
    markdown = _wopeval(tmp_path, "export", run_id, "-f", "markdown").stdout
    assert markdown_text(f"forbidden tool {HOSTILE_TOOL}") in markdown
    assert "<i>" not in markdown  # escaped: no tag renders, no table cell is split
    _wopeval(tmp_path, "report", run_id, "-o", str(tmp_path / "r.html"))
    trial = asyncio.run(_trial_page(str(tmp_path / "s.db"), run_id))
    for page in ((tmp_path / "r.html").read_text(), trial):
        assert "<i>evil" not in page
        assert "<script>x" not in page
        assert "<b>k" not in page
        assert "<b>v" not in page
        assert "&lt;i&gt;evil&lt;/i&gt;|x" in page
