"""The gateway as a service of the user's service manager (``hermes gateway install``): what
to run, for which home, where its output goes; a systemd user service on Linux
(:mod:`.systemd`), a launchd agent on macOS (:mod:`.launchd`); :func:`manager_for` picks
this system's.

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
import sys
from collections.abc import Mapping
from pathlib import Path

from hermes_plugin_service_host.manager import (
    OUTPUT_LOG,
    ServiceError,
    ServiceManager,
    ServicePlan,
    stop_seconds,
)

__all__ = ["changes", "hermes_command", "manager_for", "plan_service", "service_slug"]

_UNSAFE = re.compile(r'[\x00-\x1f\x7f"\\]')


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


def manager_for(plan_slug: str | None, environ: Mapping[str, str]) -> ServiceManager:
    """This system's manager for the home ``plan_slug`` names."""
    if sys.platform == "darwin":
        from hermes_plugin_service_host.launchd import LaunchAgent

        return LaunchAgent(plan_slug, Path.home())
    if sys.platform.startswith("linux"):
        from hermes_plugin_service_host.systemd import SystemdUserService

        return SystemdUserService(plan_slug, environ)
    raise ServiceError(
        f"hermes gateway install knows systemd (Linux) and launchd (macOS), not {sys.platform}; "
        "run `hermes gateway run` under this system's supervisor"
    )
