"""Reversible, collision-free mapping of OpenWOP tool names to chat-API function names.

Chat-completions function names must match ``^[a-zA-Z0-9_-]{1,64}$``; OpenWOP names such as
``crm:lookup-order`` do not. A name that already fits keeps itself; any other becomes its
sanitised form plus an 8-hex digest of the real name (``crm_lookup-order_1a2b3c4d``). The table
is per tool list, so the trajectory and the fixtures always see the real name.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

API_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_INVALID = re.compile(r"[^a-zA-Z0-9_-]")


class ToolNames:
    """Both directions of the mapping for one list of real tool names."""

    def __init__(self, real_names: Iterable[str]) -> None:
        names = list(dict.fromkeys(real_names))
        self._to_api: dict[str, str] = {}
        self._to_real: dict[str, str] = {}
        for name in names:  # names that fit claim themselves first
            if API_NAME.match(name):
                self._claim(name, name)
        for name in names:
            if name not in self._to_api:
                self._claim(name, self._mangled(name))

    def _mangled(self, name: str) -> str:
        digest = hashlib.sha256(name.encode("utf-8")).hexdigest()
        base = _INVALID.sub("_", name)[:55]
        candidate = f"{base}_{digest[:8]}"
        counter = 0
        while candidate in self._to_real:  # only on a digest-prefix collision
            counter += 1
            candidate = f"{base[:50]}_{digest[:8]}_{counter}"
        return candidate

    def _claim(self, real: str, api: str) -> None:
        self._to_api[real] = api
        self._to_real[api] = real

    def api(self, real: str) -> str:
        return self._to_api[real]

    def real(self, api: str) -> str | None:
        """The real name of an API name, or ``None`` for a name the model invented."""
        return self._to_real.get(api)
