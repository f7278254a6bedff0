"""Hermes's own state is the user's, not the agent's: a ``hermes`` command that changes it
(approves a pairing, sets config, installs a plugin, sends a message, schedules a job,
starts a nested agent with ``--yolo``, installs a service, restores a backup ...) is
guarded. A guarded command is asked about every time, whatever the mode, ``--yolo``, an
allow rule or an isolated backend would say, and refused where nobody can be asked.

It is read however it is spelled: a path to the program (``./scripts/hermes``), global
options before the command (``--home X``, ``-p NAME``), a launcher (``uv run hermes``,
``pipx run``), or a literal command an interpreter's subprocess runs (the shell grammar
hands those here like any other command). What is allowed is known by its verb, whichever
plugin's command it is (``list``, ``show``, ``status``, ``get`` ...: they only read);
everything else is guarded, so a new command that changes something is guarded without
being named here.
"""

from __future__ import annotations

import re

from hermes_plugin_approvals.shell import Command
from hermes_sdk.approvals import Level, Verdict

__all__ = ["check_hermes_state", "hermes_argv"]

_PROGRAMS = frozenset({"hermes"})
_LAUNCHERS = {"uv": ("run",), "uvx": (), "pipx": ("run",), "poetry": ("run",), "pdm": ("run",)}
_GLOBAL_VALUED = frozenset({"--home", "-p", "--profile", "-z"})
_READING_COMMANDS = frozenset({"doctor", "logs", "status", "insights", "version", "model"})
"""Commands that only read when given no subcommand (``hermes model`` shows the model)."""
_READING_VERBS = frozenset(
    {"list", "show", "status", "get", "path", "validate", "info", "catalog", "search", "view"}
    | {"check", "diff", "pending", "history", "runs", "stats", "where", "test"}
)
"""Subcommands that only read, whichever command they belong to."""
_HELP = frozenset({"--help", "-h", "--version"})


def hermes_argv(command: Command) -> list[str] | None:
    """The arguments a ``hermes`` program gets from ``command`` (after the program name),
    or None when it does not run Hermes."""
    words = command.words
    if not words:
        return None
    name = words[0]
    if name in _LAUNCHERS:
        rest = words[1:]
        for verb in _LAUNCHERS[name]:
            if not rest or rest[0] != verb:
                return None
            rest = rest[1:]
        while rest and rest[0].startswith("-"):
            rest = rest[2:] if rest[0] in ("--with", "--from", "--python", "-p") else rest[1:]
        if not rest:
            return None
        words = [rest[0].rsplit("/", 1)[-1].lower(), *rest[1:]]
        name = words[0]
    return words[1:] if name in _PROGRAMS else None


def _reason(argv: list[str]) -> str | None:
    """Why this ``hermes`` command line changes Hermes's state or power; None if it only
    reads."""
    rest = list(argv)
    yolo = "--yolo" in rest
    one_shot = False
    while rest and rest[0].startswith("-"):
        option = rest.pop(0)
        if option in _HELP:
            return None
        if option == "-z":
            one_shot = True
        if option in _GLOBAL_VALUED and rest:
            rest.pop(0)
    nested = "starts another agent (a nested Hermes" + (", without approvals)" if yolo else ")")
    if one_shot or not rest:
        return nested  # -z TEXT, or the interactive chat
    if any(word in _HELP for word in rest):
        return None
    command, sub = rest[0], [w for w in rest[1:] if not w.startswith("-")]
    if command == "chat":
        return nested
    if (not sub and command in _READING_COMMANDS) or (sub and sub[0] in _READING_VERBS):
        return None
    what = " ".join([command, *sub[:1]])
    return f"changes Hermes's own state or settings (hermes {what})"


_KERNEL_MODULE = re.compile(r"\bhermes_kernel\b")


def _another_name(command: Command) -> str | None:
    """Why ``command`` makes or uses another name for the ``hermes`` program (an alias, a
    link or copy of it, its module run by an interpreter), so that the rules above would
    not see it; None otherwise."""
    name, args = command.name, command.args
    if name == "alias" and any(
        a.partition("=")[2].split(" ", 1)[0].rsplit("/", 1)[-1] in _PROGRAMS for a in args
    ):
        return "defines another name for hermes (an alias)"
    if name in ("ln", "cp", "install", "mv"):
        sources = [a for a in args if not a.startswith("-")][:-1]
        found = [w for inner in command.dynamic for c in inner for w in c.words]
        if any(w.rstrip("/").rsplit("/", 1)[-1] in _PROGRAMS for w in sources + found):
            return "makes another name for the hermes program (a link or copy)"
    if name.startswith(("python", "pypy")) and any(_KERNEL_MODULE.search(a) for a in args):
        return "runs Hermes's own code from an interpreter"
    return None


def check_hermes_state(command: Command) -> Verdict | None:
    """The guarded verdict of a ``hermes`` command that changes Hermes, else None."""
    if (why := _another_name(command)) is not None:
        return Verdict(Level.ASK, "hermes-state", why, guarded=True)
    argv = hermes_argv(command)
    if argv is None:
        return None
    reason = _reason(argv)
    if reason is None:
        return None
    return Verdict(Level.ASK, "hermes-state", reason, guarded=True)
