"""``hermes_constants`` for hermes-agent plugins on Hermes: where the agent's home is.

The home is the Hermes home the plugin was loaded for (a profile's, when one is chosen),
set by the guest loader; before that, ``HERMES_HOME`` or ``~/.hermes``, as hermes-agent reads
it. Hermes keeps the same layout for what plugins touch (``config.yaml``, ``.env``,
``skills/``, ``plugins/``), so paths made from it mean the same here.
"""

from __future__ import annotations

import os
from pathlib import Path

__all__ = [
    "display_hermes_home",
    "get_config_path",
    "get_default_hermes_root",
    "get_env_path",
    "get_hermes_dir",
    "get_hermes_home",
    "get_process_hermes_home",
    "get_skills_dir",
    "set_home",
]

_loaded_for: list[Path] = []  # the home the plugins were loaded for, once set


def set_home(home: str | Path) -> None:
    """The Hermes home the plugins are loaded for (called by the guest loader)."""
    _loaded_for[:] = [Path(home)]


def get_process_hermes_home() -> Path:
    """``HERMES_HOME`` or ``~/.hermes``, as the environment says."""
    env = os.environ.get("HERMES_HOME", "").strip()
    return Path(env).expanduser() if env else Path.home() / ".hermes"


def get_hermes_home() -> Path:
    """The agent's home: the one Hermes loaded the plugin for."""
    return _loaded_for[0] if _loaded_for else get_process_hermes_home()


def get_default_hermes_root() -> Path:
    """The home that holds every profile: ``ROOT`` for ``ROOT/profiles/NAME``, else the
    home itself."""
    home = get_hermes_home()
    if home.parent.name == "profiles":
        return home.parent.parent
    return home


def display_hermes_home() -> str:
    """The home for messages: ``~/...`` under the user's home folder."""
    home = get_hermes_home()
    try:
        return "~/" + str(home.relative_to(Path.home()))
    except ValueError:
        return str(home)


def get_config_path() -> Path:
    return get_hermes_home() / "config.yaml"


def get_skills_dir() -> Path:
    return get_hermes_home() / "skills"


def get_env_path() -> Path:
    return get_hermes_home() / ".env"


def get_hermes_dir(new_subpath: str, old_name: str) -> Path:
    """``home/old_name`` when that legacy folder has something in it, else
    ``home/new_subpath``."""
    old = get_hermes_home() / old_name
    if old.is_dir() and any(old.iterdir()):
        return old
    return get_hermes_home() / new_subpath
