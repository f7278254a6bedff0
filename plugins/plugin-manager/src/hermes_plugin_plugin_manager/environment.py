"""The Python environment Hermes runs in, and the installer that manages it (uv or pip).

Every change goes through the same installer the environment was made with: a venv made by
uv (its ``pyvenv.cfg`` says so) or a uv tool environment is changed with ``uv pip``, anything
else with ``python -m pip`` (or ``uv pip`` when pip is absent).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Tool = Literal["uv", "pip"]

# Runs inside the target interpreter: every installed distribution with what it takes to put
# it back exactly (PEP 610 direct_url.json says where a non-index install came from).
_SNAPSHOT = r"""
import json, sys
from importlib import metadata
found = {}
for dist in metadata.distributions():
    name = dist.metadata["Name"]
    if not name:
        continue
    raw = dist.read_text("direct_url.json")
    found[name] = {"name": name, "version": dist.version,
                   "direct_url": json.loads(raw) if raw else None}
json.dump(found, sys.stdout)
"""


class InstallerError(Exception):
    """An installer command failed; the message carries its own last lines of output."""


@dataclass(frozen=True)
class Installed:
    """One installed distribution, and the requirement that reinstalls exactly it."""

    name: str
    version: str
    direct_url: dict[str, object] | None

    def spec(self) -> list[str]:
        """Installer arguments that put back this exact distribution."""
        url = self.direct_url
        if not url:
            return [f"{self.name}=={self.version}"]
        location = str(url.get("url", ""))
        vcs = url.get("vcs_info")
        if isinstance(vcs, dict):
            sub = f"#subdirectory={url['subdirectory']}" if url.get("subdirectory") else ""
            return [f"{self.name} @ {vcs.get('vcs', 'git')}+{location}@{vcs['commit_id']}{sub}"]
        info = url.get("dir_info")
        if isinstance(info, dict) and info.get("editable"):
            return ["--editable", location]
        return [f"{self.name} @ {location}"]

    def source_text(self) -> str:
        url = self.direct_url
        if not url:
            return "index"
        vcs = url.get("vcs_info")
        if isinstance(vcs, dict):
            return f"{url.get('url')}@{str(vcs.get('commit_id'))[:12]}"
        return str(url.get("url", "?"))


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _find_uv() -> str | None:
    beside = Path(sys.executable).parent / "uv"
    if beside.exists():
        return str(beside)
    return shutil.which("uv")


def _has_pip(python: Path) -> bool:
    done = subprocess.run(
        [str(python), "-c", "import pip"], capture_output=True, check=False, timeout=60
    )
    return done.returncode == 0


@dataclass(frozen=True)
class Environment:
    python: Path
    prefix: Path
    tool: Tool
    uv: str | None
    uv_tool: bool = False  # a `uv tool install` environment (it has a uv-receipt.toml)

    @classmethod
    def current(cls) -> Environment:
        """The environment this Hermes runs in, and the installer it was made with."""
        prefix = Path(sys.prefix)
        python = Path(sys.executable)
        uv = _find_uv()
        uv_tool = (prefix / "uv-receipt.toml").exists()
        cfg = prefix / "pyvenv.cfg"
        made_by_uv = cfg.exists() and re.search(r"^uv\s*=", cfg.read_text(), re.M) is not None
        if uv is not None and (uv_tool or made_by_uv or not _has_pip(python)):
            return cls(python, prefix, "uv", uv, uv_tool)
        if _has_pip(python):
            return cls(python, prefix, "pip", uv, uv_tool)
        raise InstallerError(
            f"cannot change {prefix}: it has neither pip nor uv; install one of them (uv: "
            "https://docs.astral.sh/uv/) and retry"
        )

    def synced_project(self) -> Path | None:
        """The uv project whose lock this environment is synced from (its ``.venv``), if any.

        ``uv sync`` there is exact by default: it deletes every package the lock does not
        name, so what ``hermes plugins install`` added is gone after the next plain sync.
        """
        if self.uv_tool or self.prefix.name != ".venv":
            return None
        project = self.prefix.parent
        if (project / "uv.lock").exists() and (project / "pyproject.toml").exists():
            return project
        return None

    def describe(self) -> str:
        kind = "uv tool environment" if self.uv_tool else "environment"
        installer = "uv pip" if self.tool == "uv" else "pip"
        return f"{kind} {self.prefix} (changed with {installer})"

    # --- commands -----------------------------------------------------------------------------

    def _pip(self, verb: str, *args: str) -> list[str]:
        if self.tool == "uv":
            assert self.uv is not None
            return [self.uv, "pip", verb, "--python", str(self.python), *args]
        quiet = ["--yes"] if verb == "uninstall" else []
        return [
            str(self.python),
            "-m",
            "pip",
            verb,
            "--disable-pip-version-check",
            *quiet,
            *args,
        ]

    def _run(self, command: list[str], what: str, timeout: float = 1800) -> str:
        env = {key: value for key, value in os.environ.items() if key != "VIRTUAL_ENV"}
        try:
            done = subprocess.run(
                command, capture_output=True, text=True, check=False, timeout=timeout, env=env
            )
        except subprocess.TimeoutExpired:
            raise InstallerError(f"{what}: no answer from the installer in {timeout:g} s") from None
        if done.returncode != 0:
            lines = [line for line in (done.stderr or done.stdout).splitlines() if line.strip()]
            tail = "\n  ".join(lines[-8:]) or f"exit status {done.returncode}"
            raise InstallerError(f"{what} failed:\n  {tail}")
        return done.stdout + done.stderr

    def install(self, args: list[str], what: str) -> None:
        self._run(self._pip("install", *args), what)

    def uninstall(self, names: list[str], what: str) -> None:
        if names:
            self._run(self._pip("uninstall", *names), what)

    def plan(self, args: list[str]) -> list[str]:
        """What installing ``args`` would add or change, as ``+ name==version`` lines."""
        if self.tool == "uv":
            out = self._run(self._pip("install", "--dry-run", *args), "resolving")
            # " + name==1.0 (from file:///...)" or " + name @ file:///...": the source is
            # already in the preview's title.
            lines = [line.strip() for line in out.splitlines() if line.startswith((" +", " -"))]
            return [re.sub(r" \(from .*\)$| @ .*$", "", line) for line in lines]
        out = self._run(
            self._pip("install", "--dry-run", "--quiet", "--report", "-", *args), "resolving"
        )
        # pip may print warnings around the report (stdout and stderr come back together).
        try:
            report, _ = (
                json.JSONDecoder().raw_decode(out, out.index("{")) if "{" in out else ({}, 0)
            )
        except ValueError:
            raise InstallerError(f"resolving: pip's --report is not JSON: {out[:200]!r}") from None
        return [
            f"+ {item['metadata']['name']}=={item['metadata']['version']}"
            for item in report.get("install", [])
        ]

    def build_wheel(self, source: Path, out: Path) -> Path:
        """Build ``source`` (a project folder) into a wheel in ``out``."""
        if self.uv is not None:
            command = [self.uv, "build", "--wheel", "--quiet", "--out-dir", str(out), str(source)]
        else:
            command = [str(self.python), "-m", "pip", "wheel", "--no-deps", "--quiet"]
            command += ["-w", str(out), str(source)]
        self._run(command, f"building {source}")
        wheels = sorted(out.glob("*.whl"))
        if not wheels:
            raise InstallerError(f"building {source} produced no wheel")
        return wheels[-1]

    def download(self, requirement: str, out: Path) -> Path:
        """Fetch one distribution's wheel without its dependencies (pip only)."""
        self._run(
            [str(self.python), "-m", "pip", "download", "--no-deps", "--quiet", "-d", str(out),
             "--only-binary", ":all:", requirement],
            f"downloading {requirement}",
        )  # fmt: skip
        wheels = sorted(out.glob("*.whl"))
        if not wheels:
            raise InstallerError(f"downloading {requirement} produced no wheel")
        return wheels[-1]

    def snapshot(self) -> dict[str, Installed]:
        """Every distribution installed now, by normalized name."""
        out = self._run([str(self.python), "-c", _SNAPSHOT], "reading installed packages")
        return {
            normalize(name): Installed(item["name"], item["version"], item["direct_url"])
            for name, item in json.loads(out).items()
        }

    def restore(self, before: dict[str, Installed], sources: Sequence[str] = ()) -> list[str]:
        """Put the environment back to ``before``; the differences that remain (none,
        normally). ``sources`` (``--find-links DIR`` ...) are where the change looked for
        packages: the old ones are put back from there too."""
        now = self.snapshot()
        changed = [key for key, dist in now.items() if before.get(key) != dist]
        self.uninstall([now[key].name for key in changed], "rolling back")
        missing = [dist for key, dist in before.items() if now.get(key) != dist]
        if missing:
            with tempfile.TemporaryDirectory() as folder:
                # One requirements file, so editable and URL specs install in one resolution.
                lines = [" ".join(dist.spec()) for dist in missing]
                requirements = Path(folder) / "restore.txt"
                requirements.write_text("\n".join(lines) + "\n")
                self.install(["--no-deps", *sources, "-r", str(requirements)], "rolling back")
        after = self.snapshot()
        return sorted(
            {key for key in before.keys() | after.keys() if before.get(key) != after.get(key)}
        )
