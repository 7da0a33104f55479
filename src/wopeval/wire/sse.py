"""Server-sent events framing (the WHATWG ``text/event-stream`` format), shared by the host's
events channel and the viewer's live page.

A frame is ``id:``, ``event:`` and one ``data:`` line per line of its data, ended by a blank
line; a client joins the ``data:`` lines with newlines, so multi-line data round-trips. A field
value may not hold a line break (it would end the field early): ``id`` and ``event`` with one
are refused. A comment (``: text``) keeps a connection alive and is ignored by clients.
"""

from __future__ import annotations

__all__ = ["comment", "frame", "retry"]


def _field(name: str, value: str) -> str:
    if "\n" in value or "\r" in value:
        raise ValueError(f"an SSE {name} cannot hold a line break: {value!r}")
    return f"{name}: {value}\n"


def frame(data: str, *, event: str | None = None, event_id: int | str | None = None) -> str:
    """One event: its ``id`` and ``event`` type when given, then ``data`` split on line breaks."""
    head = ""
    if event_id is not None:
        head += _field("id", str(event_id))
    if event is not None:
        head += _field("event", event)
    lines = data.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return head + "".join(f"data: {line}\n" for line in lines) + "\n"


def comment(text: str) -> str:
    """A comment frame (a keep-alive): every line of ``text`` as its own comment line."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return "".join(f": {line}\n" for line in lines) + "\n"


def retry(milliseconds: int) -> str:
    """How long a client waits before reconnecting after the stream drops."""
    if milliseconds < 0:
        raise ValueError(f"an SSE retry is a non-negative number of milliseconds: {milliseconds}")
    return f"retry: {milliseconds}\n\n"
