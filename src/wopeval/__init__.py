"""wopeval: evaluate AI agents the way OpenWOP RFC 0244 says they should be evaluated."""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__"]
