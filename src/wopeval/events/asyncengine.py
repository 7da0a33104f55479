"""SQLAlchemy's asyncio engine, without importing the ORM it never uses.

``import sqlalchemy.ext.asyncio`` runs that package's ``__init__``, which imports the asyncio ORM
session and so all of ``sqlalchemy.orm``: about 90 ms of the ~0.5 s a ``wopeval run`` takes to
reach its first trial on a two-core machine (issue 13 §3), for a store that uses SQLAlchemy Core
only. The engine itself lives in ``sqlalchemy.ext.asyncio.engine``, which needs nothing of the
ORM. So when nothing has imported the package yet, :func:`create_async_engine` registers the
package module *without running its* ``__init__`` and imports the engine module beneath it. The
first time anything asks the package for a name it lacks (``from sqlalchemy.ext.asyncio import
AsyncSession``), the package runs its real ``__init__`` into that same module object, so every
other user of the package sees the whole of it, as if imported normally.

The store's annotations name ``AsyncEngine`` and ``AsyncConnection`` from the package itself
(they are the same classes); only the one runtime entry point goes through here.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine

__all__ = ["create_async_engine"]

_PACKAGE = "sqlalchemy.ext.asyncio"
_lock = threading.Lock()


def create_async_engine(url: str, **kwargs: Any) -> AsyncEngine:
    """``sqlalchemy.ext.asyncio.create_async_engine``, the ORM left unimported."""
    engine: AsyncEngine = _engine_module().create_async_engine(url, **kwargs)
    return engine


def _engine_module() -> ModuleType:
    with _lock:
        if _PACKAGE not in sys.modules:
            _register_package()
    return importlib.import_module(f"{_PACKAGE}.engine")


def _register_package() -> None:
    """Put the package in ``sys.modules`` with its ``__init__`` deferred (or import it whole
    when its spec is not the plain package this expects)."""
    spec = importlib.util.find_spec(_PACKAGE)
    if spec is None or spec.loader is None or spec.submodule_search_locations is None:
        importlib.import_module(_PACKAGE)  # pragma: no cover - not SQLAlchemy's own layout
        return
    package = importlib.util.module_from_spec(spec)
    loader = spec.loader
    completing = False

    def complete(name: str) -> Any:
        """The real ``__init__``, run once into this module, then ``name`` from it. A name
        that is a submodule (``from . import exc``) is left to the import system."""
        nonlocal completing
        if completing or importlib.util.find_spec(f"{_PACKAGE}.{name}") is not None:
            raise AttributeError(f"module {_PACKAGE!r} has no attribute {name!r}")
        completing = True
        del package.__dict__["__getattr__"]
        loader.exec_module(package)
        return getattr(package, name)

    package.__dict__["__getattr__"] = complete
    sys.modules[_PACKAGE] = package
    parent = importlib.import_module("sqlalchemy.ext")
    parent.__dict__["asyncio"] = package  # as a normal import binds the submodule
