"""The gateway as a service of the user's service manager (``hermes gateway install``): what
to run, for which home, where its output goes; a systemd user service on Linux
(:mod:`.systemd`), a launchd agent on macOS (:mod:`.launchd`).

The command in the unit is the ``hermes`` console script the user ran, by its absolute path
but not through symlinks: a package manager's link (``~/.local/bin/hermes``, Homebrew's
``/opt/homebrew/bin/hermes``) survives an upgrade, the versioned folder it points into does
not; the script's own first line already pins the Python and the environment Hermes is
installed in. ``python -m`` would need a module path inside the kernel, which a plugin does
not name. Run some other way (``python -m``), the ``hermes`` script of this Python is used.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

__all__ = [
    "OUTPUT_LOG",
    "ActiveState",
    "ServiceError",
    "ServiceManager",
    "ServicePlan",
    "changes",
    "first_line",
    "hermes_command",
    "manager_for",
    "plan_service",
    "run_tool",
    "service_slug",
    "stop_seconds",
]

OUTPUT_LOG = "gateway-output"
"""HERMES_HOME/logs/gateway-output.log: what the service printed besides its records (a
start-up error, a crash's traceback); ``hermes logs gateway-output`` shows it. The records
themselves stay in gateway.log only (``HERMES_LOG_STDERR=0`` in the service)."""

_UNSAFE = re.compile(r'[\x00-\x1f\x7f"\\]')


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


def service_slug(home: Path, user_home: Path) -> str | None:
    """None for the default home; a profile of it is named by the profile
    (``hermes-gateway-work``); any other home by its folder and a hash of its path, so two
    homes never share a service."""
    real = Path(os.path.realpath(home))
    default = Path(os.path.realpath(user_home / ".hermes"))
    if real == default:
        return None
    if real.parent == default / "profiles" and re.fullmatch(r"[A-Za-z0-9_.-]+", real.name):
        return real.name
    digest = hashlib.sha256(str(real).encode("utf-8")).hexdigest()[:8]
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", real.name).strip("._-")[:40] or "home"
    return f"{name}-{digest}"


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def hermes_command(argv0: str) -> Path:
    """The absolute path of the ``hermes`` being run (see the module's docstring)."""
    import sysconfig

    ran = Path(os.path.abspath(argv0))
    if ran.name == "hermes" and _executable(ran):
        return ran
    for folder in (sysconfig.get_path("scripts"), os.path.dirname(sys.executable)):
        candidate = Path(folder) / "hermes"
        if _executable(candidate):
            return candidate
    raise ServiceError(
        f"cannot find the hermes command of this Python ({sys.executable}); "
        "run install as `hermes gateway install` from where Hermes is installed"
    )


def check_path(path: Path, what: str) -> Path:
    """``path`` made absolute; refused if a unit file could not hold it."""
    text = os.path.abspath(path)
    if _UNSAFE.search(text) or text != text.strip():
        raise ServiceError(
            f"{what} {text!r} has a quote, a backslash, a control character or spaces at its "
            "ends, which a service file cannot hold; choose another path"
        )
    return Path(text)


def plan_service(
    home: Path,
    *,
    drain_seconds: float,
    configured_cwd: str | None,
    workdir: Path | None,
    writable: tuple[Path, ...],
    argv0: str,
    environ: Mapping[str, str],
) -> ServicePlan:
    """The service of ``home``: sessions start in ``workdir`` (default: gateway.cwd, else the
    current folder), and the agent may change the home, that folder and ``writable``."""
    configured = Path(configured_cwd).expanduser() if configured_cwd else None
    if configured and workdir and os.path.realpath(workdir) != os.path.realpath(configured):
        raise ServiceError(
            f"gateway.cwd in config.yaml ({configured}) says where sessions start; "
            "change it there, or leave out --workdir"
        )
    chosen = check_path(workdir or configured or Path.cwd(), "the working folder")
    if not chosen.is_dir():
        raise ServiceError(f"the working folder {chosen} does not exist; create it first")
    home = check_path(home, "HERMES_HOME")
    folders = [home, chosen]
    for extra in writable:
        folder = check_path(extra, "--writable")
        if not folder.is_dir():
            raise ServiceError(f"--writable {folder} is not a folder; create it first")
        folders.append(folder)
    return ServicePlan(
        slug=service_slug(home, Path.home()),
        home=home,
        command=(str(check_path(hermes_command(argv0), "the hermes command")), "gateway", "run"),
        workdir=chosen,
        writable=tuple(dict.fromkeys(folders)),
        output=home / "logs" / f"{OUTPUT_LOG}.log",
        drain_seconds=drain_seconds,
        stop_seconds=stop_seconds(drain_seconds),
        path=_absolute_path(environ.get("PATH") or os.defpath),
    )


def _absolute_path(path: str) -> str:
    """PATH without empty or relative entries: a service would look up commands in its
    working folder, which the agent can write to."""
    kept = [part for part in path.split(os.pathsep) if part and os.path.isabs(part)]
    return os.pathsep.join(dict.fromkeys(kept)) or os.defpath


def changes(old: str, new: str) -> list[str]:
    """The lines that differ, ``-`` as on disk and ``+`` as install would write them."""
    import difflib

    return [
        f"  {line}"
        for line in difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="", n=0)
        if not line.startswith(("---", "+++", "@@"))
    ]


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


def manager_for(plan_slug: str | None, environ: Mapping[str, str]) -> ServiceManager:
    """This system's manager for the home ``plan_slug`` names."""
    if sys.platform == "darwin":
        from hermes_plugin_gateway.launchd import LaunchAgent

        return LaunchAgent(plan_slug, Path.home())
    if sys.platform.startswith("linux"):
        from hermes_plugin_gateway.systemd import SystemdUserService

        return SystemdUserService(plan_slug, environ)
    raise ServiceError(
        f"hermes gateway install knows systemd (Linux) and launchd (macOS), not {sys.platform}; "
        "run `hermes gateway run` under this system's supervisor"
    )
