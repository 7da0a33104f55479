"""Exports of stored runs: OpenTelemetry spans and evaluation events."""
