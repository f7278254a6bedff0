"""A long-running process of a home (``hermes gateway run``): a locked pid file says which
process it is, and a status file it rewrites every few seconds says how it is doing. Both
live in ``HERMES_HOME/NAME/``: ``NAME.pid`` and ``status.json``, so a command of another
plugin (a service manager's install waiting until the process serves) reads them by the
process's name without importing the plugin that runs it.

The status file is a JSON object; ``pid``, ``state`` ("running" once it serves, "stopped"
when it left cleanly), ``started_at`` and ``updated_at`` (seconds since the epoch) are always
there, the rest is the process's own. Beside them, ``service.json`` says which service of the
user's service manager runs the process, written by whatever installed that service (``hermes
gateway install``) and removed when it is uninstalled: ``name``, ``kind`` ("systemd user
service") and ``path`` (its unit file).
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from hermes_commons.files import atomic_write_text
from hermes_commons.locks import FileLock, LockTimeout, lock_holder

__all__ = [
    "AlreadyRunning",
    "PidLock",
    "hermes_command",
    "installed_service",
    "read_status",
    "record_service",
    "running_pid",
    "write_status",
]


class AlreadyRunning(Exception):
    """The process named ``name`` already runs for this home."""

    def __init__(self, name: str, pid: int | None) -> None:
        super().__init__(
            f"a {name} already runs for this HERMES_HOME (pid {pid or '?'}); "
            f"stop it with: hermes {name} stop"
        )
        self.pid = pid


def _pid_path(home: Path, name: str) -> Path:
    return home / name / f"{name}.pid"


def _status_path(home: Path, name: str) -> Path:
    return home / name / "status.json"


class PidLock:
    """Held while the process runs; the OS releases it if the process dies, so a stale pid
    file never blocks the next start."""

    def __init__(self, home: Path, name: str) -> None:
        self.name = name
        self._lock = FileLock(_pid_path(home, name), timeout=0)

    def acquire(self) -> None:
        try:
            self._lock.acquire()
        except LockTimeout as exc:
            raise AlreadyRunning(self.name, exc.holder) from None

    def release(self) -> None:
        self._lock.release()


def running_pid(home: Path, name: str) -> int | None:
    """The pid of the process ``name`` running for ``home``, or None."""
    return lock_holder(_pid_path(home, name))


def write_status(home: Path, name: str, status: dict[str, Any]) -> None:
    path = _status_path(home, name)
    path.parent.mkdir(parents=True, exist_ok=True)
    # Rewritten every few seconds and only ever a snapshot: replaced whole, not synced.
    atomic_write_text(path, json.dumps({**status, "updated_at": time.time()}, indent=2), sync=False)


def read_status(home: Path, name: str) -> dict[str, Any] | None:
    """The last status the process ``name`` wrote (it may have stopped since: ask
    :func:`running_pid`), or None when there is none or it cannot be read."""
    try:
        data = json.loads(_status_path(home, name).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _service_path(home: Path, name: str) -> Path:
    return home / name / "service.json"


def record_service(home: Path, name: str, service: dict[str, str] | None) -> None:
    """Say which service runs the process ``name`` of ``home`` (None: none any more)."""
    path = _service_path(home, name)
    if service is None:
        path.unlink(missing_ok=True)
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, json.dumps(service, indent=2))


def installed_service(home: Path, name: str) -> dict[str, str] | None:
    """The service that runs the process ``name`` of ``home`` (``name``, ``kind``, ``path``),
    as its installer recorded it, or None."""
    try:
        data = json.loads(_service_path(home, name).read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        return None
    if isinstance(data.get("path"), str) and not Path(data["path"]).exists():
        return None  # removed by hand since
    return {key: str(value) for key, value in data.items()}


def hermes_command() -> str | None:
    """The ``hermes`` command of this installation (beside this Python first, then on
    PATH), to start another process of it; None if there is none."""
    beside = Path(sys.executable).with_name("hermes")
    if beside.exists():
        return str(beside)
    return shutil.which("hermes")
