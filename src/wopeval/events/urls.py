"""Where the event log lives: one URL for SQLite (the default) or PostgreSQL.

``None`` means ``$WOPEVAL_STORE`` or, failing that, the SQLite file ``./.wopeval/wopeval.db``
(relative to the working directory when the store is opened). A bare path is a SQLite file;
``sqlite://`` and ``postgresql://``/``postgres://`` URLs get their async driver
(aiosqlite, asyncpg). Any other scheme is refused with a message naming only the scheme, so a
password in the URL never reaches a log line.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

STORE_ENV_VAR = "WOPEVAL_STORE"
DEFAULT_STORE_URL = "sqlite+aiosqlite:///./.wopeval/wopeval.db"

_SQLITE_URL = "sqlite+aiosqlite://"
_POSTGRES_URL = "postgresql+asyncpg://"
_SCHEMES = {
    "sqlite": _SQLITE_URL,
    "sqlite+aiosqlite": _SQLITE_URL,
    "postgresql": _POSTGRES_URL,
    "postgres": _POSTGRES_URL,
    "postgresql+asyncpg": _POSTGRES_URL,
}
_MEMORY_DATABASES = {"", ":memory:"}


def normalize_store_url(url: str | None) -> str:
    """Return the SQLAlchemy async URL for ``url`` (see the module docstring for the rules).

    Raises ``ValueError`` for an unsupported scheme or an in-memory SQLite database (the store
    reads and writes over separate connections, which an in-memory database cannot share).
    """
    if url is None:
        url = os.environ.get(STORE_ENV_VAR) or DEFAULT_STORE_URL
    url = url.strip()
    if not url:
        raise ValueError("store URL is empty; give a SQLite path or a postgresql:// URL")
    scheme, sep, rest = url.partition("://")
    if not sep:
        return _SQLITE_URL + "/" + os.path.expanduser(url)
    driver_url = _SCHEMES.get(scheme.lower())
    if driver_url is None:
        supported = ", ".join(sorted(_SCHEMES))
        raise ValueError(f"unsupported store URL scheme {scheme!r}; use one of: {supported}")
    normalized = driver_url + rest
    if driver_url == _SQLITE_URL and sqlite_path(normalized) is None:
        raise ValueError("an in-memory SQLite store is not supported; give a file path")
    return normalized


def sqlite_path(url: str) -> Path | None:
    """The database file of a normalized SQLite URL, or ``None`` (in-memory or not SQLite)."""
    if not url.startswith(_SQLITE_URL):
        return None
    database = url[len(_SQLITE_URL) :]
    database = database.removeprefix("/").partition("?")[0]
    if database in _MEMORY_DATABASES:
        return None
    return Path(database)


def is_postgres(url: str) -> bool:
    """Whether a normalized store URL points at PostgreSQL."""
    return url.startswith(_POSTGRES_URL)


_PASSWORD = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://[^:/@]*):[^@/]*@")


def shown_url(url: str | None) -> str | None:
    """``url`` fit to print: a password in it replaced by ``***`` (hints and errors name the
    store the user gave, never its secret)."""
    return None if url is None else _PASSWORD.sub(r"\1:***@", url)
