"""Which tool calls change files inside the working folder, where that can be told.

``write_file`` and ``patch`` name their file. ``execute_code`` runs a script that may write
anything, so it always counts (a snapshot of an unchanged folder costs one scan and makes no
checkpoint). A ``terminal`` command counts when it visibly writes inside the folder: a ``>``
or ``>>`` redirection to a file there, or a program that changes files (``rm``, ``mv``,
``cp``, ``sed -i``, ``tee``, ``git checkout``, a formatter ...) given a path there, or none.

The command is read with :mod:`shlex` (punctuation split off, so ``a>b`` is three words),
not a shell grammar: this is a heuristic that errs towards a snapshot. Text it cannot read
(an unclosed quote) and paths it cannot know (``$DIR``) count as inside; a program that
writes through a script of its own (``python build.py``, ``make``) is not seen.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from hermes_commons.redact import redact_text
from hermes_commons.text import one_line

__all__ = ["change_of", "command_writes"]

FILE_TOOLS = frozenset({"write_file", "patch"})
SCRIPT_TOOLS = frozenset({"execute_code"})
SHELL_TOOLS = frozenset({"terminal"})

_SEPARATORS = frozenset({";", ";;", "&", "&&", "|", "||", "|&", "(", ")", "{", "}"})
_DEVICES = ("/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/fd/")
_PREFIXES = frozenset(
    {"sudo", "doas", "env", "nohup", "command", "exec", "builtin", "time", "nice", "ionice"}
    | {"stdbuf", "timeout", "xargs", "setsid", "unbuffer", "npx", "uvx", "bunx", "then", "do"}
    | {"if", "elif", "else", "while", "until", "!"}
)
_PREFIX_VALUED = frozenset({"-u", "-g", "-n", "-s", "-k", "-I", "-L", "-P", "-d", "-C"})
"""Options of the prefixes above that take a value (sudo -u root, xargs -I {}, nice -n 5)."""
_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "ash", "fish"})
_WRITERS = frozenset(
    {"rm", "rmdir", "unlink", "shred", "mv", "cp", "ln", "install", "rsync", "touch", "mkdir"}
    | {"truncate", "chmod", "chown", "chgrp", "tee", "dd", "patch", "tar", "unzip", "zip"}
    | {"gzip", "gunzip", "bzip2", "bunzip2", "xz", "unxz", "split", "csplit"}
)
"""Programs that change the files they are given (or, given none, ``patch``'s and ``tee``'s
own targets in the current folder)."""
_IN_PLACE = frozenset({"sed", "perl", "ruby"})
"""Programs that change files only with ``-i``."""
_FORMATTERS = frozenset(
    {"black", "isort", "autopep8", "autoflake", "yapf", "ruff", "gofmt", "goimports"}
    | {"rustfmt", "prettier", "eslint", "clang-format", "shfmt", "cargo"}
)
"""Programs that rewrite source files (unless asked only to ``--check``)."""
_GIT_WRITES = frozenset(
    {"checkout", "switch", "reset", "restore", "apply", "am", "merge", "rebase", "pull"}
    | {"stash", "clean", "cherry-pick", "revert", "rm", "mv", "clone", "init", "worktree"}
    | {"submodule"}
)
_GIT_VALUED = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace"})
_IN_PLACE_FLAG = re.compile(r"^-[a-zA-Z]*i|^--in-place")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def change_of(tool: str, arguments: Mapping[str, Any], folder: Path) -> str | None:
    """What the call changes inside ``folder`` (a resolved path), to name it in the
    checkpoint: the file, the command or the tool; None when it changes nothing there."""
    if tool in FILE_TOOLS:
        path = arguments.get("path")
        if not isinstance(path, str) or not path:
            return None
        return _inside(path, folder, folder)
    if tool in SCRIPT_TOOLS:
        return "(a script)"
    if tool in SHELL_TOOLS:
        command = arguments.get("command")
        if not isinstance(command, str) or not command.strip():
            return None
        workdir = arguments.get("workdir")
        base = _resolve(workdir, folder) if isinstance(workdir, str) and workdir else folder
        if not command_writes(command, base, folder):
            return None
        return one_line(redact_text(command), 80)  # kept in the checkpoint's description
    return None


def _resolve(path: str, base: Path) -> Path:
    given = Path(os.path.expanduser(path))
    return Path(os.path.normpath(given if given.is_absolute() else base / given))


def _inside(path: str, base: Path, folder: Path) -> str | None:
    """``path`` relative to ``folder`` when it is inside it (unknown paths are)."""
    if "$" in path or "`" in path:
        return path
    resolved = _resolve(path, base)
    if resolved == folder:
        return "."
    if resolved.is_relative_to(folder):
        return resolved.relative_to(folder).as_posix()
    # A symbolic link on the way may still lead inside; resolving costs a few stats.
    real = Path(os.path.realpath(resolved))
    return real.relative_to(folder).as_posix() if real.is_relative_to(folder) else None


def command_writes(command: str, base: Path, folder: Path) -> bool:
    """Whether the shell ``command``, run in ``base``, visibly writes inside ``folder``."""
    return _writes(command, base, folder, depth=0)


def _writes(command: str, base: Path, folder: Path, depth: int) -> bool:
    if depth > 4:
        return True
    lexer = shlex.shlex(command.replace("\n", " ; "), posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        words = list(lexer)
    except ValueError:  # an unclosed quote: what it does cannot be told
        return True
    current: list[str] = []
    for word in [*words, ";"]:
        if word in _SEPARATORS:
            if current:
                wrote, base = _simple(current, base, folder, depth)
                if wrote:
                    return True
            current = []
        else:
            current.append(word)
    return False


def _simple(words: list[str], base: Path, folder: Path, depth: int) -> tuple[bool, Path]:
    """Whether one simple command writes inside ``folder``, and the folder the next runs in
    (``cd`` changes it)."""
    arguments: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        if ">" in word and set(word) <= set("<>&|"):  # a redirection, its target next
            target = words[index + 1] if index + 1 < len(words) else ""
            index += 2
            fd_copy = word.endswith("&") and (target.isdigit() or target == "-")
            if fd_copy or not target or target.startswith(_DEVICES):
                continue
            if _inside(target, base, folder) is not None:
                return True, base
            continue
        if set(word) <= set("<"):  # input: a file read, or a here-document's delimiter
            index += 2
            continue
        if word.isdigit() and index + 1 < len(words) and ">" in words[index + 1]:
            index += 1  # the descriptor of `2> file`
            continue
        arguments.append(word)
        index += 1
    while arguments and (_ASSIGNMENT.match(arguments[0]) or arguments[0] in _PREFIXES):
        arguments.pop(0)
        while arguments and arguments[0].startswith("-"):
            option = arguments.pop(0)  # the prefix's options, read loosely
            if option in _PREFIX_VALUED and arguments:
                arguments.pop(0)
        if arguments and arguments[0].replace(".", "").isdigit():
            arguments.pop(0)  # timeout 5, nice 10
    if not arguments:
        return False, base
    program, rest = os.path.basename(arguments[0]), arguments[1:]
    if program == "cd":
        targets = [a for a in rest if not a.startswith("-")]
        if not targets:
            return False, Path.home()
        if "$" in targets[0] or targets[0] == "-":
            return False, base
        return False, _resolve(targets[0], base)
    if program in _SHELLS or program == "eval":
        code = _shell_code(program, rest)
        if code is not None:
            return _writes(code, base, folder, depth + 1), base
        return False, base
    if program in {"python", "python3"} and len(rest) >= 2 and rest[0] == "-m":
        program, rest = rest[1], rest[2:]
    if program in {"uv", "poetry", "pipx", "pnpm", "yarn", "npm"} and rest[:1] in (
        ["run"],
        ["exec"],
    ):
        if len(rest) < 2:
            return False, base
        program, rest = os.path.basename(rest[1]), rest[2:]
    return _program_writes(program, rest, base, folder), base


def _shell_code(program: str, rest: list[str]) -> str | None:
    if program == "eval":
        return " ".join(rest)
    for position, argument in enumerate(rest):
        if argument.startswith("-") and "c" in argument[1:] and not argument.startswith("--"):
            return rest[position + 1] if position + 1 < len(rest) else None
    return None


def _operands_inside(operands: list[str], base: Path, folder: Path) -> bool:
    paths = [o for o in operands if not o.startswith("-")]
    if not paths:
        return _inside(".", base, folder) is not None
    return any(_inside(operand, base, folder) is not None for operand in paths)


def _program_writes(program: str, rest: list[str], base: Path, folder: Path) -> bool:
    if program == "dd":
        targets = [a[3:] for a in rest if a.startswith("of=")]
        return any(_inside(t, base, folder) is not None for t in targets)
    if program in _WRITERS:
        return _operands_inside(rest, base, folder)
    if program in _IN_PLACE:
        return any(_IN_PLACE_FLAG.match(a) for a in rest) and _operands_inside(rest, base, folder)
    if program in _FORMATTERS:
        if any(a in {"--check", "--diff", "-l", "--list-different"} for a in rest):
            return False
        return _operands_inside(rest, base, folder)
    if program == "git":
        return _git_writes(rest, base, folder)
    if program == "find":
        actions = {"-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint"}
        if not actions.intersection(rest):
            return False
        roots = rest[: _first_option(rest)] or ["."]
        return any(_inside(root, base, folder) is not None for root in roots)
    if program in {"curl", "wget"}:
        return _download_writes(program, rest, base, folder)
    return False


def _first_option(words: list[str]) -> int:
    for position, word in enumerate(words):
        if word.startswith("-") or word in {"(", "!"}:
            return position
    return len(words)


def _git_writes(rest: list[str], base: Path, folder: Path) -> bool:
    index = 0
    where = base
    while index < len(rest) and rest[index].startswith("-"):
        option = rest[index]
        if option == "-C" and index + 1 < len(rest):
            where = _resolve(rest[index + 1], where)
        if option in _GIT_VALUED:
            index += 1
        index += 1
    if index >= len(rest) or rest[index] not in _GIT_WRITES:
        return False
    subcommand, tail = rest[index], rest[index + 1 :]
    if subcommand in {"stash", "worktree", "submodule"} and tail[:1] == ["list"]:
        return False
    return _inside(".", where, folder) is not None or (
        subcommand == "clone" and _operands_inside(tail[1:], where, folder)
    )


def _download_writes(program: str, rest: list[str], base: Path, folder: Path) -> bool:
    for position, argument in enumerate(rest):
        value = rest[position + 1] if position + 1 < len(rest) else ""
        if program == "curl" and argument in {"-o", "--output"}:
            return value != "-" and _inside(value, base, folder) is not None
        if program == "curl" and argument in {"-O", "--remote-name", "--remote-name-all"}:
            return _inside(".", base, folder) is not None
        if program == "wget" and argument in {"-O", "--output-document"}:
            return value != "-" and _inside(value, base, folder) is not None
        if program == "wget" and argument.startswith("-") and argument.endswith("O-"):
            return False  # wget -qO- prints
    return program == "wget" and _inside(".", base, folder) is not None
