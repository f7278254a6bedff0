"""@-references attached to a message before its turn, each said in one line: the one
place both shells (one-shot and interactive) do it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

__all__ = ["attach_references"]


async def attach_references(
    home: str,
    config: Mapping[str, Any],
    text: str,
    info: Callable[[str], None],
    warn: Callable[[str], None],
) -> str:
    """``text`` with its references' content attached (see ``hermes_commons.references``):
    the home's secrets redacted, its secret files refused."""
    from hermes_commons.references import home_guard, resolve

    resolved = await resolve(text, Path.cwd(), **home_guard(home, config))
    for problem, line in resolved.said():
        (warn if problem else info)(line)
    return resolved.text
