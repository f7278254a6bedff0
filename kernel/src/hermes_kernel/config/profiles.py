"""Named profiles inside a base home (``profiles/NAME``): listed, created and made the
sticky default, for ``hermes profile`` and the dashboard alike. Errors are ConfigError
with one line."""

from __future__ import annotations

import shutil
from pathlib import Path

from hermes_commons.files import atomic_write_text
from hermes_kernel.config.errors import ConfigError
from hermes_kernel.config.home import ACTIVE_PROFILE, DEFAULT_PROFILE, check_profile_name

__all__ = ["create_profile", "home_of", "profile_names", "use_profile"]

CLONED = ("config.yaml", ".env", "SOUL.md")


def profile_names(base: Path) -> list[str]:
    """``default`` and every profile, by name."""
    folder = base / "profiles"
    found = sorted(p.name for p in folder.iterdir() if p.is_dir()) if folder.is_dir() else []
    return [DEFAULT_PROFILE, *found]


def home_of(base: Path, name: str) -> Path:
    return base if name == DEFAULT_PROFILE else base / "profiles" / name


def create_profile(base: Path, name: str, source: Path, *, clone: bool) -> str:
    """Create profile ``name``, empty or with ``source``'s config.yaml, .env and SOUL.md;
    one line saying what was made."""
    if check_profile_name(name, "profile") == DEFAULT_PROFILE:
        raise ConfigError(["'default' is the base home itself; choose another name"])
    home = home_of(base, name)
    if home.exists():
        raise ConfigError([f"profile {name!r} already exists ({home})"])
    home.mkdir(parents=True, mode=0o700)
    copied = []
    if clone:
        for item in CLONED:
            if (source / item).is_file():
                shutil.copy2(source / item, home / item)  # .env keeps its 0600
                copied.append(item)
    what = f" with {', '.join(copied)} from {source}" if copied else ""
    return f"created profile {name}: {home}{what}"


def use_profile(base: Path, name: str) -> str:
    """Make ``name`` the profile later commands use (``default``: the base home)."""
    check_profile_name(name, "profile")
    sticky = base / ACTIVE_PROFILE
    if name == DEFAULT_PROFILE:
        sticky.unlink(missing_ok=True)
        return f"using the default profile: {base}"
    if not home_of(base, name).is_dir():
        known = ", ".join(profile_names(base)[1:]) or "none"
        raise ConfigError(
            [
                f"no profile {name!r} (profiles: {known}); "
                f"create it with: hermes profile create {name}"
            ]
        )
    base.mkdir(parents=True, exist_ok=True)
    atomic_write_text(sticky, name + "\n", 0o644)
    return f"using profile {name}: {home_of(base, name)}"
