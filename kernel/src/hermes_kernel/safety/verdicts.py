"""What a command check decides, apart from the checks themselves: the approval layer needs
these to exist from start-up, while the rules (:mod:`.commands`: a shell grammar and some
twenty patterns) load with the first command checked."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

__all__ = ["ALLOWED", "Level", "Verdict"]


class Level(IntEnum):
    ALLOW = 0
    ASK = 1
    BLOCK = 2


@dataclass(frozen=True)
class Verdict:
    level: Level
    rule: str = ""
    reason: str = ""


ALLOWED = Verdict(Level.ALLOW)
