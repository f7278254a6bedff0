"""What every service manager of :mod:`.systemd` and :mod:`.launchd` shares: the plan a unit
or a property list says (decided once by :mod:`.plan`), the one-line error, the manager's
protocol, and running its tools."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

__all__ = [
    "OUTPUT_LOG",
    "ActiveState",
    "ServiceError",
    "ServiceManager",
    "ServicePlan",
    "first_line",
    "must_run",
    "run_tool",
    "stop_seconds",
]

OUTPUT_LOG = "gateway-output"
"""HERMES_HOME/logs/gateway-output.log: what the service printed besides its records (a
start-up error, a crash's traceback); ``hermes logs gateway-output`` shows it. The records
themselves stay in gateway.log only (``HERMES_LOG_STDERR=0`` in the service)."""


class ServiceError(Exception):
    """One line for the user: what went wrong, and what to do."""


@dataclass(frozen=True)
class ServicePlan:
    """Everything a unit or a plist says, decided once from this home and its config."""

    slug: str | None
    """None for ~/.hermes; else what tells this home's service from the others."""
    home: Path
    command: tuple[str, ...]
    workdir: Path
    writable: tuple[Path, ...]
    """Folders the agent may change (ReadWritePaths): the home, the working folder, more."""
    output: Path
    drain_seconds: float
    stop_seconds: int
    path: str
    """The PATH of the shell that installed it: a service manager's own PATH is minimal,
    and tools should find the same commands as in a terminal."""

    @property
    def environment(self) -> dict[str, str]:
        return {
            "HERMES_HOME": str(self.home),
            # This home and no other: `hermes profile use` must not move the service.
            "HERMES_PROFILE": "default",
            "PATH": self.path,
            "HERMES_LOG_STDERR": "0",
            "PYTHONUNBUFFERED": "1",
        }


def stop_seconds(drain_seconds: float) -> int:
    """How long the service manager waits after SIGTERM: the gateway drains turns for
    ``drain_seconds``, background reviews as long again, and leaves by 15 s after that
    (``hermes gateway run``); 15 s more, so it is never killed while it still saves."""
    return int(2 * drain_seconds + 30)


def first_line(*texts: str) -> str:
    """The first non-empty line of the first text that has one."""
    for text in texts:
        for line in text.splitlines():
            if line.strip():
                return line.strip()
    return ""


def run_tool(argv: list[str], timeout: float | None = 30) -> subprocess.CompletedProcess[str]:
    """Run a service manager's command; ServiceError if it is missing or hangs."""
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, check=False)
    except FileNotFoundError:
        raise ServiceError(f"{argv[0]} is not installed") from None
    except subprocess.TimeoutExpired:
        raise ServiceError(f"`{' '.join(argv)}` did not answer in {timeout:g} s") from None


def must_run(argv: list[str], timeout: float | None = 30) -> None:
    """Run a service manager's command that must succeed; ServiceError with the command and
    the first line of its complaint."""
    done = run_tool(argv, timeout)
    if done.returncode != 0:
        said = first_line(done.stderr, done.stdout) or f"exit status {done.returncode}"
        raise ServiceError(f"{' '.join(argv)}: {said}")


ActiveState = Literal["active", "starting", "inactive", "failed"]
"""A service's state as ``hermes gateway status`` says it."""


class ServiceManager(Protocol):
    """One home's service in one service manager. Each method raises ServiceError (one
    line) when the manager refuses or cannot be reached."""

    kind: str
    """How the user calls it: "systemd user service", "launchd agent"."""
    name: str
    """The unit's name (hermes-gateway.service) or the agent's label."""
    path: Path
    """The unit file or the plist."""
    inspect: str
    """The manager's own command that shows how it is doing."""

    def render(self, plan: ServicePlan) -> str: ...

    def verify(self, text: str) -> str | None:
        """Check ``text`` before it is written; ServiceError with the checker's complaint.
        Returns the checker's name, or None when this system has none."""
        ...

    def reachable(self) -> None:
        """ServiceError (what is wrong, and the fix) if the manager cannot be used now."""
        ...

    def enabled_on_disk(self) -> bool:
        """Whether it would start at the next login, judged from files alone (when the
        manager cannot be asked)."""
        ...

    def load(self) -> None:
        """After the file is written or changed: the manager reads it, and starts it at
        login from now on."""
        ...

    def start(self) -> None:
        """Start it if it is not running."""
        ...

    def stop(self) -> None:
        """Stop it, waiting for the drain; it starts again at the next login."""
        ...

    def restart(self) -> None:
        """Stop it if it runs (waiting for the drain) and start it again, as now written."""
        ...

    def remove(self) -> None:
        """Stop it and unload it, before its file is deleted."""
        ...

    def forget(self) -> None:
        """After its file is deleted or restored: the manager rereads what is there (never
        raises: best effort)."""
        ...

    def main_pid(self) -> int | None: ...

    def state(self) -> ActiveState | None:
        """None when the manager cannot be asked."""
        ...

    def note(self) -> str | None:
        """A line to say once it runs: when it runs and when not."""
        ...
