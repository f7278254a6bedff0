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
from pathlib import Path
from typing import Any

from hermes_commons.files import write_cache_json
from hermes_kernel._version import __version__

_FORMAT = 2  # 2: the unknown keys of safety sections


def cache_file(home: Path) -> Path:
    return home / "cache" / "config.json"


def _schema_stamp() -> list[int]:
    # Validation code edited in place (a development checkout) must not be served stale
    # results under an unchanged version number.
    here = Path(__file__).parent
    names = ("model.py", "controls.py", "validate.py", "settings.py")
    return [(here / name).stat().st_mtime_ns for name in names]


def content_key(path: Path, content: bytes) -> list[Any]:
    """What a cache entry must match: format, kernel version and validation code, the
    file's path and its content digest."""
    digest = hashlib.sha256(content).hexdigest()
    return [_FORMAT, __version__, _schema_stamp(), str(path), digest]


def read_cached(home: Path, key: list[Any]) -> dict[str, Any] | None:
    try:
        entry = json.loads(cache_file(home).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(entry, dict) or entry.get("key") != key:
        return None
    return entry


def write_cached(home: Path, key: list[Any], payload: dict[str, Any]) -> None:
    write_cache_json(cache_file(home), {"key": key, **payload})
