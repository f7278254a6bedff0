"""HERMES_HOME is private: the folder 700, the files that hold conversations, settings and
secrets 600. Another local user otherwise reads state.db, the logs and config.yaml, which
umask 022 leaves readable to all. Fixed at every start, cheaply: the folder's mode alone
keeps others out of everything below it, and only the files at the top and in the first
level of folders below it are looked at (logs, the notes and jobs plugins keep there),
never a walk of the whole tree.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["make_private"]


def _folders(home: Path) -> list[Path]:
    """The home and the folders right inside it (not their subfolders)."""
    try:
        return [home, *(Path(e.path) for e in os.scandir(home) if e.is_dir(follow_symlinks=False))]
    except OSError:
        return [home]


def _tighten(path: Path, private: int) -> bool:
    """chmod ``path`` to ``private`` when others (or the group) may read it; whether it did."""
    try:
        mode = stat.S_IMODE(path.lstat().st_mode)
        if path.is_symlink() or not mode & 0o077:
            return False
        os.chmod(path, private)
    except OSError:
        return False
    return True


def make_private(home: Path) -> list[str]:
    """Tighten ``home``; the names of what was open to others (relative to it)."""
    if not home.is_dir() or home.resolve() in (Path.home().resolve(), Path("/")):
        return []  # a home pointed at the user's own folder is theirs to keep as it is
    fixed = ["."] if _tighten(home, 0o700) else []
    for where in _folders(home):
        if where != home and _tighten(where, 0o700):
            fixed.append(where.name + "/")
        try:
            entries = list(os.scandir(where))
        except OSError:
            continue
        for entry in entries:
            if entry.is_file(follow_symlinks=False) and _tighten(Path(entry.path), 0o600):
                fixed.append(os.path.relpath(entry.path, home))
    return fixed
