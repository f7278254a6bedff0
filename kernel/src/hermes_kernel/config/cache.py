"""Cache of the parsed and validated config.yaml, keyed by the file's content.

Parsing YAML and validating with pydantic costs more than everything else a quick command
does. When config.yaml's bytes are unchanged (same SHA-256, same path, same kernel version),
the cached result is used instead. Hashing beats trusting mtimes, whose granularity lets two
quick edits look alike. A file with errors is never cached, so errors are always reported
afresh. Any problem reading the cache means a miss, never an error.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from hermes_kernel._version import __version__

_FORMAT = 1


def cache_file(home: Path) -> Path:
    return home / "cache" / "config.json"


def content_key(path: Path, content: bytes) -> list[Any]:
    """What a cache entry must match: format, kernel version, path and content digest."""
    return [_FORMAT, __version__, str(path), hashlib.sha256(content).hexdigest()]


def read_cached(home: Path, key: list[Any]) -> dict[str, Any] | None:
    try:
        entry = json.loads(cache_file(home).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(entry, dict) or entry.get("key") != key:
        return None
    return entry


def write_cached(home: Path, key: list[Any], payload: dict[str, Any]) -> None:
    path = cache_file(home)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".config.")
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump({"key": key, **payload}, handle)
        os.replace(tmp, path)
    except OSError:
        pass  # a read-only home just has no cache
