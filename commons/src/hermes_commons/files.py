"""Writing a file whole or not at all, so a crash, a kill or a full disk never leaves half of
one behind, and a reader sees the old file or the new one.

The bytes go to a temporary file beside the target (same folder, so same file system), are
synced to disk, and the temporary file is renamed over the target; then the folder is synced,
so the rename itself survives a power cut. A file of secrets is created with its final mode
(``mode=0o600``): it is never readable by others, not even for a moment::

    atomic_write_text(home / ".env", text, mode=0o600)

Without ``mode`` a file keeps the permissions it had, and a new one gets the usual ones
(0666 less the umask), as ``open(path, "w")`` would give it. A cache passes ``sync=False``:
it still never sees half a file, but a power cut may take the last write back, which costs
only a recomputation, and the wait for the disk (long for a large file) is saved.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
from pathlib import Path
from typing import Any

__all__ = ["atomic_write_bytes", "atomic_write_text", "write_cache_json"]

log = logging.getLogger("hermes")

_TRIES = 5  # name clashes are one in 16 million; a handful of tries is plenty


def atomic_write_bytes(
    path: Path | str, data: bytes, mode: int | None = None, *, sync: bool = True
) -> None:
    """Replace ``path`` with ``data`` in one rename; its folder is created if missing.

    ``mode`` sets the file's permission bits exactly (the umask does not apply); None keeps
    those of the file it replaces, or gives a new file the usual ones. ``sync`` waits until
    the file and the rename are on disk."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if mode is None:
        with contextlib.suppress(FileNotFoundError):
            mode = path.stat().st_mode & 0o7777
    fd, temporary = _create_beside(path, 0o600 if mode is not None else 0o666)
    try:
        with os.fdopen(fd, "wb") as handle:
            if mode is not None:
                os.fchmod(handle.fileno(), mode)
            handle.write(data)
            if sync:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    if sync:
        _sync_folder(path.parent)


def atomic_write_text(
    path: Path | str, text: str, mode: int | None = None, *, sync: bool = True
) -> None:
    """:func:`atomic_write_bytes` of ``text`` as UTF-8 (newlines written as given)."""
    atomic_write_bytes(path, text.encode("utf-8"), mode, sync=sync)


def write_cache_json(path: Path | str, data: Any) -> bool:
    """Best effort, for caches: write ``data`` as JSON (atomically, not synced) only if it
    survives a round trip unchanged (a date or an integer key would not), and never raise.
    True if written."""
    try:
        text = json.dumps(data)
        if json.loads(text) != data:
            return False
        atomic_write_text(path, text, sync=False)
    except (OSError, TypeError, ValueError) as exc:
        log.debug("not caching %s: %s", path, exc)
        return False
    return True


def _create_beside(path: Path, mode: int) -> tuple[int, str]:
    """A new, empty, hidden file in ``path``'s folder, opened for writing."""
    for _ in range(_TRIES):
        temporary = str(path.with_name(f".{path.name}.{os.urandom(3).hex()}.tmp"))
        try:
            return os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode), temporary
        except FileExistsError:
            continue
    raise FileExistsError(f"{path.parent}: no free temporary name for {path.name}")


def _sync_folder(folder: Path) -> None:
    """Make the rename durable. Some file systems cannot sync a folder; the file itself is
    already on disk then, so that is not an error."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
