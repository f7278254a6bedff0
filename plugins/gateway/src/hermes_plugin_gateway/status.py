"""One gateway per HERMES_HOME: a locked pid file says which process runs it, and a status
file (rewritten every few seconds) says how it is doing, for ``hermes gateway status``."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import time
from pathlib import Path
from typing import Any

from hermes_sdk.files import atomic_write_text

__all__ = ["GatewayRunning", "PidLock", "read_status", "running_pid", "write_status"]

STALE_AFTER_SECONDS = 30.0


class GatewayRunning(Exception):
    def __init__(self, pid: int | None) -> None:
        super().__init__(
            f"a gateway already runs for this HERMES_HOME (pid {pid or '?'}); "
            "stop it with: hermes gateway stop"
        )
        self.pid = pid


def gateway_dir(home: Path) -> Path:
    return home / "gateway"


def _pid_path(home: Path) -> Path:
    return gateway_dir(home) / "gateway.pid"


def _status_path(home: Path) -> Path:
    return gateway_dir(home) / "status.json"


def _read_pid(path: Path) -> int | None:
    try:
        return int(path.read_text().strip() or 0) or None
    except (OSError, ValueError):
        return None


class PidLock:
    """Held while the gateway runs; the OS releases it if the process dies, so a stale pid
    file never blocks the next start."""

    def __init__(self, home: Path) -> None:
        self.path = _pid_path(home)
        self._fd: int | None = None

    def acquire(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise GatewayRunning(_read_pid(self.path)) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, 0)
            os.close(self._fd)
            self._fd = None


def running_pid(home: Path) -> int | None:
    """The pid of the gateway running for ``home``, or None."""
    path = _pid_path(home)
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except OSError:
        return _read_pid(path)  # locked: a gateway holds it
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def write_status(home: Path, status: dict[str, Any]) -> None:
    path = _status_path(home)
    path.parent.mkdir(parents=True, exist_ok=True)
    # Rewritten every few seconds and only ever a snapshot: replaced whole, not synced.
    atomic_write_text(path, json.dumps({**status, "updated_at": time.time()}, indent=2), sync=False)


def read_status(home: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(_status_path(home).read_text())
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
