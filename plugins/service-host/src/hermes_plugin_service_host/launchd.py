"""The gateway as a launchd agent on macOS: ``~/Library/LaunchAgents/ai.hermes.gateway.plist``
(``ai.hermes.gateway.NAME`` for a profile or another home), loaded into the login session
with ``launchctl bootstrap``, stopped with ``bootout``, restarted with ``kickstart``.

Written with :mod:`plistlib`, never by hand; the same plan as the systemd unit: the same
command, home, working folder, environment and output file, restarted when it fails. A
launch agent runs while its user is logged in; launchd has no sandbox lines to add."""

from __future__ import annotations

import os
import plistlib
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from hermes_plugin_service_host.manager import (
    ActiveState,
    ServiceError,
    ServicePlan,
    first_line,
    must_run,
    run_tool,
)

__all__ = ["KIND", "LABEL", "LaunchAgent", "render_plist"]

LABEL = "ai.hermes.gateway"
KIND = "launchd agent"


def render_plist(plan: ServicePlan, label: str) -> str:
    """The agent's property list (XML), keys sorted so that the same plan gives the same
    text and a changed one shows what changed."""
    agent = {
        "Label": label,
        "ProgramArguments": list(plan.command),
        "EnvironmentVariables": plan.environment,
        "WorkingDirectory": str(plan.workdir),
        "RunAtLoad": True,
        # Started again when it fails (a non-zero exit), as systemd's Restart=on-failure.
        "KeepAlive": {"SuccessfulExit": False},
        "ThrottleInterval": 10,
        # Between SIGTERM and SIGKILL: the drain, and the saving after it.
        "ExitTimeOut": plan.stop_seconds,
        "StandardOutPath": str(plan.output),
        "StandardErrorPath": str(plan.output),
    }
    return plistlib.dumps(agent, sort_keys=True).decode("utf-8")


class LaunchAgent:
    """One home's agent in the user's login session (``gui/UID``)."""

    kind = KIND

    def __init__(self, slug: str | None, user_home: Path) -> None:
        self.name = f"{LABEL}.{slug}" if slug else LABEL
        self.path = user_home / "Library" / "LaunchAgents" / f"{self.name}.plist"
        self.domain = f"gui/{os.getuid()}"
        self.target = f"{self.domain}/{self.name}"
        self.inspect = f"launchctl print {self.target}"
        self._reached = False

    def render(self, plan: ServicePlan) -> str:
        return render_plist(plan, self.name)

    def verify(self, text: str) -> str | None:
        plutil = shutil.which("plutil")
        if plutil is None:
            return None
        with tempfile.TemporaryDirectory(prefix="hermes-plist-") as scratch:
            copy = Path(scratch) / self.path.name
            copy.write_text(text, encoding="utf-8")
            done = run_tool([plutil, "-lint", str(copy)])
        if done.returncode != 0:
            said = first_line(done.stderr, done.stdout).replace(str(copy), str(self.path))
            raise ServiceError(f"plutil -lint rejects it: {said}")
        return "plutil -lint"

    def _launchctl(
        self, *args: str, timeout: float | None = 30
    ) -> subprocess.CompletedProcess[str]:
        return run_tool(["launchctl", *args], timeout)

    def _must(self, *args: str, timeout: float | None = 30) -> None:
        must_run(["launchctl", *args], timeout)

    def reachable(self) -> None:
        if self._reached:
            return
        if shutil.which("launchctl") is None:
            raise ServiceError("launchctl not found; run `hermes gateway run` under a supervisor")
        done = self._launchctl("print", self.domain)
        if done.returncode != 0:
            raise ServiceError(
                f"launchctl cannot reach your login session ({self.domain}: "
                f"{first_line(done.stderr, done.stdout)}): launch agents run while you are "
                "logged in on the Mac itself (an SSH session alone has none); log in there, "
                "or run `hermes gateway run` under another supervisor"
            )
        self._reached = True

    def enabled_on_disk(self) -> bool:
        return self.path.exists()  # every plist in LaunchAgents is loaded at login

    def _loaded(self) -> bool:
        return self._launchctl("print", self.target).returncode == 0

    def _bootstrap(self) -> None:
        self._launchctl("enable", self.target)  # undo an earlier `launchctl disable`
        self._must("bootstrap", self.domain, str(self.path))  # RunAtLoad starts it

    def load(self) -> None:
        """launchd reads the plist when it is bootstrapped: see start and restart."""

    def start(self) -> None:
        if self._loaded():
            self._must("kickstart", self.target)
        else:
            self._bootstrap()

    def stop(self) -> None:
        if self._loaded():
            self._must("bootout", self.target, timeout=None)  # waits up to ExitTimeOut

    def restart(self) -> None:
        # bootout and bootstrap again, rather than kickstart -k: a changed plist is reread.
        self.stop()
        self._bootstrap()

    def remove(self) -> None:
        self.stop()

    def forget(self) -> None:
        """Nothing is cached: launchd reads a plist only when bootstrapped."""

    def main_pid(self) -> int | None:
        done = self._launchctl("print", self.target)
        found = re.search(r"^\s*pid = (\d+)", done.stdout, re.MULTILINE)
        return int(found.group(1)) if done.returncode == 0 and found else None

    def state(self) -> ActiveState | None:
        try:
            self.reachable()
        except ServiceError:
            return None
        done = self._launchctl("print", self.target)
        if done.returncode != 0:
            return "inactive"
        if re.search(r"^\s*pid = \d+", done.stdout, re.MULTILINE):
            return "active"
        failed = re.search(r"^\s*last exit code = ([1-9]\d*)", done.stdout, re.MULTILINE)
        return "failed" if failed else "inactive"

    def note(self) -> str | None:
        return "It runs while you are logged in to this Mac, and starts again at each login."
