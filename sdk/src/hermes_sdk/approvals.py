"""The approval gate's contract with the rules that judge commands.

The kernel's gate passes every command a tool runs (and every file a file tool writes, as
``: > PATH``) to the installed :class:`CommandRules`, takes the strictest
:class:`Verdict`, and then applies the user's ``approvals`` settings. The rules themselves
are a plugin (the standard bundle's ``approvals``), provided through
:class:`~hermes_sdk.specs.CommandRulesSpec`. With none installed, nothing runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Protocol

__all__ = ["ALLOWED", "CommandRules", "Level", "Verdict"]


class Level(IntEnum):
    ALLOW = 0
    ASK = 1
    BLOCK = 2
    """The hardline floor: refused in every mode, whatever the user allowed."""


@dataclass(frozen=True)
class Verdict:
    level: Level
    rule: str = ""
    """A short name users allow by (``approvals.allow: [recursive-delete]``)."""
    reason: str = ""
    """What the command does, completing "this command ...": shown to the user and model."""
    guarded: bool = False
    """Asked every time: no mode, ``--yolo``, allow rule, session answer or isolated
    backend lifts it (Hermes's own state), and refused where nobody can be asked."""

    @property
    def weight(self) -> tuple[int, bool]:
        """How strict it is: a block, then a guarded ask, then an ask."""
        return (int(self.level), self.guarded)


ALLOWED = Verdict(Level.ALLOW)


class CommandRules(Protocol):
    """A rule set, built by a :class:`~hermes_sdk.specs.CommandRulesSpec`'s factory."""

    def classify(self, command: str, hermes_home: str) -> Verdict:
        """Judge one shell command. ``hermes_home`` is the home's real path (writes into it
        are Hermes's own state). Must not raise for any text: what cannot be read is asked."""
        ...

    def normalize(self, command: str) -> str:
        """The command with quotes, escapes and harmless prefixes resolved, lower-cased:
        what the user's ``approvals.allow`` / ``approvals.deny`` globs are also matched
        against."""
        ...
