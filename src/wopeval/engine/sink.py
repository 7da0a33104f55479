"""Where a run's events go: the :class:`EventSink` seam, and a sink that meters spend.

:class:`wopeval.events.EventStore` satisfies it, and so does the Ray executor's buffering sink.
The engine writes typed payloads only (:meth:`EventSink.emit`); ``append`` is the raw form a
store also offers for imported logs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from wopeval.engine.budget import CostMeter
from wopeval.wire.events import PAYLOAD_MODELS, Payload, ProviderUsage, RunEvent


class EventSink(Protocol):
    async def append(
        self,
        run_id: str,
        type: str,
        payload: Any,
        *,
        causation_id: str | None = None,
        node_id: str | None = None,
    ) -> RunEvent: ...

    async def emit(
        self,
        run_id: str,
        payload: Payload,
        *,
        causation_id: str | None = None,
        node_id: str | None = None,
    ) -> RunEvent: ...


@dataclass(frozen=True)
class MeteredSink:
    """A sink that also adds every ``provider.usage`` cost it records to the run's meter."""

    inner: EventSink
    meter: CostMeter

    async def append(
        self,
        run_id: str,
        type: str,
        payload: Any,
        *,
        causation_id: str | None = None,
        node_id: str | None = None,
    ) -> RunEvent:
        return await self.emit(run_id, _typed(type, payload), causation_id=causation_id)

    async def emit(
        self,
        run_id: str,
        payload: Payload,
        *,
        causation_id: str | None = None,
        node_id: str | None = None,
    ) -> RunEvent:
        if isinstance(payload, ProviderUsage) and payload.costEstimateUsd is not None:
            self.meter.add(payload.costEstimateUsd)
        return await self.inner.emit(run_id, payload, causation_id=causation_id, node_id=node_id)


def _typed(type: str, payload: Any) -> Payload:
    model = PAYLOAD_MODELS.get(type)
    if model is None:
        raise ValueError(f"{type!r} is not an event type the engine writes")
    return model.model_validate(payload)
