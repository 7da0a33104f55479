"""The viewer's pages on the host, under ``/view``, behind the API's keys and tenancy.

A request is the caller's tenant when it carries ``Authorization: Bearer <key>`` (as the API) or
the ``wopeval_session`` cookie of a sign-in: ``POST /view/login`` checks a key once and opens a
server-side session (:mod:`wopeval.host.sessions`); the browser holds the session's random id
(``HttpOnly``, ``SameSite=Strict``, ``Secure`` over https), never the key. ``POST /view/logout``
ends it: every page of a signed-in browser shows its tenant and that sign-out button. A browser
without a session (``Accept: text/html``) is sent to the sign-in page; other clients get
``401``. Failed sign-ins count against the client as failed API keys do (``429`` past
the limit). Another tenant's run is answered exactly like a missing one (404).
"""

from __future__ import annotations

from html import escape
from urllib.parse import parse_qs

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from wopeval.events.store import EventStore
from wopeval.host.auth import Principal
from wopeval.host.errors import HostError, unauthenticated
from wopeval.host.sessions import SessionBook
from wopeval.host.state import HostState
from wopeval.viewer import viewer_router

PREFIX = "/view"
COOKIE = "wopeval_session"
_KEY_COOKIE = "wopeval_key"  # the raw key earlier versions stored: cleared at sign-in
_LOGIN = """<!doctype html><html lang="en"><head><meta charset="utf-8"><title>wopeval view</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,"></head><body style="font: 14px system-ui; margin: 2rem">
<h1>wopeval view</h1>{message}<form method="post" action="/view/login">
<label>API key <input type="password" name="key" autocomplete="off"></label>
<button type="submit">sign in</button></form>{signed}</body></html>"""
_SIGNED_IN = """<form method="post" action="/view/logout"><p>Signed in to tenant <b>{tenant}</b>.
<a href="/view/">runs</a> <button type="submit" id="logout">sign out</button></p></form>"""


class SignInRequired(HostError):
    """A browser without a session: answered with a redirect to the sign-in page."""


def _state(request: Request) -> HostState:
    state: HostState = request.app.state.wopeval
    return state


def _sessions(request: Request) -> SessionBook:
    book: SessionBook = request.app.state.viewer_sessions
    return book


def _store(request: Request) -> EventStore:
    return _state(request).store


def _signed_in(request: Request) -> Principal | None:
    session_id = request.cookies.get(COOKIE)
    return _sessions(request).principal(session_id) if session_id else None


def _session_tenant(request: Request) -> str | None:
    """The tenant of the request's sign-in session when the session authenticates it (a
    request with an API key header is the key's, and shows no sign-out)."""
    if request.headers.get("authorization"):
        return None
    found = _signed_in(request)
    return found.tenant if found is not None else None


async def _tenant(request: Request) -> str | None:
    if request.headers.get("authorization"):
        return _state(request).keys.authenticate(request).tenant
    found = _signed_in(request)
    if found is not None:
        return found.tenant
    if "text/html" in request.headers.get("accept", ""):
        raise SignInRequired("unauthenticated", "sign in at /view/login")
    raise unauthenticated("sign in at /view/login, or send Authorization: Bearer <api key>")


def _login_page(request: Request, message: str = "", status: int = 200) -> HTMLResponse:
    found = _signed_in(request)
    signed = _SIGNED_IN.format(tenant=escape(found.tenant)) if found else ""
    shown = f'<p id="message" role="alert">{escape(message)}</p>' if message else ""
    page = HTMLResponse(_LOGIN.format(message=shown, signed=signed), status_code=status)
    page.headers["Cache-Control"] = "no-store"
    return page


def _secure(request: Request) -> bool:
    """Served over TLS: directly, or behind a trusted proxy that said so (trustedProxies)."""
    return request.url.scheme == "https"


def _login_router() -> APIRouter:
    router = APIRouter()

    @router.get("/login", response_class=HTMLResponse, include_in_schema=False)
    async def login_form(request: Request) -> HTMLResponse:
        return _login_page(request)

    @router.post("/login", include_in_schema=False)
    async def login(request: Request) -> Response:
        key = (parse_qs((await request.body()).decode("utf-8", "replace")).get("key") or [""])[0]
        try:
            principal = _state(request).keys.check(request, f"Bearer {key}", "key")
        except HostError as refused:
            told = refused.message if refused.status == 429 else "this API key is not recognized"
            page = _login_page(request, told, refused.status)
            page.headers.update(refused.headers)
            return page
        session_id = _sessions(request).open(principal)
        answer = RedirectResponse(f"{PREFIX}/", status_code=303)
        answer.set_cookie(COOKIE, session_id, httponly=True, samesite="strict", path=PREFIX,
                          secure=_secure(request))  # fmt: skip
        answer.delete_cookie(_KEY_COOKIE, path=PREFIX)
        return answer

    @router.post("/logout", include_in_schema=False)
    async def logout(request: Request) -> Response:
        # A cross-site form cannot log anyone out: SameSite=Strict keeps the cookie off it.
        session_id = request.cookies.get(COOKIE)
        if session_id:
            _sessions(request).close(session_id)
        answer = RedirectResponse(f"{PREFIX}/login", status_code=303)
        answer.delete_cookie(COOKIE, path=PREFIX, httponly=True, samesite="strict",
                             secure=_secure(request))  # fmt: skip
        return answer

    return router


async def _to_sign_in(_request: Request, exc: Exception) -> Response:
    assert isinstance(exc, SignInRequired)
    return RedirectResponse(f"{PREFIX}/login", status_code=303)


def mount_pages(app: FastAPI, sessions: SessionBook) -> None:
    """The pages under ``/view``; ``sessions`` holds the viewer's sign-ins."""
    app.state.viewer_sessions = sessions
    app.include_router(_login_router(), prefix=PREFIX)
    pages = viewer_router(_store, _tenant, base=PREFIX, signed_in_of=_session_tenant)
    app.include_router(pages, prefix=PREFIX)
    app.add_exception_handler(SignInRequired, _to_sign_in)
