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


def resolve_home(flag: Path | None, profile: str | None, environ: Mapping[str, str]) -> Path:
    """The effective home: the base home, or ``profiles/NAME`` inside it for ``--profile``.

    A profile that does not exist is an error rather than a silent fresh home, so a typo in
    the name cannot hide the user's real state.
    """
    home = base_home(flag, environ)
    if profile is None:
        return home
    if not _PROFILE.fullmatch(profile):
        raise ConfigError([f"--profile {profile!r}: use letters, digits, '.', '_' or '-'"])
    profiles = home / "profiles"
    selected = profiles / profile
    if not selected.is_dir():
        existing = (
            sorted(p.name for p in profiles.iterdir() if p.is_dir()) if profiles.is_dir() else []
        )
        known = f"existing profiles: {', '.join(existing)}" if existing else "there are no profiles"
        raise ConfigError(
            [
                f"--profile {profile!r}: {selected} does not exist ({known}); "
                f"create it with: mkdir -p {selected}"
            ]
        )
    return selected
