"""The gateway as a systemd *user* service: ``~/.config/systemd/user/hermes-gateway.service``
(``hermes-gateway-NAME.service`` for a profile or another home), checked with
``systemd-analyze verify`` before it is written, run with ``systemctl --user``. It runs as
you, not as root; ``docs/user/gateway-systemd.md`` explains each line."""

from __future__ import annotations

import getpass
import os
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path

from hermes_plugin_service_host.manager import (
    ActiveState,
    ServiceError,
    ServicePlan,
    first_line,
    must_run,
    run_tool,
)

__all__ = ["KIND", "SystemdUserService", "render_unit"]


def _specifiers(value: str) -> str:
    """``value`` with systemd's specifiers (``%h`` ...) made literal."""
    return value.replace("%", "%%")


def _word(value: str, command: bool = False) -> str:
    """One word of a command line or a list: quoted if it has spaces; ``$`` is literal in a
    command line (a variable otherwise). Quotes, backslashes and control characters never
    get here (:func:`~hermes_plugin_service_host.plan.check_path`)."""
    escaped = _specifiers(value)
    if command:
        escaped = escaped.replace("$", "$$")
    return f'"{escaped}"' if any(c.isspace() or c == "'" for c in value) else escaped


KIND = "systemd user service"


def render_unit(plan: ServicePlan) -> str:
    """The unit file's text: the recipe of docs/user/gateway-systemd.md for ``plan``."""
    environment = "\n".join(
        f"Environment={_word(f'{key}={value}')}" for key, value in plan.environment.items()
    )
    output = _specifiers(str(plan.output))
    return f"""\
# Written by `hermes gateway install`: `hermes gateway install --force` rewrites it and
# `hermes gateway uninstall` removes it. Edited by hand, install leaves it alone.
[Unit]
Description=Hermes gateway (chat platforms) for {_specifiers(str(plan.home))}
After=network-online.target
Wants=network-online.target

[Service]
Type=exec
ExecStart={" ".join(_word(part, command=True) for part in plan.command)}
# Where commands run by gateway sessions start (gateway.cwd in config.yaml).
WorkingDirectory={_specifiers(str(plan.workdir))}
# This home and no other (HERMES_PROFILE=default: `hermes profile use` does not move it);
# the PATH of the shell that installed it; records go to logs/gateway.log only.
{environment}
# What it prints besides its records (a start-up error, a crash): hermes logs {plan.output.stem}
StandardOutput=append:{output}
StandardError=append:{output}
Restart=on-failure
RestartSec=10
# SIGTERM drains running turns for gateway.drain_seconds ({plan.drain_seconds:g} s): allow that.
KillSignal=SIGTERM
TimeoutStopSec={plan.stop_seconds}
# 143, 130: it left after a stop signal without finishing the drain: a stop, not a failure.
SuccessExitStatus=130 143

# Defence in depth: the OS is the real boundary (see security.md).
NoNewPrivileges=true
PrivateTmp=true
ProtectSystem=strict
ReadWritePaths={" ".join(_word(str(path)) for path in plan.writable)}

[Install]
WantedBy=default.target
"""


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no USER and a uid without a passwd entry (a container)
        return "$USER"


class SystemdUserService:
    """One home's unit in the user's systemd (``systemctl --user``)."""

    kind = KIND

    def __init__(self, slug: str | None, environ: Mapping[str, str]) -> None:
        self.name = f"hermes-gateway{f'-{slug}' if slug else ''}.service"
        self.environ = dict(environ)
        configured = self.environ.get("XDG_CONFIG_HOME", "")
        config = Path(configured) if os.path.isabs(configured) else Path.home() / ".config"
        self.folder = config / "systemd" / "user"
        self.path = self.folder / self.name
        self.inspect = f"systemctl --user status {self.name}"
        self._reached = False

    def render(self, plan: ServicePlan) -> str:
        return render_unit(plan)

    def verify(self, text: str) -> str | None:
        analyze = shutil.which("systemd-analyze", path=self.environ.get("PATH"))
        if analyze is None:
            return None
        with tempfile.TemporaryDirectory(prefix="hermes-unit-") as scratch:
            unit = Path(scratch) / self.name
            unit.write_text(text, encoding="utf-8")
            # --user needs a runtime folder (none in a container or under sudo); verifying
            # needs no running manager, so a scratch one serves anywhere.
            runtime = Path(scratch) / "runtime"
            runtime.mkdir(mode=0o700)
            try:
                done = subprocess.run(
                    [analyze, "--user", "verify", str(unit)],
                    env={**self.environ, "XDG_RUNTIME_DIR": str(runtime)},
                    capture_output=True,
                    text=True,
                    timeout=60,
                    check=False,
                )
            except subprocess.TimeoutExpired:
                raise ServiceError("systemd-analyze verify did not answer in 60 s") from None
        said = (done.stderr + "\n" + done.stdout).replace(str(unit), str(self.path))
        # Complaints about other units (the system's own) are not this install's business.
        ours = [line for line in said.splitlines() if self.name in line or str(self.path) in line]
        if done.returncode != 0 or ours:
            raise ServiceError(f"systemd-analyze verify rejects it: {first_line(*ours, said)}")
        return "systemd-analyze verify"

    def _systemctl(
        self, *args: str, timeout: float | None = 30
    ) -> subprocess.CompletedProcess[str]:
        return run_tool(["systemctl", "--user", *args], timeout)

    def _must(self, *args: str, timeout: float | None = 30) -> None:
        must_run(["systemctl", "--user", *args], timeout)

    def reachable(self) -> None:
        if self._reached:
            return
        if shutil.which("systemctl", path=self.environ.get("PATH")) is None:
            raise ServiceError(
                "systemctl not found: this system does not run systemd; run "
                "`hermes gateway run` under its supervisor instead"
            )
        done = self._systemctl("show", "--property=Version")
        if done.returncode != 0:
            raise ServiceError(
                f"systemctl --user cannot reach your systemd user manager "
                f"({first_line(done.stderr, done.stdout)}): run this in your login session "
                f"(or once: loginctl enable-linger {_user()}, then with "
                f"XDG_RUNTIME_DIR=/run/user/{os.getuid()}); without systemd (a container), "
                "run `hermes gateway run` under its supervisor"
            )
        self._reached = True

    def enabled_on_disk(self) -> bool:
        link = self.folder / "default.target.wants" / self.name
        return link.is_symlink() or link.exists()

    def load(self) -> None:
        self._must("daemon-reload")
        self._must("enable", "--quiet", self.name)

    def start(self) -> None:
        self._must("start", self.name, timeout=None)

    def stop(self) -> None:
        # Waits for the drain, up to TimeoutStopSec.
        self._must("stop", self.name, timeout=None)

    def restart(self) -> None:
        self._must("restart", self.name, timeout=None)

    def remove(self) -> None:
        self._must("disable", "--quiet", "--now", self.name, timeout=None)

    def forget(self) -> None:
        self._systemctl("daemon-reload")
        self._systemctl("reset-failed", self.name)

    def main_pid(self) -> int | None:
        done = self._systemctl("show", "--property=MainPID", "--value", self.name)
        text = done.stdout.strip()
        return int(text) if done.returncode == 0 and text.isdigit() and int(text) else None

    def state(self) -> ActiveState | None:
        try:
            self.reachable()
        except ServiceError:
            return None
        word = self._systemctl("is-active", self.name).stdout.strip()
        if word in ("active", "reloading", "deactivating"):
            return "active"
        if word == "activating":
            return "starting"
        return "failed" if word == "failed" else "inactive"

    def note(self) -> str | None:
        """Said after it starts: without lingering it stops when the user logs out."""
        user = _user()
        if Path("/var/lib/systemd/linger", user).exists():
            return None
        return (
            "It stops when you log out and starts when you log in; to keep it running "
            f"without a login session (and start it at boot): loginctl enable-linger {user}"
        )
