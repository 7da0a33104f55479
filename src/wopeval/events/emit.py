"""``emit`` for every sink that has an ``append``: a typed payload is appended under its type."""

from __future__ import annotations

from typing import Any

from wopeval.wire.events import Payload, RunEvent


class EmitsTyped:
    """Mixed into the store and the Ray executor's buffering sink (one ``emit`` for both)."""

    async def append(
        self,
        run_id: str,
        type: str,
        payload: Any,
        *,
        causation_id: str | None = None,
        node_id: str | None = None,
    ) -> RunEvent:
        raise NotImplementedError

    async def emit(
        self,
        run_id: str,
        payload: Payload,
        *,
        causation_id: str | None = None,
        node_id: str | None = None,
    ) -> RunEvent:
        """Append a typed payload (its type is its model's); see ``append``."""
        wire = payload.to_wire()
        return await self.append(
            run_id, payload.event_type, wire, causation_id=causation_id, node_id=node_id
        )
