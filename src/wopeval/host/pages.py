"""The viewer's pages on the host, under ``/view``, behind the API's keys and tenancy.

A request is the caller's tenant when it carries ``Authorization: Bearer <key>`` (as the API)
or the ``wopeval_key`` cookie that ``POST /view/login`` sets (a browser cannot send a header on
navigation). Another tenant's run is answered exactly like a missing one (404).
"""

from __future__ import annotations

from urllib.parse import parse_qs

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from wopeval.events.store import EventStore
from wopeval.host.state import HostState
from wopeval.viewer import viewer_router

PREFIX = "/view"
COOKIE = "wopeval_key"
_LOGIN = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>wopeval view</title>
<link rel="icon" href="data:,"></head><body style="font: 14px system-ui; margin: 2rem">
<h1>wopeval view</h1><form method="post" action="/view/login">
<label>API key <input type="password" name="key" autocomplete="off"></label>
<button type="submit">sign in</button></form></body></html>"""


def _state(request: Request) -> HostState:
    state: HostState = request.app.state.wopeval
    return state


def _store(request: Request) -> EventStore:
    return _state(request).store


async def _tenant(request: Request) -> str | None:
    header = request.headers.get("authorization")
    cookie = request.cookies.get(COOKIE)
    if not header and cookie:
        header = f"Bearer {cookie}"
    return _state(request).keys.principal(header).tenant


def _login_router() -> APIRouter:
    router = APIRouter()

    @router.get("/login", response_class=HTMLResponse, include_in_schema=False)
    async def login_form() -> HTMLResponse:
        return HTMLResponse(_LOGIN)

    @router.post("/login", include_in_schema=False)
    async def login(request: Request) -> Response:
        key = (parse_qs((await request.body()).decode("utf-8", "replace")).get("key") or [""])[0]
        _state(request).keys.principal(f"Bearer {key}")  # 401 for an unknown key
        answer = RedirectResponse(f"{PREFIX}/", status_code=303)
        answer.set_cookie(COOKIE, key, httponly=True, samesite="strict", path=PREFIX)
        return answer

    return router


def mount_pages(app: FastAPI) -> None:
    app.include_router(_login_router(), prefix=PREFIX)
    app.include_router(viewer_router(_store, _tenant, base=PREFIX), prefix=PREFIX)
