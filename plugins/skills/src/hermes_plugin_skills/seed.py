"""Bundled skills are copied into ``HERMES_HOME/skills`` on first run, and tracked there so
that an update of the bundle refreshes them without overwriting what the user changed.

``skills/.bundled.json`` records the hash of each file as it was seeded. On a later run, a
file is updated only if it is still exactly what was seeded; a file the user edited is left
alone, and one the user deleted is not brought back.
"""

from __future__ import annotations

import hashlib
import json
import os
from functools import cache
from pathlib import Path

from hermes_commons.files import atomic_write_bytes

__all__ = ["BUNDLED", "seed"]

BUNDLED = Path(__file__).parent / "bundled"
MANIFEST = ".bundled.json"


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _bundled_paths() -> list[Path]:
    found = []
    for folder, folders, names in os.walk(BUNDLED):
        folders[:] = [name for name in folders if name != "__pycache__"]
        found += [Path(folder, name) for name in names]
    return sorted(found)


@cache
def bundle_version() -> str:
    """A digest of the bundle's files as installed (names, sizes, times): every process
    checks it, and a stat is far cheaper than reading thirty-odd skills to hash them. An
    installation of new files changes it; equal content installed anew only costs one
    full check."""
    whole = hashlib.sha256()
    for path in _bundled_paths():
        stat = os.stat(path)
        relative = os.path.relpath(path, BUNDLED).replace(os.sep, "/")
        whole.update(f"{relative}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return whole.hexdigest()


_current: dict[Path, tuple[tuple[int, int], str]] = {}
"""Homes whose manifest this process found up to date: ((mtime, inode), the bundle's
version)."""


@cache
def bundle() -> dict[str, bytes]:
    """Relative path -> content of every bundled file."""
    return {path.relative_to(BUNDLED).as_posix(): path.read_bytes() for path in _bundled_paths()}


def seed(root: Path) -> list[str]:
    """Bring ``root`` up to date with the bundle; the relative paths written. Quick when
    nothing changed: one stat, when this process saw the manifest up to date already."""
    version = bundle_version()
    manifest_path = root / MANIFEST
    try:
        found = manifest_path.stat()
        stamp: tuple[int, int] | None = (found.st_mtime_ns, found.st_ino)
    except OSError:
        stamp = None
    if stamp is not None and _current.get(root) == (stamp, version):
        return []
    try:
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        manifest = {}
    if manifest.get("bundle") == version:
        if stamp is not None:
            _current[root] = (stamp, version)
        return []
    files = bundle()
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
