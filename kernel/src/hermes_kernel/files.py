"""Writing files so that a crash or a full disk never leaves a half-written one behind."""

from __future__ import annotations

import json
import logging
import os
import tempfile
from pathlib import Path
from typing import Any

log = logging.getLogger("hermes")


def atomic_write_text(path: Path, text: str, mode: int | None = None) -> None:
    """Replace ``path`` with ``text`` in one step (write a sibling, then rename over it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_cache_json(path: Path, data: Any) -> bool:
    """Best effort for caches: write ``data`` as JSON only if it survives a round trip
    unchanged (a date or an integer key would not), and never fail the command."""
    try:
        text = json.dumps(data)
        if json.loads(text) != data:
            return False
        atomic_write_text(path, text)
    except (OSError, TypeError, ValueError) as exc:
        log.debug("not caching %s: %s", path, exc)
        return False
    return True
