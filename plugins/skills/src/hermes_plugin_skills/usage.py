"""What each skill of ``HERMES_HOME/skills`` has been used for, kept for the curator in
``skills/.curator/usage.json``: who wrote it (``created_by: agent`` for skills made with
skill_manage), how often it was loaded (views) and loaded in a turn that ended well (uses),
when last, when last changed, and whether it is pinned or archived.

Tools run in worker threads and several processes share a home, so every change is a
read-modify-write under a file lock, written atomically. A damaged file starts over empty
(the counters are hints; losing them archives nothing sooner, because an unknown skill's
clock starts when it is first seen).
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from hermes_commons.files import atomic_write_text
from hermes_commons.locks import FileLock, LockTimeout

__all__ = ["Usage", "record_turn", "remember_view"]

Record = dict[str, Any]


class Usage:
    def __init__(self, skills_root: Path) -> None:
        self.folder = skills_root / ".curator"
        self.path = self.folder / "usage.json"

    def read(self) -> dict[str, Record]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return (
            {k: v for k, v in data.items() if isinstance(v, dict)} if isinstance(data, dict) else {}
        )

    @contextlib.contextmanager
    def changing(self) -> Iterator[dict[str, Record]]:
        """The records, to change in place; written back when the block ends."""
        with FileLock(self.folder / "usage.lock", timeout=5.0):
            records = self.read()
            yield records
            atomic_write_text(self.path, json.dumps(records, indent=1, sort_keys=True))

    def update(self, name: str, change: Callable[[Record], None]) -> None:
        """Apply ``change`` to ``name``'s record; a lock held too long skips it (a
        counter missed is better than a tool call that waits)."""
        with contextlib.suppress(LockTimeout, OSError), self.changing() as records:
            record = records.setdefault(name, {"first_seen_at": time.time()})
            change(record)

    def created(self, name: str, by: str) -> None:
        def mark(record: Record) -> None:
            for key in ("state", "archived_at", "archived_path", "original_path", "merged_into"):
                record.pop(key, None)  # a new skill of an archived one's name: a new record
            record.update(created_by="agent", created_via=by, created_at=time.time())

        self.update(name, mark)

    def patched(self, name: str) -> None:
        self.update(name, lambda record: record.update(patched_at=time.time()))

    def forget(self, name: str) -> None:
        with contextlib.suppress(LockTimeout, OSError), self.changing() as records:
            records.pop(name, None)


def _bump(kind: str) -> Callable[[Record], None]:
    def bump(record: Record) -> None:
        record[f"{kind}s"] = int(record.get(f"{kind}s", 0)) + 1
        record[f"last_{'viewed' if kind == 'view' else 'used'}_at"] = time.time()

    return bump


_viewed: dict[str, tuple[Path, set[str]]] = {}
"""Skills loaded in each session's running turn: session id -> (skills root, names)."""
_lock = threading.Lock()


def remember_view(skills_root: Path, name: str, session_id: str) -> None:
    """A skill was loaded (skill_view, a bundle, a preload): counted now as a view, and as a
    use if the turn ends well."""
    Usage(skills_root).update(name, _bump("view"))
    with _lock:
        _viewed.setdefault(session_id, (skills_root, set()))[1].add(name)


def record_turn(session_id: str, ended_well: bool) -> None:
    """At a turn's end: the skills it loaded count one use each if it ended well."""
    with _lock:
        found = _viewed.pop(session_id, None)
    if found is None or not ended_well:
        return
    root, names = found
    usage = Usage(root)
    for name in sorted(names):
        usage.update(name, _bump("use"))
