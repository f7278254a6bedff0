"""The slash commands of the interactive chat: the built-in table. Plugins add their own
through ``hermes_slash_commands``; the runtime refuses one that takes a reserved name
(``hermes_sdk.runtime.RESERVED_SLASH_NAMES``: the built-ins below but the fallbacks)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Builtin:
    name: str
    usage: str
    help: str
    during_turn: bool = False
    """Usable while a turn runs (it does not change the session or the model)."""
    fallback: bool = False
    """Only for when no plugin offers the command: a plugin's ``/NAME`` replaces it (the
    memory and skills plugins' commands do more than list what is installed)."""


BUILTINS: tuple[Builtin, ...] = (
    Builtin("help", "/help", "this list", during_turn=True),
    Builtin("new", "/new", "start a fresh session (the current one is kept)"),
    Builtin("reset", "/reset", "the same as /new"),
    Builtin("resume", "/resume [ID]", "continue a stored session (default: the last one)"),
    Builtin("sessions", "/sessions", "the recent sessions", during_turn=True),
    Builtin("model", "/model [PROVIDER] [MODEL]", "show or switch the model"),
    Builtin("usage", "/usage", "tokens and cost of this session", during_turn=True),
    Builtin("tools", "/tools", "the tools the model has", during_turn=True),
    Builtin("skills", "/skills", "the installed skill sources", during_turn=True, fallback=True),
    Builtin("memory", "/memory", "the memory provider in use", during_turn=True, fallback=True),
    Builtin("compact", "/compact [FOCUS]", "make room: older messages become a summary"),
    Builtin("image", "/image PATH", "send this image with your next message", during_turn=True),
    Builtin(
        "file",
        "/file PATH",
        "send this file (PDF, DOCX, audio ...) with your next message",
        during_turn=True,
    ),
    Builtin("stop", "/stop", "stop the running turn (as Ctrl+C does)", during_turn=True),
    Builtin("retry", "/retry", "ask the last message again"),
    Builtin("undo", "/undo", "remove the last message and the reply to it"),
    Builtin("title", "/title [TEXT]", "show or set the session's title"),
    Builtin("verbose", "/verbose", "show whole tool results (toggle)", during_turn=True),
    Builtin("yolo", "/yolo", "run dangerous commands without asking (toggle)", during_turn=True),
    Builtin("quit", "/quit", "leave (Ctrl+D does too)", during_turn=True),
    Builtin("exit", "/exit", "the same as /quit", during_turn=True),
)
BUILTIN_NAMES = frozenset(command.name for command in BUILTINS)


def split_command(line: str) -> tuple[str, str]:
    """``/model openai gpt-4o`` -> ("model", "openai gpt-4o")."""
    name, _, args = line[1:].strip().partition(" ")
    return name.lower(), args.strip()
