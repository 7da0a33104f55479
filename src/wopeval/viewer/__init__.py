"""``wopeval view``: web pages for runs, trials, trajectories and comparisons.

Server-rendered (jinja2) with inline SVG plots and one small vendored script (keyboard
navigation, live cells over SSE); nothing loads from a CDN. The pages read the tenant's own log,
so they show content (arguments, results, outputs); the ``eval.*`` events and the summary stay
content-free (RFC 0244 §H). :func:`create_viewer_app` serves a local store (every run);
:func:`viewer_router` is what ``wopeval serve`` mounts under ``/view`` behind its API keys.
"""

from __future__ import annotations

from wopeval.viewer.app import create_viewer_app
from wopeval.viewer.routes import viewer_router

__all__ = ["create_viewer_app", "viewer_router"]
