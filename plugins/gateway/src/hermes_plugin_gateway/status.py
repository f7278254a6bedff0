"""One gateway per HERMES_HOME: a locked pid file says which process runs it, and a status
file (rewritten every few seconds) says how it is doing, for ``hermes gateway status``."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from hermes_commons.files import atomic_write_text
from hermes_commons.locks import FileLock, LockTimeout, lock_holder

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


class PidLock:
    """Held while the gateway runs; the OS releases it if the process dies, so a stale pid
    file never blocks the next start."""

    def __init__(self, home: Path) -> None:
        self._lock = FileLock(_pid_path(home), timeout=0)

    def acquire(self) -> None:
        try:
            self._lock.acquire()
        except LockTimeout as exc:
            raise GatewayRunning(exc.holder) from None

    def release(self) -> None:
        self._lock.release()


def running_pid(home: Path) -> int | None:
    """The pid of the gateway running for ``home``, or None."""
    return lock_holder(_pid_path(home))


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
