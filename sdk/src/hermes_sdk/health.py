"""What a plugin says about its own part of a Hermes home: lines for ``hermes status``
(``hermes_status_lines``) and findings for ``hermes doctor`` (``hermes_doctor_checks``).

The kernel reads no plugin's files or config keys: a scheduler reports its jobs, an MCP
client its servers, a gateway its platforms, each through these hooks. Both are called by
one command, never during a session, and only the plugins that declare them are imported.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from hermes_sdk.provided import ProvidedSpecs

__all__ = ["ONLINE_SECONDS", "Finding", "HealthContext", "Level", "StatusLine"]

ONLINE_SECONDS = 45.0
"""How long ``hermes doctor --online`` gives each plugin's checks (offline: the usual hook
deadline)."""

Level = Literal["ok", "warning", "error"]
"""How a doctor finding stands: fine, worth a look, or broken (``hermes doctor`` exits 1)."""

_LEVELS: tuple[Level, ...] = ("ok", "warning", "error")


def _one_line(what: str, text: object) -> None:
    if not isinstance(text, str) or not text.strip() or "\n" in text:
        raise ValueError(f"{what} must be one line of text, got {text!r}")


@dataclass(frozen=True, slots=True, kw_only=True)
class HealthContext:
    """What a status or doctor contribution knows about this Hermes."""

    home: str
    """HERMES_HOME (a profile's, when one is chosen): where the plugin's own files are."""
    config: Mapping[str, Any] = field(default_factory=dict)
    """config.yaml as loaded (secrets live in .env, never here); read your own section."""
    secrets: Mapping[str, str] = field(default_factory=dict)
    """Environment variables and HERMES_HOME/.env, to tell whether a key is set. Never show
    these values."""
    provided: ProvidedSpecs = field(default_factory=ProvidedSpecs)
    """What plugins provide (loaded when first asked for), for a check that needs another
    plugin's part: the model router's check asks for the model clients."""
    online: bool = False
    """``hermes doctor --online``: a check may reach out (one model request, a server's
    health endpoint) and should take no longer than :data:`ONLINE_SECONDS`; without it,
    checks stay on this machine."""


@dataclass(frozen=True, slots=True, kw_only=True)
class StatusLine:
    """One entry of ``hermes status``: ``label`` in the left column (a word or two:
    ``"Jobs"``, ``"MCP"``), ``text`` beside it, and each of ``details`` on a line of its own
    below, indented (one per server, platform, ...)."""

    label: str
    text: str
    details: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        _one_line("a status line's label", self.label)
        _one_line(f"status line {self.label!r}: text", self.text)
        if not isinstance(self.details, tuple):
            raise ValueError(f"status line {self.label!r}: details must be a tuple of lines")
        for detail in self.details:
            _one_line(f"status line {self.label!r}: each detail", detail)


@dataclass(frozen=True, slots=True, kw_only=True)
class Finding:
    """One result of a ``hermes doctor`` check: ``message`` says what was found, ``fix`` (for
    a warning or an error) the command or edit that mends it."""

    level: Level
    message: str
    fix: str = ""

    def __post_init__(self) -> None:
        if self.level not in _LEVELS:
            raise ValueError(f"a finding's level must be one of {_LEVELS}, got {self.level!r}")
        if not isinstance(self.message, str) or not self.message.strip():
            raise ValueError(f"a finding's message must be text, got {self.message!r}")
        if not isinstance(self.fix, str):
            raise ValueError(f"finding {self.message!r}: fix must be text, got {self.fix!r}")

    def as_dict(self) -> dict[str, str]:
        """The finding as ``hermes doctor --json`` prints it."""
        return {"level": self.level, "message": self.message, "fix": self.fix}
