"""Bringing another tool's home into this one: the importer contract.

``hermes import SOURCE [PATH]`` is the kernel's command. It finds the importer that a plugin
yields for SOURCE (``hermes_importers``), checks the source, shows a preview and asks (unless
``--yes``), runs the import, and prints the report (``--details``, ``--json``). The importer
brings over what belongs to no plugin (settings, secrets, sessions) and hands each home to
``ImportRequest.import_parts``: every plugin that keeps files of its own in a home brings
those over itself (``hermes_import_home``), under its own locks and in its own format: the
scheduler its jobs, memory its entries, skills their folders. A plugin never writes another's
files, so a second importer (from another tool) reuses them all.

Every part reads the source and writes only in the target, and only what the target lacks,
so an import run again brings only what is new.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from hermes_sdk.archive import SessionArchive

__all__ = [
    "HomeImport",
    "ImportRefused",
    "ImportRequest",
    "ImportSection",
    "ImportedHome",
    "Importer",
]


class ImportRefused(Exception):
    """The import cannot start: one line saying why and what to do."""


@dataclass
class ImportSection:
    """One kind of thing (sessions, memory entries, skills ...) in one imported home: what
    came over, what was there already, and what was left behind with the reason."""

    kind: str
    added: list[str] = field(default_factory=list)
    already: list[tuple[str, str]] = field(default_factory=list)
    left_out: list[tuple[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    count: int | None = None
    """How many came over, when ``added`` does not list them one by one (sessions)."""
    reads: list[str] = field(default_factory=list)
    """The top-level files and folders of the source home this section covers (``cron``),
    so the importer's list of what nothing brought over leaves them out."""

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
class ImportedHome:
    """The import of one home (the base home, or one of its profiles)."""

    source: str
    target: str
    profile: str | None = None
    sections: list[ImportSection] = field(default_factory=list)

    def section(self, section: ImportSection) -> ImportSection:
        self.sections.append(section)
        return section

    def as_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "target": self.target,
            "profile": self.profile,
            "sections": [s.as_json() for s in self.sections],
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class HomeImport:
    """What ``hermes_import_home`` is asked: bring your own files over from ``source`` (a
    home of the tool ``source_kind`` names, e.g. ``"hermes-agent"``) into ``target``."""

    source_kind: str
    source: str
    target: str
    config: Mapping[str, Any] = field(default_factory=dict)
    """The target's config.yaml as it reads once the import's settings are in (read your
    section for limits such as a memory budget)."""
    dry_run: bool = False
    """Say what would come over; write nothing."""
    include_sign_ins: bool = False
    """Bring sign-ins' tokens over too (``--include-sign-ins``: they are the user's to
    move); without it, say how to sign in again."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ImportRequest:
    """What an importer's ``run`` gets from ``hermes import``."""

    source: Path
    target: Path
    dry_run: bool
    open_archive: Callable[[str], AbstractContextManager[SessionArchive]]
    """``with request.open_archive(home) as archive:`` the store of ``home`` (the target, or
    one of its profiles), for sessions and paired users (:mod:`hermes_sdk.archive`)."""
    import_parts: Callable[[HomeImport], list[ImportSection]]
    """Every installed plugin's ``hermes_import_home`` sections for one home, in plugin name
    order; a plugin that failed is a section of its own saying so."""
    include_sign_ins: bool = False
    """``--include-sign-ins``: pass it on in each :class:`HomeImport`."""


class Importer(Protocol):
    """What an :class:`~hermes_sdk.specs.ImporterSpec` factory builds.

    It may also have ``recognize(home: Path) -> str | None``: when the kernel meets a home it
    cannot read as its own (as HERMES_HOME: a config.yaml with keys it does not know, or a
    state.db that is not its), it asks each importer; one that answers with the evidence, a
    short phrase ("its config.yaml has that tool's keys a, b"), makes every command say in one
    line that this is that tool's home and how to import it. Quick and read-only. Without
    it, :meth:`detect` decides and the evidence is generic."""

    def detect(self, path: Path) -> bool:
        """Whether ``path`` looks like a home of this importer's source (quick, read-only)."""

    def check(self, source: Path, target: Path) -> None:
        """Raise :class:`ImportRefused` (one line) if ``source`` cannot be imported into
        ``target``: missing, not this tool's, or the target itself."""

    def run(self, request: ImportRequest) -> list[ImportedHome]:
        """Import (or, with ``request.dry_run``, say what would come over) and return one
        report per home. Raise :class:`ImportRefused` or OSError (one line) to stop."""
