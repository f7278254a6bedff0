"""What a command's arguments say: its options, and whether a path is one a command must
never sweep (``/``, the system folders and homes)."""

from __future__ import annotations

import posixpath
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hermes_plugin_approvals.shell import Command

__all__ = [
    "flags",
    "home_glob",
    "long_option",
    "protected_target",
    "recursive",
    "written_elsewhere",
]

_SYSTEM_DIRS = frozenset(
    {"bin", "boot", "dev", "etc", "home", "lib", "lib32", "lib64", "libx32", "opt", "proc"}
    | {"root", "sbin", "srv", "sys", "usr", "var", "system", "library", "applications"}
    | {"users", "private"}
)
_HOME_TARGETS = {"~", "~/", "~/*", "~/.", "/home/*", "/users/*"}


def protected_target(target: str) -> bool:
    """``/``, a system folder, a home folder (``~``, ``/home/alice``) or all of one."""
    target = re.sub(r"/(\./)+", "/", re.sub(r"/{2,}", "/", target))  # //etc, /./etc: /etc
    if "/.." in target:  # ~/.. is the folder of homes; /usr/.. is /
        home = "/home/\x00you"
        path = home + target[1:] if target.startswith("~") else target
        path = posixpath.normpath(path)
        target = "~" + path[len(home) :] if path.startswith(home) else path
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
    folder, slash, last = target.rstrip("/").rpartition("/")
    if not slash or not any(ch in last for ch in "*?["):
        return False  # *.o is the working folder's, judged where a cd took it
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


def _value(args: list[str], short: str, long: str) -> list[str]:
    """Every value of ``-X VALUE``, ``-XVALUE`` (``short``), ``--long VALUE`` and
    ``--long=VALUE``."""
    found = []
    for at, arg in enumerate(args):
        following = args[at + 1] if at + 1 < len(args) else ""
        if arg in (short, long) and following:
            found.append(following)
        elif long and arg.startswith(long + "="):
            found.append(arg.split("=", 1)[1])
        elif short and arg.startswith(short) and len(arg) > len(short) and not arg.startswith("--"):
            found.append(arg[len(short) :])
    return found


_WRITERS_ELSEWHERE = frozenset(
    {"curl", "wget", "tar", "bsdtar", "unzip", "git", "cp", "mv", "install", "ln", "pip", "pip3"}
)


def written_elsewhere(command: Command) -> list[str]:
    """Where a download, an unpacking, a clone or an install writes (a folder ends in
    ``/``): ``curl -o F``, ``wget -O F`` / ``-P DIR``, ``tar -x -C DIR``, ``unzip -d DIR``,
    ``git clone URL DIR``, ``cp -t DIR``, ``pip install --target DIR``."""
    name, args = command.name, command.args
    if name not in _WRITERS_ELSEWHERE and not name.startswith("python"):
        return []
    letters, operands = flags(args)
    found: list[str] = []
    urls = [a for a in args if "://" in a]
    named = urls[-1].split("?")[0].rstrip("/").rsplit("/", 1)[-1] if urls else ""
    if name == "curl":
        found += _value(args, "-o", "--output")
        found += [f"{d}/" for d in _value(args, "", "--output-dir")]
        if "O" in letters or "--remote-name" in letters:
            found.append(named)  # -O: the URL's file name, where it runs
    elif name == "wget":
        found += _value(args, "-O", "--output-document")
        found += [f"{d}/" for d in _value(args, "-P", "--directory-prefix")]
        if not found:
            found.append(named)
    elif name in ("tar", "bsdtar") and (
        "x" in letters or "--extract" in letters or (args[:1] and "x" in args[0].lstrip("-"))
    ):
        found += [f"{d}/" for d in _value(args, "-C", "--directory")]
    elif name == "unzip":
        found += [f"{d}/" for d in _value(args, "-d", "")]
    elif name == "git" and "clone" in operands:
        after = operands[operands.index("clone") + 1 :]
        found += after[1:2]
    elif name in ("cp", "mv", "install", "ln"):
        found += [f"{d}/" for d in _value(args, "-t", "--target-directory")]
    elif name in ("pip", "pip3") or (name.startswith("python") and "pip" in args[:2]):
        found += [f"{d}/" for d in _value(args, "-t", "--target")]
    return [f.replace("//", "/") for f in found if f and f != "-"]
