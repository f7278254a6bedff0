"""The folders other plugins contribute skills from (``hermes_skill_sources``): the kernel
hands their specs over in every context (``context.provided``); their folders are found here.

A source's ``factory()`` is called once per process (a hub mirror may take a while to
answer); one that raises is logged once and left out, and the other sources still count.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path

from hermes_sdk import Kind, SkillSourceSpec
from hermes_sdk.provided import ProvidedSpecs

__all__ = ["plugin_folders"]

log = logging.getLogger("hermes.skills")

_found: dict[SkillSourceSpec, Path | None] = {}
_lock = threading.Lock()  # tools run in worker threads, side by side


def _folder(spec: SkillSourceSpec) -> Path | None:
    with _lock:
        if spec in _found:
            return _found[spec]
        try:
            folder: Path | None = Path(spec.build())
        except Exception as exc:  # noqa: BLE001 - a broken source must not stop the tools
            log.warning("skill source %r failed: %s; its skills are left out", spec.name, exc)
            folder = None
        _found[spec] = folder
        return folder


def _home_folder(spec: SkillSourceSpec, home: str) -> Path | None:
    try:
        return Path(spec.build(home))
    except Exception as exc:  # noqa: BLE001 - a broken source must not stop the tools
        log.warning("skill source %r failed: %s; its skills are left out", spec.name, exc)
        return None


def plugin_folders(provided: ProvidedSpecs, home: str) -> list[tuple[str, Path]]:
    """(source name, folder) for every skill source the loaded plugins provide; ``home``
    is HERMES_HOME, for the sources kept per home."""
    found = []
    for spec in provided.of(Kind.SKILL_SOURCE):
        if not isinstance(spec, SkillSourceSpec):
            continue
        folder = _home_folder(spec, home) if spec.per_home else _folder(spec)
        if folder is not None:
            found.append((spec.name, folder))
    return found
