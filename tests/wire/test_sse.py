"""The one SSE framer (wopeval.wire.sse), read back by a parser written from the WHATWG
``text/event-stream`` interpretation rules."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from wopeval.wire import sse


def parse(stream: str) -> tuple[list[dict[str, str]], int | None]:
    """Events (``id``, ``event``, ``data``) and the last ``retry``, as a browser reads them."""
    events: list[dict[str, str]] = []
    data: list[str] = []
    fields: dict[str, str] = {}
    retry: int | None = None
    for line in stream.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        if line == "":
            if data:
                events.append({**fields, "data": "\n".join(data)})
            data, fields = [], {}
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        if name == "data":
            data.append(value)
        elif name in ("id", "event"):
            fields[name] = value
        elif name == "retry" and value.isdigit():
            retry = int(value)
    return events, retry


def test_frame_is_id_event_data_and_a_blank_line() -> None:
    assert sse.frame('{"a":1}', event="run.started", event_id=7) == (
        'id: 7\nevent: run.started\ndata: {"a":1}\n\n'
    )


def test_plainest_frame_is_data_alone() -> None:
    assert sse.frame("x") == "data: x\n\n"
    assert parse(sse.frame("")) == ([{"data": ""}], None)


@pytest.mark.parametrize("text", ["two\nlines", "cr\rline", "crlf\r\nline", "end\n", "\n\n"])
def test_data_is_split_on_line_breaks_and_read_back_joined(text: str) -> None:
    framed = sse.frame(text, event="e")
    body = framed.removesuffix("\n\n")
    assert "\r" not in framed
    assert all(line.startswith(("event: ", "data: ")) for line in body.split("\n"))
    expected = text.replace("\r\n", "\n").replace("\r", "\n")
    assert parse(framed) == ([{"event": "e", "data": expected}], None)


@given(st.text(), st.text(alphabet=st.characters(blacklist_characters="\r\n"), min_size=1))
def test_any_data_round_trips(text: str, event: str) -> None:
    events, _ = parse(sse.frame(text, event=event, event_id=3) + sse.frame("next"))
    expected = text.replace("\r\n", "\n").replace("\r", "\n")
    assert events == [
        {"id": "3", "event": event, "data": expected},
        {"data": "next"},
    ]


@pytest.mark.parametrize("hostile", ["a\nb", "a\rb", "a\r\nevent: forged"])
def test_an_event_type_or_id_with_a_line_break_is_refused(hostile: str) -> None:
    with pytest.raises(ValueError, match="line break"):
        sse.frame("x", event=hostile)
    with pytest.raises(ValueError, match="line break"):
        sse.frame("x", event_id=hostile)


def test_comments_keep_alive_and_are_ignored_by_clients() -> None:
    assert sse.comment("keep-alive") == ": keep-alive\n\n"
    assert sse.comment("two\nlines") == ": two\n: lines\n\n"
    stream = sse.comment("live") + sse.comment("x\ndata: forged") + sse.frame("real", event="e")
    assert parse(stream) == ([{"event": "e", "data": "real"}], None)


def test_retry_is_milliseconds_and_sends_no_event() -> None:
    assert sse.retry(1000) == "retry: 1000\n\n"
    assert parse(sse.retry(1000) + sse.frame("x")) == ([{"data": "x"}], 1000)
    with pytest.raises(ValueError, match="retry"):
        sse.retry(-1)
