"""Untrusted text made safe for where an export puts it.

A failure's reason holds what an agent, a tool or a judge raised or returned: ANSI colours and
other control characters, HTML tags, Markdown image links and headings. An XML export must
stay well-formed (XML 1.0 forbids most control characters, lone surrogates and U+FFFE/U+FFFF
even as character references), a Markdown export lands in a CI summary that GitHub renders
(raw HTML, images, links, mentions), and a terminal obeys escape sequences (colours, cursor
moves, titles, hyperlinks): in each such text must read as the text it is.
"""

from __future__ import annotations

import re

# What XML 1.0 (§2.2 Char) does not allow anywhere in a document.
_XML_FORBIDDEN = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
# Every ASCII punctuation character: CommonMark lets a backslash escape each, so escaped they
# start no markup (emphasis, links, images, HTML, headings, table cells, autolinks, mentions).
_MARKDOWN_PUNCTUATION = re.compile(r"([!-/:-@\[-`{-~])")
_LINE_BREAKS = re.compile(r"\r\n|[\n\r\u2028\u2029\x0b\x0c\x85]")
# C0 and C1 controls (ANSI colours), bidirectional overrides (text that reads other than it
# is), lone surrogates (no UTF-8 for them).
_CONTROL = re.compile(
    "[\x00-\x08\x0e-\x1f\x7f-\x84\x86-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def xml_text(text: str) -> str:
    """``text`` with every character XML 1.0 forbids shown as its escape (``\\x1b``), for an
    element's text or an attribute value (ElementTree escapes ``&``, ``<`` and quotes)."""
    return _XML_FORBIDDEN.sub(_escaped, text)


def markdown_text(text: str) -> str:
    """``text`` as one line of GitHub-flavoured Markdown that renders as exactly this text
    (inside a paragraph, a list item or a table cell, never inside a code span): line breaks
    become spaces, other control characters their escape, ASCII punctuation is backslashed."""
    flat = _LINE_BREAKS.sub(" ", text)
    return _MARKDOWN_PUNCTUATION.sub(r"\\\1", _CONTROL.sub(_escaped, flat))


def terminal_text(text: str) -> str:
    """``text`` for a terminal: every control character but line breaks and tabs (ESC, which
    starts every escape sequence, among them), bidirectional overrides and lone surrogates
    shown as its escape (``\\x1b``)."""
    return _CONTROL.sub(_escaped, text)


def counted(count: int, noun: str) -> str:
    """``1 task``, ``2 tasks``, ``0 tasks``: a count and its noun (a regular English plural)."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"
