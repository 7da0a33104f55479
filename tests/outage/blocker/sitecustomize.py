"""Makes the packages named in ``WOPEVAL_TEST_BLOCK`` (comma-separated) impossible to import, as
if their optional extra were not installed. On ``PYTHONPATH`` for a test's subprocess only."""

from __future__ import annotations

import os
import sys
from typing import Any

_BLOCKED = frozenset(filter(None, os.environ.get("WOPEVAL_TEST_BLOCK", "").split(",")))


class _Blocker:
    def find_spec(self, name: str, path: Any = None, target: Any = None) -> None:
        if name.partition(".")[0] in _BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)


sys.meta_path.insert(0, _Blocker())
