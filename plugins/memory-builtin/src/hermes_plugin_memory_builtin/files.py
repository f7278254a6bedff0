"""MEMORY.md and USER.md on disk: entries separated by a line holding ``§``, read strictly
and replaced atomically under a lock.

Two Hermes processes (a chat and the gateway) may write the same file at once: every change
takes an exclusive lock, re-reads the file, applies its operations to what is there now and
replaces the file in one rename, so no writer loses another's entry. A file that exists but
cannot be read is an error, never "empty": treating it as empty would overwrite it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from pathlib import Path

from hermes_commons.files import atomic_write_text
from hermes_commons.locks import FileLock, LockTimeout

__all__ = [
    "DELIMITER",
    "MemoryUnreadable",
    "change_entries",
    "locked",
    "parse",
    "read_entries",
    "render",
]

DELIMITER = "\n§\n"


class MemoryUnreadable(OSError):
    """The file exists but is not readable UTF-8 text (fix or move it), or another process
    keeps it locked; nothing is written."""


def parse(text: str) -> list[str]:
    entries = [entry.strip() for entry in text.replace("\r\n", "\n").split("\n§\n")]
    return [entry for entry in entries if entry and entry != "§"]


def render(entries: list[str]) -> str:
    return DELIMITER.join(entries) + "\n" if entries else ""


def read_entries(path: Path) -> list[str]:
    """The entries of ``path``; [] when it does not exist yet."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except UnicodeDecodeError as exc:
        raise MemoryUnreadable(
            f"{path} is not UTF-8 text ({exc.reason} at byte {exc.start}): fix or move it; "
            "nothing was written"
        ) from None
    except OSError as exc:
        raise MemoryUnreadable(
            f"{path} cannot be read ({exc.strerror}): fix its permissions or move it; nothing "
            "was written"
        ) from None
    return parse(text)


def locked(path: Path) -> FileLock:
    """An exclusive lock on ``path``'s sidecar lock file (the file itself is replaced by a
    rename, so it cannot carry the lock); MemoryUnreadable if another process keeps it."""
    return FileLock(path.with_name(f".{path.name}.lock"))


def change_entries(
    paths: list[Path], change: Callable[[dict[Path, list[str]]], dict[Path, list[str]]]
) -> dict[Path, list[str]]:
    """Lock every path (in a fixed order, so two writers cannot deadlock), read them, let
    ``change`` return the new entries (or raise to write nothing), and replace the files that
    changed. Returns the entries now on disk."""
    ordered = sorted(set(paths))
    with contextlib.ExitStack() as stack:
        for path in ordered:
            try:
                stack.enter_context(locked(path))
            except LockTimeout as exc:
                raise MemoryUnreadable(f"{exc}; nothing was written") from None
        before = {path: read_entries(path) for path in ordered}
        after = change({path: list(entries) for path, entries in before.items()})
        for path in ordered:
            if after[path] != before[path]:
                atomic_write_text(path, render(after[path]))
        return after
