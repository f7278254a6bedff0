"""The slash commands that are the terminal's own: what only a terminal does (leave, attach
a file, show more) or shows its own way. Every other command (``/new``, ``/model``, a
plugin's ...) is the runtime's, run through ``Runtime.run_slash`` as in every front-end; the
runtime refuses a plugin's that takes a reserved name
(``hermes_sdk.runtime.RESERVED_SLASH_NAMES``: these but the fallbacks, and its own)."""

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
    Builtin("resume", "/resume [ID]", "continue a stored session (default: the last one)"),
    Builtin("sessions", "/sessions", "the recent sessions", during_turn=True),
    Builtin("retry", "/retry", "ask the last message again"),
    Builtin("skills", "/skills", "the installed skill sources", during_turn=True, fallback=True),
    Builtin("memory", "/memory", "the memory provider in use", during_turn=True, fallback=True),
    Builtin("image", "/image PATH", "send this image with your next message", during_turn=True),
    Builtin(
        "file",
        "/file PATH",
        "send this file (PDF, DOCX, audio ...) with your next message",
        during_turn=True,
    ),
    Builtin("verbose", "/verbose", "show whole tool results (toggle)", during_turn=True),
    Builtin("history", "/history", "this conversation, its exchanges numbered (for /branch N)"),
    Builtin("save", "/save [PATH]", "save this conversation as Markdown", during_turn=True),
    Builtin("copy", "/copy", "copy the last reply to the clipboard", during_turn=True),
    Builtin("clear", "/clear", "clear the screen and start a fresh conversation"),
    Builtin("quit", "/quit", "leave (Ctrl+D does too)", during_turn=True),
    Builtin("exit", "/exit", "the same as /quit", during_turn=True),
)


def split_command(line: str) -> tuple[str, str]:
    """``/model openai gpt-4o`` -> ("model", "openai gpt-4o")."""
    name, _, args = line[1:].strip().partition(" ")
    return name.lower(), args.strip()
