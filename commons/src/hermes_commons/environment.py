"""The environment a plugin gives a program it starts (an MCP server, a browser): the
variables a program needs to run (where things are, the language, the time zone) and
none that may hold a key. Hermes's own environment can hold API keys the user exported;
a child that needs one is given it by name."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping

__all__ = ["SAFE_VARIABLES", "safe_environment"]

SAFE_VARIABLES = frozenset(
    {"PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TERM", "SHELL", "TMPDIR", "TZ"}
)
"""Inherited by name; ``LC_*`` and ``XDG_*`` are too. Never a key."""


def safe_environment(
    also: Iterable[str] = (), environ: Mapping[str, str] | None = None
) -> dict[str, str]:
    """The safe part of ``environ`` (this process's by default), and the variables named in
    ``also`` where set (``DISPLAY`` for a window, say)."""
    source = os.environ if environ is None else environ
    wanted = SAFE_VARIABLES | set(also)
    return {
        name: value
        for name, value in source.items()
        if name in wanted or name.startswith(("LC_", "XDG_"))
    }
