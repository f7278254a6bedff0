"""One gateway per HERMES_HOME: the pid file and the status file of the long-running process
named ``gateway`` (:mod:`hermes_commons.running`), which ``hermes gateway status`` and a
service manager's install read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hermes_commons import running
from hermes_commons.running import AlreadyRunning

__all__ = [
    "NAME",
    "AlreadyRunning",
    "PidLock",
    "installed_service",
    "read_status",
    "running_pid",
    "write_status",
]

NAME = "gateway"


class PidLock(running.PidLock):
    def __init__(self, home: Path) -> None:
        super().__init__(home, NAME)


def running_pid(home: Path) -> int | None:
    """The pid of the gateway running for ``home``, or None."""
    return running.running_pid(home, NAME)


def write_status(home: Path, status: dict[str, Any]) -> None:
    running.write_status(home, NAME, status)


def read_status(home: Path) -> dict[str, Any] | None:
    return running.read_status(home, NAME)


def installed_service(home: Path) -> dict[str, str] | None:
    """The service of the user's service manager that runs this home's gateway, as
    ``hermes gateway install`` (the service-host plugin) recorded it; None by hand."""
    return running.installed_service(home, NAME)
