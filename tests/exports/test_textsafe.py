"""Hostile text in the JUnit and Markdown exports: well-formed XML, Markdown read as text."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

from hypothesis import given
from hypothesis import strategies as st
from markdown_it import MarkdownIt
from typer.testing import CliRunner

from tests.engine.helpers import make_suite, run_suite
from tests.engine.test_failure_reasons import GOLDEN, registry_with
from wopeval.cli.app import app
from wopeval.engine.agent import AgentContext
from wopeval.events.store import EventStore
from wopeval.exports.textsafe import markdown_text, terminal_text, xml_text

HOSTILE = (
    "\x1b[31mboom\x1b[0m\x00\x08\ufffe <img src=x onerror=alert(1)> "
    "![pic](https://evil.example/a.png) [link](https://evil.example) <script>alert(1)</script>"
    " | pipe\n# heading *bold* @someone &amp; `code`"
)


def _render(markdown: str) -> str:
    html: str = MarkdownIt("commonmark").enable("table").render(markdown)
    return html


def _stored_hostile_run(path: Path) -> str:
    async def agent(task_input: Any, ctx: AgentContext) -> Any:
        raise ValueError(HOSTILE)

    async def go() -> str:
        store = await EventStore.open(str(path))
        try:
            suite = make_suite([{"taskId": "t", "input": {}, "expected": GOLDEN}])
            ran = await run_suite(store, suite, agent_id="a", registry=registry_with(a=agent))
            return ran.run_id
        finally:
            await store.close()

    return asyncio.run(go())


def test_junit_of_a_reason_with_control_characters_is_well_formed_xml(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    run_id = _stored_hostile_run(store)
    out = tmp_path / "junit.xml"
    made = CliRunner().invoke(
        app, ["export", run_id, "--store", str(store), "-f", "junit", "-o", str(out)]
    )
    assert made.exit_code == 0, made.output
    error = ET.parse(out).getroot().find("testcase/error")
    assert error is not None
    message = error.get("message") or ""
    assert "\\x1b[31mboom\\x1b[0m\\x00\\x08\\ufffe <img src=x" in message
    assert "<script>alert(1)</script>" in (error.text or "")


def test_markdown_of_a_hostile_reason_renders_as_its_text(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    run_id = _stored_hostile_run(store)
    made = CliRunner().invoke(app, ["export", run_id, "--store", str(store), "-f", "markdown"])
    assert made.exit_code == 0, made.output
    reasons = made.output.split("#### Why trials failed", 1)[1]
    html = _render(reasons)
    for markup in ("<img", "<script", "<a ", "<h1", "<strong", "<em"):
        assert markup not in html
    assert "&lt;img src=x onerror=alert(1)&gt; ![pic](https://evil.example/a.png)" in html
    assert "| pipe # heading *bold* @someone &amp;amp; `code`" in html
    assert "\x1b" not in made.output


@given(st.text())
def test_xml_text_makes_any_text_well_formed(text: str) -> None:
    element = ET.Element("failure", message=xml_text(text))
    element.text = xml_text(text)
    parsed = ET.fromstring(ET.tostring(element, encoding="unicode"))
    assert parsed.get("message") == xml_text(text)
    # XML reads a line end in text as "\n" (§2.11)
    assert parsed.text == (xml_text(text).replace("\r\n", "\n").replace("\r", "\n") or None)


@given(st.text(st.characters(codec="utf-8") | st.sampled_from("<>![]()#*_`|\\&@\n")))
def test_markdown_text_renders_as_one_paragraph_of_plain_text(text: str) -> None:
    html = _render("- " + markdown_text(text))
    inner = html.removeprefix("<ul>\n<li>").removesuffix("</li>\n</ul>\n")
    assert "<" not in inner.replace("&lt;", "")


def test_allowed_text_is_left_as_it_is() -> None:
    plain = "KeyError: 'customerId' — naïve 日本 \t line\nnext 🙂"
    assert xml_text(plain) == plain
    assert markdown_text("abc 123 ü") == "abc 123 ü"


def test_show_prints_a_hostile_reason_without_its_escape_sequences(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    run_id = _stored_hostile_run(store)
    shown = CliRunner().invoke(app, ["show", run_id, "--store", str(store)],
                               env={"COLUMNS": "400"})  # fmt: skip
    assert shown.exit_code in (0, 1), shown.output
    assert "\x1b[31m" not in shown.output
    assert "\x00" not in shown.output
    assert "\\x1b[31mboom\\x1b[0m\\x00\\x08" in shown.output


def test_terminal_text_keeps_line_breaks_and_escapes_controls() -> None:
    assert terminal_text("a\tb\nc") == "a\tb\nc"
    assert terminal_text("\x1b]0;title\x07\x9b\u202e") == "\\x1b]0;title\\x07\\x9b\\u202e"
