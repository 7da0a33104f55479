"""The OpenTelemetry logs SDK and its OTLP/JSON encoder: the one place wopeval reaches them.

OpenTelemetry Python still publishes its logs signal only under underscore modules
(``opentelemetry.sdk._logs``, the JSON exporter's ``_log_encoder``): there is no public import
path for what the GenAI conventions' evaluation event needs (a log record with an event name).
So they are imported here alone, and :data:`CHECKED` names the versions whose names and
behaviour ``tests/exports/test_otel_logs_shim.py`` checks; a test fails when the installed
packages leave that range, so an upgrade is looked at before it ships.
"""

from __future__ import annotations

from opentelemetry.exporter.otlp.json.common._log_encoder import encode_logs
from opentelemetry.sdk._logs import LoggerProvider, ReadableLogRecord
from opentelemetry.sdk._logs.export import (
    InMemoryLogRecordExporter,
    LogRecordExporter,
    LogRecordExportResult,
    SimpleLogRecordProcessor,
)

__all__ = [
    "CHECKED",
    "InMemoryLogRecordExporter",
    "LogRecordExportResult",
    "LogRecordExporter",
    "LoggerProvider",
    "ReadableLogRecord",
    "SimpleLogRecordProcessor",
    "encode_logs",
]

CHECKED: dict[str, tuple[tuple[int, int], tuple[int, int]]] = {
    "opentelemetry-sdk": ((1, 45), (1, 46)),
    "opentelemetry-exporter-otlp-json-common": ((0, 66), (0, 67)),
}
"""Distribution → [lowest, highest) ``(major, minor)`` whose logs modules were checked."""
