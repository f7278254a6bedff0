"""HERMES_HOME is private: the folder 700, the files that hold conversations, settings and
secrets 600. Another local user otherwise reads state.db, the logs and config.yaml, which
umask 022 leaves readable to all. Fixed at every start, cheaply: the folder's mode alone
keeps others out of everything below it, and only the files at the top and in the folders
that hold text (logs, memories, cron) are looked at, never a walk of the whole tree.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["make_private"]

_FOLDERS = ("", "logs", "memories", "cron", "profiles")


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
    if not home.is_dir():
        return []
    fixed = ["."] if _tighten(home, 0o700) else []
    for folder in _FOLDERS:
        where = home / folder if folder else home
        if folder and not where.is_dir():
            continue
        if folder and _tighten(where, 0o700):
            fixed.append(folder + "/")
        try:
            entries = list(os.scandir(where))
        except OSError:
            continue
        for entry in entries:
            if entry.is_file(follow_symlinks=False) and _tighten(Path(entry.path), 0o600):
                fixed.append(os.path.relpath(entry.path, home))
    return fixed
