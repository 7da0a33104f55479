"""The vendored upstream schemas (``tests/data/openwop-v2``) are the files their SOURCES.md
vouches for: every file pinned in SHA256SUMS, unchanged, each listed with its origin."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

VENDORED = Path(__file__).resolve().parent / "data" / "openwop-v2"


def _pinned() -> dict[str, str]:
    lines = (VENDORED / "SHA256SUMS").read_text(encoding="utf-8").splitlines()
    return {name: digest for digest, name in (line.split("  ", 1) for line in lines)}


def test_every_vendored_schema_is_pinned_and_unchanged() -> None:
    pinned = _pinned()
    assert sorted(pinned) == sorted(p.name for p in VENDORED.glob("*.json"))
    for name, digest in pinned.items():
        assert hashlib.sha256((VENDORED / name).read_bytes()).hexdigest() == digest, name


def test_every_vendored_schema_names_its_source_and_the_licence_is_kept() -> None:
    sources = (VENDORED / "SOURCES.md").read_text(encoding="utf-8")
    row = r"^\| `([^`]+\.json)` \| openwop/openwop-sdks \| `[^`]+` \| `[0-9a-f]{40}` \|"
    listed = re.findall(row, sources, flags=re.M)
    assert sorted(listed) == sorted(_pinned())
    licence = (VENDORED / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in licence
    assert "Version 2.0, January 2004" in licence
