"""The local viewer app (``wopeval view``): one store, every run in it, no keys."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request

from wopeval.events.store import EventStore
from wopeval.viewer.routes import viewer_router


def create_viewer_app(store_url: str | None = None, store: EventStore | None = None) -> FastAPI:
    """The viewer over ``store`` (kept open by the caller) or the store at ``store_url``."""

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if store is not None:
            yield
            return
        opened = await EventStore.open(store_url)
        app.state.viewer_store = opened
        try:
            yield
        finally:
            await opened.close()

    def store_of(request: Request) -> EventStore:
        found: EventStore = request.app.state.viewer_store
        return found

    async def every_tenant(request: Request) -> str | None:
        return None

    app = FastAPI(title="wopeval view", lifespan=lifespan, docs_url=None, redoc_url=None,
                  openapi_url=None)  # fmt: skip
    app.include_router(viewer_router(store_of, every_tenant))
    if store is not None:  # usable without the lifespan (in-process ASGI clients)
        app.state.viewer_store = store
    return app
