"""What an import did: per kind of thing, what came over, what was already there, and what
was left behind with the reason. Printed at the end, and as JSON with ``--json``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Section:
    """One kind of thing (sessions, memory entries, skills ...) in one home."""

    kind: str
    added: list[str] = field(default_factory=list)
    already: list[tuple[str, str]] = field(default_factory=list)
    left_out: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    count: int | None = None
    """How many came over, when ``added`` does not list them one by one (sessions)."""

    def add(self, what: str) -> None:
        self.added.append(what)

    def skip(self, what: str, why: str) -> None:
        self.already.append((what, why))

    def left(self, what: str, why: str) -> None:
        self.left_out.append((what, why))

    def note(self, text: str) -> None:
        self.notes.append(text)

    @property
    def imported(self) -> int:
        return self.count if self.count is not None else len(self.added)

    def as_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "imported": self.imported,
            "added": self.added,
            "already_there": [{"what": w, "why": y} for w, y in self.already],
            "left": [{"what": w, "why": y} for w, y in self.left_out],
            "notes": self.notes,
        }


@dataclass
class HomeReport:
    """The import of one home (the base home, or one profile)."""

    source: str
    target: str
    profile: str | None = None
    sections: list[Section] = field(default_factory=list)

    def section(self, section: Section) -> Section:
        self.sections.append(section)
        return section

    def as_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "target": self.target,
            "profile": self.profile,
            "sections": [s.as_json() for s in self.sections],
        }


def render(homes: list[HomeReport], dry_run: bool, details: bool) -> list[str]:
    """The report as lines: counts first, then what was left and why (always), and with
    ``details`` every item that came over."""
    verb = "would come over" if dry_run else "came over"
    lines: list[str] = []
    for home in homes:
        title = f"profile {home.profile}" if home.profile else "home"
        lines.append(f"{title}: {home.source} -> {home.target}")
        for section in home.sections:
            if not (section.imported or section.already or section.left_out or section.notes):
                continue
            counts = [f"{section.imported} {verb}"]
            if section.already:
                counts.append(f"{len(section.already)} already here")
            if section.left_out:
                counts.append(f"{len(section.left_out)} left")
            lines.append(f"  {section.kind}: {', '.join(counts)}")
            if details:
                lines += [f"    + {what}" for what in section.added]
                lines += [f"    = {what}: {why}" for what, why in section.already]
            lines += [f"    - {what}: {why}" for what, why in section.left_out]
            lines += [f"    note: {note}" for note in section.notes]
    return lines
