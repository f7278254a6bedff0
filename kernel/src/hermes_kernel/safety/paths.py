"""Write and read protection for the file tools: they refuse to write credentials, keys,
shell startup files and anything in HERMES_HOME (config, SOUL, what plugins keep there:
the owning tool or command changes those, checked), and anything outside
``HERMES_WRITE_SAFE_ROOT`` when that is set; they refuse to read Hermes's own secrets and
any process's environment (``/proc/*/environ``). Writes the terminal would ask about (a
system file, a startup file, a service) are asked about the same way by the caller.

Paths are checked as the backend will use them. On this machine symlinks are resolved
first, so a link into ``~/.ssh`` is refused like ``~/.ssh`` itself; in a container or over
SSH the path is checked as written (normalized), which is weaker, and the docs say so.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Callable

__all__ = ["SAFE_ROOT_VARIABLE", "read_refusal", "write_refusal"]

SAFE_ROOT_VARIABLE = "HERMES_WRITE_SAFE_ROOT"
_PROTECTED_DIRS = (".ssh", ".aws", ".gnupg", ".kube", ".docker", ".config/gcloud")
_PROTECTED_NAMES = frozenset(
    {
        ".bashrc",
        ".bash_profile",
        ".bash_login",
        ".profile",
        ".zshrc",
        ".zprofile",
        ".zshenv",
        ".netrc",
        ".git-credentials",
        ".pgpass",
        "authorized_keys",
        "id_rsa",
        "id_ed25519",
        "id_ecdsa",
    }
)
_ENV_TEMPLATES = frozenset({".env.example", ".env.sample", ".env.template", ".env.dist"})
_HERMES_SECRETS = (".env", "auth.json", "state.db", "state.db-wal", "state.db-shm")


def _is_env_file(name: str) -> bool:
    return (name == ".env" or name.startswith(".env.")) and name not in _ENV_TEMPLATES


def write_refusal(
    path: str, *, local: bool, hermes_home: str, safe_root: str | None = None
) -> str | None:
    """Why writing ``path`` (absolute, or starting with ``~``) is refused; None if allowed."""
    if local:
        resolved = os.path.realpath(os.path.expanduser(path))
        home = os.path.realpath(os.path.expanduser("~"))
    else:
        resolved = posixpath.normpath(path)
        home = "~"
    name = posixpath.basename(resolved)
    relative_to_home = None
    if resolved == home or resolved.startswith(home.rstrip("/") + "/"):
        relative_to_home = resolved[len(home) :].lstrip("/")
    if relative_to_home is not None:
        for folder in _PROTECTED_DIRS:
            if relative_to_home == folder or relative_to_home.startswith(folder + "/"):
                return f"{path} is inside ~/{folder}, which holds credentials"
    if "/.ssh/" in resolved + "/":
        return f"{path} is inside an .ssh folder"
    if name in _PROTECTED_NAMES:
        return f"{path} is a credential or shell startup file"
    if _is_env_file(name):
        return f"{path} is an .env file (secrets)"
    if local:
        if _hermes_secret(resolved, hermes_home, os.path.realpath):
            return f"{path} is one of Hermes' own secrets or its state"
        if any(_inside(resolved, hermes) for hermes in _homes(hermes_home, os.path.realpath)):
            return (
                f"{path} is in HERMES_HOME, Hermes's own state; its owner changes it (the "
                "tools that own those files, hermes config set), never a file write"
            )
    if safe_root:
        root = os.path.realpath(safe_root) if local else posixpath.normpath(safe_root)
        if resolved != root and not resolved.startswith(root.rstrip("/") + "/"):
            return f"{path} is outside {SAFE_ROOT_VARIABLE} ({safe_root})"
    return None


_ENVIRON = re.compile(r"^/proc/[^/]+(/task/[^/]+)?/environ$")


def read_refusal(path: str, *, local: bool, hermes_home: str) -> str | None:
    """Why reading ``path`` is refused (Hermes's secrets, a process's environment); None
    if allowed. Other secrets are redacted from what a tool returns, not refused."""
    resolved = os.path.realpath(os.path.expanduser(path)) if local else posixpath.normpath(path)
    if _ENVIRON.match(resolved):
        return f"{path} is a process's environment (it holds Hermes's keys)"
    if _hermes_secret(resolved, hermes_home, os.path.realpath if local else posixpath.normpath):
        return f"{path} is one of Hermes' own secrets or its state"
    return None


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _homes(hermes_home: str, real: Callable[[str], str]) -> list[str]:
    """The home, and for a profile (``BASE/profiles/NAME``) its base home too: a profile's
    agent may not touch the base's config or secrets either."""
    home = real(hermes_home)
    parent = posixpath.dirname(home)
    if posixpath.basename(parent) == "profiles":
        return [home, posixpath.dirname(parent)]
    return [home]


def _hermes_secret(resolved: str, hermes_home: str, real: Callable[[str], str]) -> bool:
    """``resolved`` is a secret file of the home, of its base, or of any of their
    profiles (``.env``, ``auth.json``, ``state.db``)."""
    if posixpath.basename(resolved) not in _HERMES_SECRETS:
        return False
    folder = posixpath.dirname(resolved)
    return any(
        folder == home or posixpath.dirname(folder) == posixpath.join(home, "profiles")
        for home in _homes(hermes_home, real)
    )
