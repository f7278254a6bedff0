"""Bundled skills are copied into ``HERMES_HOME/skills`` on first run, and tracked there so
that an update of the bundle refreshes them without overwriting what the user changed.

``skills/.bundled.json`` records the hash of each file as it was seeded. On a later run, a
file is updated only if it is still exactly what was seeded; a file the user edited is left
alone, and one the user deleted is not brought back.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from pathlib import Path

from hermes_commons.files import atomic_write_bytes

__all__ = ["BUNDLED", "seed"]

BUNDLED = Path(__file__).parent / "bundled"
MANIFEST = ".bundled.json"


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@cache
def bundle() -> tuple[str, dict[str, bytes]]:
    """(a digest of the whole bundle, relative path -> content)."""
    files = {
        path.relative_to(BUNDLED).as_posix(): path.read_bytes()
        for path in sorted(BUNDLED.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    }
    whole = hashlib.sha256()
    for name, data in files.items():
        whole.update(name.encode() + b"\0" + _digest(data).encode())
    return whole.hexdigest(), files


def seed(root: Path) -> list[str]:
    """Bring ``root`` up to date with the bundle; the relative paths written. Quick when
    nothing changed: one small file is read."""
    version, files = bundle()
    manifest_path = root / MANIFEST
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        manifest = {}
    if manifest.get("bundle") == version:
        return []
    seeded: dict[str, str] = dict(manifest.get("files") or {})
    written = []
    for name, data in files.items():
        target = root / name
        new = _digest(data)
        try:
            current = _digest(target.read_bytes())
        except FileNotFoundError:
            current = None
        except OSError:
            continue
        if current is None:
            if name in seeded:
                continue  # the user deleted it: keep it deleted
        elif current == new:
            seeded[name] = new
            continue
        elif current != seeded.get(name):
            continue  # the user edited it: theirs wins
        atomic_write_bytes(target, data)
        seeded[name] = new
        written.append(name)
    root.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(
        manifest_path, json.dumps({"bundle": version, "files": seeded}, indent=1).encode()
    )
    return written
