"""What a command's arguments say: its options, and whether a path is one a command must
never sweep (``/``, the system folders and homes)."""

from __future__ import annotations

import re

__all__ = ["flags", "home_glob", "long_option", "protected_target", "recursive"]

_SYSTEM_DIRS = frozenset(
    {"bin", "boot", "dev", "etc", "home", "lib", "lib32", "lib64", "libx32", "opt", "proc"}
    | {"root", "sbin", "srv", "sys", "usr", "var", "system", "library", "applications"}
    | {"users", "private"}
)
_HOME_TARGETS = {"~", "~/", "~/*", "~/.", "/home/*", "/users/*"}


def protected_target(target: str) -> bool:
    """``/``, a system folder, a home folder (``~``, ``/home/alice``) or all of one."""
    target = re.sub(r"/(\./)+", "/", re.sub(r"/{2,}", "/", target))  # //etc, /./etc: /etc
    target = target.rstrip("/") or "/"
    if target in {"/", "/*", "/.", "/.."} or target in _HOME_TARGETS:
        return True
    if target.endswith("/*"):
        target = target[:-2] or "/"
    parts = [part for part in target.split("/") if part and part != "."]
    if target.startswith("/") and len(parts) == 1 and parts[0] in _SYSTEM_DIRS:
        return True
    # /home/alice, /Users/alice: someone's home directory
    return target.startswith("/") and len(parts) == 2 and parts[0] in {"home", "users"}


def home_glob(target: str) -> bool:
    """A wildcard over the files right inside a protected folder: ``~/*``, ``~/.*``,
    ``~/.??*``, ``/etc/*``, ``/home/alice/.[a-z]*``."""
    folder, _, last = target.rstrip("/").rpartition("/")
    if not any(ch in last for ch in "*?["):
        return False
    return protected_target(folder or "/")


def flags(words: list[str]) -> tuple[set[str], list[str]]:
    """(the option letters and long options, the operands) of an argument list."""
    letters: set[str] = set()
    targets: list[str] = []
    options_done = False
    for word in words:
        if word == "--":
            options_done = True
        elif word.startswith("--") and not options_done:
            letters.add(word)
        elif word.startswith("-") and len(word) > 1 and not options_done:
            letters.update(word[1:])
        else:
            targets.append(word)
    return letters, targets


def long_option(option: str, full: str, shortest: int = 4) -> bool:
    """``--recur`` is ``--recursive``: GNU tools and git take any unambiguous prefix."""
    given = option.split("=", 1)[0]
    return given.startswith("--") and len(given) >= shortest and full.startswith(given)


def recursive(letters: set[str]) -> bool:
    return bool(letters & {"r", "R"}) or any(long_option(o, "--recursive", 6) for o in letters)
