"""``HERMES_HOME/auth.json``: the sign-ins' tokens. Mode 0600, replaced atomically, changed
under a lock (a chat and a gateway may refresh the same sign-in at once). A secret: never
logged, left out of backups unless asked for."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from hermes_commons.files import atomic_write_text
from hermes_commons.locks import FileLock, LockTimeout

FILE = "auth.json"
VERSION = 1
LOCK_SECONDS = 90.0
"""Longer than one refresh can take (each of its HTTP phases has 30 s)."""


def accounts_of(
    sign_ins: dict[str, dict[str, Any]], service: str
) -> list[tuple[str, dict[str, Any]]]:
    """A service's sign-ins in the order they are tried: ``NAME``, then ``NAME#2``,
    ``NAME#3``... (by number, not as text: #10 after #9)."""

    def number(key: str) -> int:
        if key == service:
            return 1
        tail = key.removeprefix(service + "#")
        return int(tail) if key.startswith(service + "#") and tail.isdigit() else 0

    found = [(number(key), key, entry) for key, entry in sign_ins.items() if number(key)]
    return [(key, entry) for _n, key, entry in sorted(found)]


class AuthFileError(Exception):
    """auth.json cannot be changed (unreadable, or held too long by another process): one
    line that says what to do. Nothing is written over a file that cannot be read."""


class AuthStore:
    def __init__(self, home: Path | str) -> None:
        self.path = Path(home) / FILE
        self._lock = Path(home) / "locks" / "auth.lock"

    def sign_ins(self) -> dict[str, dict[str, Any]]:
        """Every sign-in by name; an unreadable file reads as none (and is said by status)."""
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        found = data.get("sign_ins") if isinstance(data, dict) else None
        return (
            {str(k): dict(v) for k, v in found.items() if isinstance(v, dict)}
            if isinstance(found, dict)
            else {}
        )

    def problem(self) -> str | None:
        """Why the file cannot be read, or None (absent is fine)."""
        if not self.path.exists():
            return None
        try:
            json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            return f"{self.path} cannot be read ({type(error).__name__})"
        return None

    def get(self, name: str) -> dict[str, Any] | None:
        return self.sign_ins().get(name)

    @contextlib.contextmanager
    def changing(self) -> Iterator[dict[str, dict[str, Any]]]:
        """The sign-ins to change in place, written back when the block ends. Raises
        :class:`AuthFileError` rather than write over a file it cannot read."""
        try:
            with FileLock(self._lock, timeout=LOCK_SECONDS):
                problem = self.problem()
                if problem is not None:
                    raise AuthFileError(f"{problem}; move it aside to start afresh")
                sign_ins = self.sign_ins()
                yield sign_ins
                text = json.dumps({"version": VERSION, "sign_ins": sign_ins}, indent=1)
                atomic_write_text(self.path, text + "\n", mode=0o600)
        except LockTimeout:
            raise AuthFileError(
                f"{self.path} is held by another Hermes for over {LOCK_SECONDS:g} s; try again"
            ) from None
        except OSError as error:
            raise AuthFileError(f"cannot write {self.path}: {error.strerror}") from None
