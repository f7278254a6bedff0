"""Where a hermes-agent plugin is, as the finder tells the guest loader (the argument the
kernel passes to :func:`~hermes_plugin_compat_hermes_agent.guest.build`, also across to a
plugin host process), and the names Hermes accepts. Kept apart from the loader so that
finding plugins imports nothing of it."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

__all__ = ["HERMES_NAME", "Where", "hermes_name"]

HERMES_NAME = re.compile(r"^[a-z][a-z0-9_-]{0,63}$")


@dataclass(frozen=True)
class Where:
    """Where a plugin is and how to load it."""

    name: str
    home: str
    entry_point: str = ""  # "module" or "module:attr" (group hermes_agent.plugins)
    folder: str = ""  # a folder plugin: HERMES_HOME/plugins/NAME
    memory: bool = False  # a memory provider (memory.provider selects it)
    version: str = ""
    description: str = ""

    def encode(self) -> str:
        return json.dumps(self.__dict__, sort_keys=True)

    @classmethod
    def decode(cls, text: str) -> Where:
        return cls(**json.loads(text))


def hermes_name(name: str) -> str | None:
    """``name`` as a Hermes name (lower case; ``.``, ``:`` and spaces as ``-``): hermes-agent
    accepts ``/memento.init``, Hermes's names are ``[a-z][a-z0-9_-]*``. None if it cannot be
    one."""
    clean = re.sub(r"[.:\s/]+", "-", name.strip().lower()).strip("-")
    return clean if HERMES_NAME.fullmatch(clean) else None
