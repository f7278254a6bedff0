"""Shared by the generators of committed docs: write the file, or check it is current."""

from __future__ import annotations

import sys
from pathlib import Path


def write_or_check(path: Path, text: str, command: str) -> int:
    """With --check on the command line, return 1 (saying how to fix it) if ``path`` is
    stale; otherwise write it. ``command`` is how to regenerate it."""
    if "--check" in sys.argv[1:]:
        current = path.read_text(encoding="utf-8") if path.exists() else ""
        if current != text:
            print(f"{path} is stale; run: {command}", file=sys.stderr)
            return 1
        return 0
    path.write_text(text, encoding="utf-8")
    print(f"wrote {path}")
    return 0
