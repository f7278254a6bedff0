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
    guarded: bool = False
    """Asked every time: no mode, ``--yolo``, allow rule, session answer or isolated
    backend lifts it (Hermes's own state), and refused where nobody can be asked."""

    @property
    def weight(self) -> tuple[int, bool]:
        """How strict it is: a block, then a guarded ask, then an ask."""
        return (int(self.level), self.guarded)


ALLOWED = Verdict(Level.ALLOW)
