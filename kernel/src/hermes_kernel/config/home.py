"""Where Hermes keeps its state: HERMES_HOME, and named profiles inside it."""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from hermes_kernel.config.errors import ConfigError

_PROFILE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


def base_home(flag: Path | None, environ: Mapping[str, str]) -> Path:
    """``--home`` beats ``HERMES_HOME`` beats ``~/.hermes``."""
    if flag is not None:
        return flag.expanduser()
    configured = environ.get("HERMES_HOME", "").strip()
    return Path(configured).expanduser() if configured else Path.home() / ".hermes"


ACTIVE_PROFILE = "active_profile"
"""The file in the base home naming the profile ``hermes profile use`` made the default."""
DEFAULT_PROFILE = "default"
"""The base home itself."""


def check_profile_name(name: str, where: str = "--profile") -> str:
    if not _PROFILE.fullmatch(name):
        raise ConfigError([f"{where} {name!r}: use letters, digits, '.', '_' or '-'"])
    return name


def chosen_profile(home: Path, profile: str | None, environ: Mapping[str, str]) -> tuple[str, str]:
    """The profile in use and why: ``--profile``, ``HERMES_PROFILE``, the sticky default
    (``hermes profile use``), or none (the base home, "default")."""
    if profile is not None:
        return profile, "--profile"
    from_env = environ.get("HERMES_PROFILE", "").strip()
    if from_env:
        return from_env, "HERMES_PROFILE"
    try:
        sticky = (home / ACTIVE_PROFILE).read_text(encoding="utf-8").strip()
    except (FileNotFoundError, NotADirectoryError):
        sticky = ""
    except OSError as exc:
        raise ConfigError([f"{home / ACTIVE_PROFILE}: cannot read: {exc.strerror}"]) from None
    if sticky:
        return sticky, f"hermes profile use (in {home / ACTIVE_PROFILE})"
    return DEFAULT_PROFILE, "no profile chosen"


def resolve_home(flag: Path | None, profile: str | None, environ: Mapping[str, str]) -> Path:
    """The effective home: the base home, or ``profiles/NAME`` inside it for the profile
    chosen by ``--profile``, ``HERMES_PROFILE`` or ``hermes profile use``.

    A profile that does not exist is an error rather than a silent fresh home, so a typo in
    the name cannot hide the user's real state.
    """
    home = base_home(flag, environ)
    profile, why = chosen_profile(home, profile, environ)
    if profile == DEFAULT_PROFILE:
        return home
    where = "--profile" if why == "--profile" else f"profile (from {why})"
    check_profile_name(profile, where)
    profiles = home / "profiles"
    selected = profiles / profile
    if not selected.is_dir():
        existing = (
            sorted(p.name for p in profiles.iterdir() if p.is_dir()) if profiles.is_dir() else []
        )
        known = f"existing profiles: {', '.join(existing)}" if existing else "there are no profiles"
        fix = (
            f"create it with: hermes profile create {profile}"
            if why in ("--profile", "HERMES_PROFILE")
            else "go back to the default with: hermes profile use default"
        )
        raise ConfigError([f"{where} {profile!r}: {selected} does not exist ({known}); {fix}"])
    return selected
