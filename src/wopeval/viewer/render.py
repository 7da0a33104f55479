"""The viewer's jinja2 environment: autoescaped templates from this package."""

from __future__ import annotations

import json
from datetime import datetime
from functools import lru_cache
from typing import Any
from urllib.parse import urlencode

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from wopeval.exports.textsafe import counted, terminal_text
from wopeval.grading.gate import stored_verdict
from wopeval.viewer.plots import sparkline, suite_plot


def _duration(start: str, end: str) -> str:
    try:
        seconds = (datetime.fromisoformat(end) - datetime.fromisoformat(start)).total_seconds()
    except ValueError:
        return "–"
    return f"{seconds:.1f} s" if seconds < 120 else f"{seconds / 60:.1f} min"


def pretty(value: Any) -> str:
    """A JSON value as the viewer shows it: indented, keys sorted, non-ASCII kept."""
    try:
        return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        return repr(value)


# A message longer than this many characters is shown shortened, the whole of it one click away.
SHORT = 280


def text_of(value: Any) -> str:
    """A message as shown: a text as it is, anything else as its JSON."""
    return value if isinstance(value, str) else pretty(value)


def short_text(value: Any, limit: int = SHORT) -> str | None:
    """The shortened text of a long message (None: short enough to show whole)."""
    text = text_of(value)
    return None if len(text) <= limit else text[:limit].rstrip() + "…"


@lru_cache(maxsize=1)
def environment() -> Environment:
    env = Environment(
        loader=PackageLoader("wopeval.viewer", "templates"),
        autoescape=select_autoescape(default=True),
        undefined=StrictUndefined,
    )
    env.filters["pct"] = lambda v: "–" if v is None else f"{float(v) * 100:.1f}%"
    env.filters["num"] = lambda v, d=3: "–" if v is None else f"{float(v):.{d}f}"
    env.filters["signed"] = lambda v, d=3: f"{float(v):+.{d}f}"
    env.filters["pretty"] = pretty
    env.filters["counted"] = counted
    # Untrusted text (messages, replies): controls and bidi overrides shown as their escapes.
    env.filters["plain"] = lambda v: terminal_text(text_of(v))
    env.globals["short_text"] = short_text
    env.globals["text_of"] = text_of
    env.globals["duration"] = _duration
    env.globals["sparkline"] = sparkline
    env.globals["suite_plot"] = suite_plot
    env.globals["qs"] = lambda **kw: urlencode(kw)
    env.globals["gate_of"] = lambda record: stored_verdict(
        record.summary, record.request, record.suite_document
    )
    return env


def render(name: str, **context: Any) -> str:
    return environment().get_template(name).render(**context)
