"""Read OTLP traces: OTLP/JSON (one request per line, the SDK file exporter's format, or one
document) and OTLP protobuf (an ``ExportTraceServiceRequest``, with ``opentelemetry-proto``).

Every span becomes a flat :class:`OtlpSpan` (hex ids, plain attribute values, its resource's
attributes alongside). Pure apart from the optional protobuf import.
"""

from __future__ import annotations

import base64
import io
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from wopeval.errors import UserError

_HUGE = "an integer of more than 4,300 digits"
STATUS_ERROR = 2  # STATUS_CODE_ERROR

__all__ = [
    "STATUS_ERROR",
    "OtlpError",
    "OtlpEvent",
    "OtlpFile",
    "OtlpInput",
    "OtlpSpan",
    "read_otlp",
    "spans_of",
]


class OtlpError(UserError):
    """Input that is not OTLP traces; the message says where and why."""


@dataclass(frozen=True)
class OtlpEvent:
    """A span event wopeval's export writes (``wopeval.*``); others' are not kept."""

    name: str
    time_ns: int
    attributes: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class OtlpSpan:
    trace_id: str
    span_id: str
    parent_span_id: str | None
    name: str
    start_ns: int
    end_ns: int
    attributes: dict[str, Any] = field(default_factory=dict)
    resource: dict[str, Any] = field(default_factory=dict)
    status_code: int = 0
    status_message: str = ""
    events: tuple[OtlpEvent, ...] = ()

    @property
    def failed(self) -> bool:
        return self.status_code == STATUS_ERROR


def _value(value: Any) -> Any:
    """An OTLP ``AnyValue`` as plain JSON."""
    if not isinstance(value, dict):
        return value
    for key in ("stringValue", "boolValue", "doubleValue", "bytesValue"):
        if key in value:
            return value[key]
    if "intValue" in value:
        return int(value["intValue"])
    if "arrayValue" in value:
        return [_value(v) for v in (value["arrayValue"] or {}).get("values", [])]
    if "kvlistValue" in value:
        return _attributes((value["kvlistValue"] or {}).get("values", []))
    return None


def _attributes(rows: Iterable[Any]) -> dict[str, Any]:
    return {row["key"]: _value(row.get("value")) for row in rows or () if "key" in row}


def _id(value: Any) -> str:
    return str(value or "").lower()


def spans_of(request: dict[str, Any]) -> Iterator[OtlpSpan]:
    """The spans of one ``ExportTraceServiceRequest`` / ``TracesData`` in OTLP/JSON."""
    for resource_spans in request.get("resourceSpans") or ():
        resource = _attributes((resource_spans.get("resource") or {}).get("attributes", []))
        for scope_spans in resource_spans.get("scopeSpans") or ():
            for span in scope_spans.get("spans") or ():
                status = span.get("status") or {}
                yield OtlpSpan(
                    trace_id=_id(span.get("traceId")),
                    span_id=_id(span.get("spanId")),
                    parent_span_id=_id(span.get("parentSpanId")) or None,
                    name=str(span.get("name", "")),
                    start_ns=int(span.get("startTimeUnixNano") or 0),
                    end_ns=int(span.get("endTimeUnixNano") or 0),
                    attributes=_attributes(span.get("attributes", [])),
                    resource=resource,
                    status_code=_status_code(status.get("code")),
                    status_message=str(status.get("message", "")),
                    events=_events(span.get("events")),
                )


def _events(rows: Any) -> tuple[OtlpEvent, ...]:
    """A span's ``wopeval.*`` events (a trace's other events, often many, are not held)."""
    return tuple(
        OtlpEvent(
            str(row["name"]),
            int(row.get("timeUnixNano") or 0),
            _attributes(row.get("attributes", [])),
        )
        for row in rows or ()
        if isinstance(row, dict) and str(row.get("name", "")).startswith("wopeval.")
    )


def _status_code(code: Any) -> int:
    if code == "STATUS_CODE_ERROR":
        return STATUS_ERROR
    return int(code) if isinstance(code, int) else 0


def _from_protobuf(data: bytes) -> dict[str, Any]:
    try:
        from google.protobuf.json_format import MessageToDict  # type: ignore[import-untyped]
        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
        )
    except ImportError as exc:  # pragma: no cover - the [otlp] extra
        raise OtlpError(
            "protobuf input needs opentelemetry-proto: pip install wopeval[otlp]"
        ) from exc
    request = ExportTraceServiceRequest()
    try:
        request.ParseFromString(data)
    except Exception as exc:  # the protobuf runtime's DecodeError
        raise OtlpError(f"not an OTLP protobuf ExportTraceServiceRequest ({exc})") from exc
    doc: dict[str, Any] = MessageToDict(request)
    for resource_spans in doc.get("resourceSpans", []):  # protobuf JSON ids are base64
        for scope_spans in resource_spans.get("scopeSpans", []):
            for span in scope_spans.get("spans", []):
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = base64.b64decode(span[key]).hex()
    return doc


def read_otlp(data: bytes, *, protobuf: bool | None = None) -> list[OtlpSpan]:
    """Every span in ``data``: OTLP/JSON lines or document, or (``protobuf``) OTLP protobuf.

    ``protobuf=None`` decides by content: input that does not start as JSON is read as
    protobuf. The same reading as :class:`OtlpFile`'s, of bytes in memory.
    """
    source = OtlpInput(lambda: io.BytesIO(data), protobuf=protobuf)
    return [span for unit in source.units() for span in unit]


class OtlpInput:
    """The spans of an OTLP input, read again from ``open()`` on every pass (re-iterable), a
    line at a time, so a pass holds one line's spans, never the input's.

    :meth:`units` yields each line's spans (a *unit*: OTLP/JSON lines); a whole document, a
    pretty-printed one or protobuf, is one unit. Every pass yields the same units.
    """

    def __init__(self, open: Callable[[], BinaryIO], *, protobuf: bool | None = None) -> None:
        self._open = open
        self._protobuf = protobuf
        self._whole: bool | None = None  # one document (decided on the first pass)

    def units(self) -> Iterator[list[OtlpSpan]]:
        sniffed = self._protobuf is None
        if sniffed:
            first = self._first_byte()
            if not first:
                raise OtlpError("no spans: the input is empty")
            self._protobuf = first not in (b"{", b"[")
        if self._protobuf:
            data = self._read()
            try:
                yield list(spans_of(_from_protobuf(data)))
            except OtlpError as exc:
                if sniffed and _looks_like_text(data):
                    raise OtlpError(
                        f"neither OTLP/JSON (its first line does not start with {{ or [) nor "
                        f"OTLP protobuf: {_first_line(data)!r}"
                    ) from exc
                raise
            return
        if not self._whole:
            with self._open() as lines:
                try:
                    yield from _line_units(_text_lines(lines))
                    self._whole = False
                    return
                except _FirstLineNotJson as not_lines:
                    if self._whole is False:  # the input changed since the first pass
                        raise
                    self._whole = True
                    try:
                        doc = self._document()
                    except OtlpError:  # not a document either
                        raise not_lines from None
        else:
            doc = self._document()
        yield list(_spans_of_docs([doc]))

    def _read(self) -> bytes:
        with self._open() as data:
            return data.read()

    def _document(self) -> Any:
        try:
            return json.loads(self._read().decode("utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise OtlpError(f"not an OTLP/JSON document ({exc})") from exc
        except ValueError as exc:  # an integer Python will not convert
            raise OtlpError(f"not an OTLP/JSON document ({_HUGE})") from exc

    def _first_byte(self) -> bytes:
        with self._open() as data:
            while chunk := data.read(4096):
                if stripped := chunk.lstrip():
                    return stripped[:1]
        return b""


def _looks_like_text(data: bytes) -> bool:
    """UTF-8 without control characters other than white space: not protobuf's bytes."""
    head = data[:4096]
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return all(ch.isprintable() or ch in "\t\r\n" for ch in text)


def _first_line(data: bytes) -> str:
    line = data.lstrip().split(b"\n", 1)[0].decode("utf-8", "replace").strip()
    return line if len(line) <= 60 else line[:57] + "..."


class OtlpFile(OtlpInput):
    """:class:`OtlpInput` of a file, opened again on every pass."""

    def __init__(self, path: Path, *, protobuf: bool | None = None) -> None:
        super().__init__(lambda: path.open("rb"), protobuf=protobuf)
        self.path = path


def _text_lines(data: Iterable[bytes]) -> Iterator[str]:
    """The lines of a binary input as ``str.splitlines`` counts them for line breaks (``\n``,
    ``\r\n`` and a lone ``\r``), each decoded as UTF-8 on its own, so an error names its
    line; a break character inside a JSON string is escaped, never raw."""
    number = 0
    for raw in data:
        body = raw[:-2] if raw.endswith(b"\r\n") else raw.rstrip(b"\n")
        for piece in body.split(b"\r"):
            number += 1
            try:
                yield piece.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise OtlpError(f"line {number}: not UTF-8 ({exc.reason})") from exc


class _FirstLineNotJson(OtlpError):
    """The first non-empty line is not JSON: the input may be one document over several
    lines (if it is not, this is the error to report)."""


def _spans_of_docs(docs: Iterable[Any]) -> Iterator[OtlpSpan]:
    for doc in docs:
        for request in doc if isinstance(doc, list) else [doc]:
            if not isinstance(request, dict):
                raise OtlpError(
                    'expected OTLP/JSON objects ({"resourceSpans": [...]}), one per line'
                )
            yield from spans_of(request)


def _line_units(lines: Iterable[str]) -> Iterator[list[OtlpSpan]]:
    """Each OTLP/JSON line's spans, a line parsed at a time (a file's parsed documents are
    never all held: they took ten times the file's size). A first line that is not JSON
    raises :class:`_FirstLineNotJson`: the input may be one document over several lines."""
    first = True
    for number, line in enumerate(lines, start=1):
        if line.strip():
            try:
                doc = json.loads(line)
            except json.JSONDecodeError as exc:
                error = _FirstLineNotJson if first else OtlpError
                raise error(f"line {number}: not JSON ({exc.msg}, column {exc.colno})") from exc
            except ValueError as exc:  # an integer Python will not convert
                raise OtlpError(f"line {number}: not JSON ({_HUGE})") from exc
            first = False
            yield list(_spans_of_docs([doc]))
