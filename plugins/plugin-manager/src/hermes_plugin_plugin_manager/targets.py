"""Turn what the user typed after ``hermes plugins install`` into installer arguments.

``NAME`` (a catalog entry, pinned), ``PATH`` (a project folder), ``git+URL@REF``, a ``.whl``
file, or any other requirement (``hermes-plugin-x==1.2`` from the index, uncatalogued). Where
it can, the target is built or read as a wheel first, so the preview shows what the plugin
declares before anything is installed.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from hermes_plugin_plugin_manager.catalog import Catalog, CatalogEntry, CatalogError, PyPISource
from hermes_plugin_plugin_manager.environment import Environment, InstallerError
from hermes_plugin_plugin_manager.wheels import WheelInfo, file_sha256, read_wheel


@dataclass
class Target:
    """One thing to install: installer arguments, and what is known about it beforehand."""

    label: str
    args: list[str]
    wheel: WheelInfo | None = None
    entry: CatalogEntry | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def distribution(self) -> str | None:
        if self.wheel is not None:
            return self.wheel.distribution
        return self.entry.package if self.entry is not None else None

    @property
    def version(self) -> str | None:
        if self.wheel is not None:
            return self.wheel.version
        return self.entry.version if self.entry is not None else None

    @property
    def provides(self) -> list[str] | None:
        if self.wheel is not None:
            return list(self.wheel.provides)
        return list(self.entry.provides) if self.entry is not None else None

    @property
    def plugins(self) -> list[str] | None:
        if self.wheel is not None:
            return list(self.wheel.plugins)
        return [self.entry.name] if self.entry is not None else None


def _git(*args: str, cwd: Path | None = None) -> str:
    done = subprocess.run(
        ["git", *args], cwd=cwd, capture_output=True, text=True, check=False, timeout=600
    )
    if done.returncode != 0:
        reason = (done.stderr.strip().splitlines() or ["exit status " + str(done.returncode)])[-1]
        raise InstallerError(f"git {args[0]} failed: {reason}")
    return done.stdout.strip()


def _split_git(spec: str) -> tuple[str, str | None, str | None]:
    """``git+URL@REF#subdirectory=DIR`` -> (URL, REF, DIR)."""
    url = spec.removeprefix("git+")
    url, _, fragment = url.partition("#")
    subdirectory = None
    for part in fragment.split("&"):
        key, _, value = part.partition("=")
        if key == "subdirectory" and value:
            subdirectory = value
    ref = None
    tail = url.rsplit("/", 1)[-1]
    if "@" in tail:  # the last path segment carries @REF (user@host earlier is not a ref)
        url, _, ref = url.rpartition("@")
    return url, ref, subdirectory


def from_git(spec: str, env: Environment, work: Path) -> Target:
    url, ref, subdirectory = _split_git(spec)
    checkout = work / "checkout"
    _git("clone", "--quiet", url, str(checkout))
    if ref:
        _git("checkout", "--quiet", ref, cwd=checkout)
    commit = _git("rev-parse", "HEAD", cwd=checkout)
    project = checkout / subdirectory if subdirectory else checkout
    wheel = read_wheel(env.build_wheel(project, work / "wheel"))
    # Install from the repository by the ref the user gave, so the environment records it
    # (PEP 610 requested_revision, beside the commit) and `upgrade` can follow it later.
    pinned = f"git+{url}@{ref or commit}" + (
        f"#subdirectory={subdirectory}" if subdirectory else ""
    )
    target = Target(spec, [f"{wheel.distribution} @ {pinned}"], wheel)
    target.notes.append(f"git commit {commit}" + (f" ({ref})" if ref else ""))
    return target


def from_entry(entry: CatalogEntry, env: Environment, work: Path) -> Target:
    source = entry.source
    if not isinstance(source, PyPISource):
        target = from_git(entry.requirement().split(" @ ", 1)[1], env, work)
        target.entry, target.label = entry, entry.name
        return target
    if env.tool == "pip":
        # pip checks hashes only when every requirement has one: fetch and check this wheel
        # ourselves, then install that very file.
        wheel_path = env.download(entry.requirement(), work / "download")
        digest = file_sha256(wheel_path)
        if digest != source.sha256:
            raise InstallerError(
                f"{wheel_path.name}: sha256 {digest} does not match the catalog's "
                f"{source.sha256}; refusing to install it"
            )
        return Target(entry.name, [str(wheel_path)], read_wheel(wheel_path), entry)
    # uv checks every hash given in a requirements file (--verify-hashes is its default).
    requirements = work / "pinned.txt"
    requirements.write_text(f"{entry.requirement()} --hash=sha256:{source.sha256}\n")
    return Target(entry.name, ["-r", str(requirements)], None, entry)


def resolve_target(
    spec: str, env: Environment, work: Path, catalog: Callable[[], Catalog]
) -> Target:
    """What to install for ``spec``; refuses removed plugins and ones not built for us."""
    path = Path(spec).expanduser()
    if spec.startswith("git+"):
        target = from_git(spec, env, work)
    elif spec.endswith(".whl"):
        if not path.is_file():
            raise InstallerError(f"{spec}: no such wheel file")
        target = Target(spec, [str(path.resolve())], read_wheel(path))
    elif path.is_dir():
        if not (path / "pyproject.toml").exists() and not (path / "setup.py").exists():
            raise InstallerError(f"{spec}: not a Python project (no pyproject.toml)")
        wheel = read_wheel(env.build_wheel(path, work / "wheel"))
        target = Target(spec, [str(path.resolve())], wheel)
    else:
        try:
            entry = catalog().find(spec)
        except CatalogError:
            entry = None
        if entry is not None:
            target = from_entry(entry, env, work)
        elif "/" in spec or spec.startswith("."):
            raise InstallerError(f"{spec}: no such folder, wheel or catalog entry")
        else:
            target = Target(spec, [spec])
            target.notes.append(
                "not in the catalog: nobody reviewed it; install only what you trust"
            )
    check_removed(target, catalog)
    return target


def check_removed(target: Target, catalog: Callable[[], Catalog]) -> None:
    try:
        listing = catalog()
    except CatalogError:
        return  # no catalog: nothing is known to be removed
    names = target.plugins or []
    for name in names or [target.label]:
        removal = listing.removal(name, target.distribution, target.version)
        if removal is not None:
            which = f" {target.version}" if removal.versions else ""
            raise InstallerError(
                f"{name}{which} was removed from the catalog: {removal.reason}; not installing it"
            )
