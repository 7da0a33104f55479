"""What every route reads: the configuration, the store, the suites, the run manager."""

from __future__ import annotations

import asyncio
import weakref
from dataclasses import dataclass, field

import anyio
from fastapi import Request

from wopeval.engine.judge import Judge
from wopeval.engine.registry import Registry
from wopeval.events.store import EventStore
from wopeval.host.auth import KeyRing
from wopeval.host.config import HostConfig
from wopeval.host.manager import RunManager
from wopeval.host.suites import SuiteCatalog
from wopeval.host.workflows import WorkflowCatalog
from wopeval.service.runs import RunService


@dataclass
class HostState:
    config: HostConfig
    keys: KeyRing
    catalog: SuiteCatalog
    registry: Registry
    judge: Judge | None
    store: EventStore
    manager: RunManager
    # The seeded workflow fixtures (none unless conformanceSeed is on).
    workflows: WorkflowCatalog = field(default_factory=WorkflowCatalog)
    # Serializes "look up the idempotency key, then create" inside this process.
    create_lock: anyio.Lock = field(default_factory=anyio.Lock)
    # Set when the host shuts down: open event streams end.
    closing: anyio.Event = field(default_factory=anyio.Event)
    # The loop serving the host (a signal handler sets ``closing`` through it).
    loop: asyncio.AbstractEventLoop | None = None
    # Open event streams and waiting polls per tenant (host/limits.py).
    streams: dict[str, weakref.WeakSet[object]] = field(default_factory=dict)

    @property
    def service(self) -> RunService:
        """The run service every route plans and creates runs with (the CLI's and library's)."""
        return RunService(self.store, self.registry, self.judge)


def state_of(request: Request) -> HostState:
    state = getattr(request.app.state, "wopeval", None)
    if not isinstance(state, HostState):
        raise RuntimeError("the wopeval host is not started (lifespan not run)")
    return state
