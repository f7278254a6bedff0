"""The curator: keeps ``HERMES_HOME/skills`` from filling with skills the agent wrote once
and never used again.

Only skills the agent wrote (skill_manage create, counted in :mod:`usage`) are its to
archive: never a skill you wrote or edited by hand, a bundled one, one from the hub (those
live elsewhere) or one you pinned. A skill is stale when nothing viewed, used or changed it
for ``skills.curator.archive_after_days``. Archiving moves its folder, byte for byte, under
``skills/.archive/`` at the same relative path, where the index does not read it;
``restore`` moves it back. Skills that say nearly the same thing are offered to you as a
merge through the pending-changes queue (``hermes skills pending``): approving one writes
the merged SKILL.md and archives the other.

The automatic run happens at the start of a session at most every
``skills.curator.interval_hours``; ``hermes skills curator run`` runs it now.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from hermes_commons.files import atomic_write_bytes, atomic_write_text
from hermes_commons.locks import FileLock, LockTimeout
from hermes_commons.skill_md import Skill
from hermes_plugin_skills.library import Library
from hermes_plugin_skills.manage import Change, SkillRefused
from hermes_plugin_skills.settings import CuratorSettings
from hermes_plugin_skills.usage import Record, Usage

__all__ = ["Curator", "Report"]

DAY = 86_400.0
ARCHIVE = ".archive"
SIMILAR = 0.6
"""Share of description words two skills have in common to be offered as a merge."""
_WORD = re.compile(r"[a-z0-9]{3,}")
_COMMON = {"the", "and", "for", "with", "when", "how", "use", "using", "from", "that", "this"}


_last_runs: dict[Path, tuple[tuple[int, int], float]] = {}
"""The curator's state files read by this process: ((mtime, inode), the last run's time)."""


@dataclass
class Report:
    checked: int = 0
    archived: list[str] = field(default_factory=list)
    kept_pinned: list[str] = field(default_factory=list)
    merges: list[tuple[str, str, str]] = field(default_factory=list)
    """(kept, merged into it, the proposal's id or "" on a dry run)."""

    def lines(self) -> list[str]:
        lines = [f"checked {self.checked} agent-written skills"]
        lines += [
            f"archived {name} (restore it with: hermes skills curator restore {name})"
            for name in self.archived
        ]
        lines += [f"kept {name}: pinned" for name in self.kept_pinned]
        for kept, merged, proposal in self.merges:
            where = f" as {proposal}: hermes skills diff {proposal}" if proposal else ""
            lines.append(f"proposed merging {merged} into {kept}{where}")
        return lines


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _COMMON}


def _bundled_names(root: Path) -> set[str]:
    try:
        files = json.loads((root / ".bundled.json").read_text(encoding="utf-8")).get("files", {})
    except (OSError, ValueError, AttributeError):
        return set()
    return {name.split("/", 1)[0] for name in files}


class Curator:
    def __init__(self, root: Path, settings: CuratorSettings) -> None:
        self.root = root
        self.settings = settings
        self.usage = Usage(root)
        self.archive_root = root / ARCHIVE
        self.state_path = root / ".curator" / "state.json"

    # --- who is whose -------------------------------------------------------------------

    def own(self, library: Library) -> list[Skill]:
        """The skills of the user folder, the only ones the curator looks at."""
        return [s for s in library.skills.values() if library.is_writable(s)]

    def agent_written(self, library: Library, records: dict[str, Record]) -> list[Skill]:
        bundled = _bundled_names(self.root)
        return [
            skill
            for skill in self.own(library)
            if records.get(skill.name, {}).get("created_by") == "agent"
            and skill.folder.name not in bundled
        ]

    # --- the run ------------------------------------------------------------------------

    def due(self, now: float | None = None) -> bool:
        """Whether the automatic run is due: asked at every session's start, so the last
        run's time is read again only when its file changed."""
        if not self.settings.enabled:
            return False
        try:
            found = self.state_path.stat()
            stamp = (found.st_mtime_ns, found.st_ino)
            known = _last_runs.get(self.state_path)
            if known is not None and known[0] == stamp:
                last = known[1]
            else:
                data = json.loads(self.state_path.read_text(encoding="utf-8"))
                last = float(data["last_run_at"])
                _last_runs[self.state_path] = (stamp, last)
        except (OSError, ValueError, KeyError, TypeError):
            return True
        return (now or time.time()) - last >= self.settings.interval_hours * 3600

    def run(self, library: Library, *, dry_run: bool = False, now: float | None = None) -> Report:
        now = now or time.time()
        report = Report()
        with contextlib.suppress(LockTimeout), FileLock(self.root / ".curator" / "run.lock", 0):
            records = self.usage.read()
            candidates = self.agent_written(library, records)
            report.checked = len(candidates)
            active: list[Skill] = []
            for skill in candidates:
                record = records.get(skill.name, {})
                if record.get("pinned"):
                    report.kept_pinned.append(skill.name)
                    active.append(skill)
                    continue
                if (
                    now - self._last_activity(skill, record)
                    >= self.settings.archive_after_days * DAY
                ):
                    if not dry_run:
                        self.archive(library, skill.name)
                    report.archived.append(skill.name)
                else:
                    active.append(skill)
            report.merges = self._merges(active, records, dry_run)
            if not dry_run:
                atomic_write_text(self.state_path, json.dumps({"last_run_at": now}))
        return report

    def _last_activity(self, skill: Skill, record: Record) -> float:
        times = [
            float(record[key])
            for key in (
                "last_used_at",
                "last_viewed_at",
                "patched_at",
                "created_at",
                "restored_at",
                "first_seen_at",
            )
            if isinstance(record.get(key), (int, float))
        ]
        with contextlib.suppress(OSError):
            times.append(skill.path.stat().st_mtime)  # an edit by hand counts as a change
        return max(times) if times else time.time()

    def _merges(
        self, active: list[Skill], records: dict[str, Record], dry_run: bool
    ) -> list[tuple[str, str, str]]:
        from hermes_plugin_skills import proposals

        waiting = {
            frozenset((str(p.payload.get("skill")), str(p.payload.get("archive_after"))))
            for p in proposals.pending(self.root)
            if p.payload.get("archive_after")
        }
        merges: list[tuple[str, str, str]] = []
        taken: set[str] = set()
        ordered = sorted(active, key=lambda s: -int(records.get(s.name, {}).get("uses", 0)))
        for index, kept in enumerate(ordered):
            for other in ordered[index + 1 :]:
                if {kept.name, other.name} & taken or records.get(other.name, {}).get("pinned"):
                    continue
                if self._kept_apart(records, kept.name, other.name):
                    continue
                a, b = _words(kept.description), _words(other.description)
                if not a or not b or len(a & b) / len(a | b) < SIMILAR:
                    continue
                taken |= {kept.name, other.name}
                if frozenset((kept.name, other.name)) in waiting:
                    continue
                proposal = (
                    ""
                    if dry_run
                    else proposals.propose(self.root, self._merge(kept, other), "curator")
                )
                merges.append((kept.name, other.name, proposal))
        return merges

    @staticmethod
    def _kept_apart(records: dict[str, Record], one: str, other: str) -> bool:
        """Whether you said no to merging these two (rejected it, or restored one)."""
        return other in records.get(one, {}).get("separate_from", []) or one in records.get(
            other, {}
        ).get("separate_from", [])

    def keep_apart(self, one: str, other: str) -> None:
        """Never propose merging ``one`` into ``other`` again."""

        def mark(record: Record) -> None:
            record["separate_from"] = sorted({*record.get("separate_from", []), other})

        self.usage.update(one, mark)

    def _merge(self, kept: Skill, merged: Skill) -> Change:
        from hermes_plugin_skills.manage import _hash

        text = kept.path.read_text(encoding="utf-8").rstrip("\n")
        text += f"\n\n## Also: {merged.name}\n\n{merged.description}\n\n{merged.instructions()}\n"
        place = kept.folder.resolve().relative_to(self.root.resolve()).as_posix()
        return Change(
            "edit",
            kept.name,
            {"SKILL.md": text},
            base={"SKILL.md": _hash(kept.path)},
            archive_after=merged.name,
            folder=place if place != kept.name else None,
        )

    # --- one skill ----------------------------------------------------------------------

    def _own_skill(self, library: Library, name: str) -> Skill:
        skill = library.skills.get(name)
        if skill is None or not library.is_writable(skill):
            raise SkillRefused(f"{name!r} is not one of the skills in {self.root}")
        return skill

    def set_pinned(self, library: Library, name: str, pinned: bool) -> str:
        self._own_skill(library, name)
        self.usage.update(name, lambda record: record.update(pinned=pinned))
        return f"{'pinned' if pinned else 'unpinned'} {name}"

    def archive(self, library: Library, name: str) -> str:
        skill = self._own_skill(library, name)
        relative = skill.folder.relative_to(self.root)
        target = self.archive_root / relative
        if target.exists():
            target = target.with_name(f"{target.name}-{time.strftime('%Y%m%d%H%M%S')}")
        target.parent.mkdir(parents=True, exist_ok=True)
        skill.folder.rename(target)  # the same file system: a move keeps every byte

        def mark(record: Record) -> None:
            record.update(
                state="archived",
                archived_at=time.time(),
                archived_path=target.relative_to(self.archive_root).as_posix(),
                original_path=relative.as_posix(),
            )

        self.usage.update(name, mark)
        return f"archived {name} to {target}"

    def merged(self, name: str, into: str, into_folder: str, before: bytes) -> None:
        """``name`` was merged into ``into`` and archived: keep ``into``'s SKILL.md as it was,
        so restoring ``name`` undoes the whole merge."""
        backups = self.root / ".curator" / "backups"
        backup = backups / f"{into}-{time.time_ns()}.md"
        atomic_write_bytes(backup, before)
        now = hashlib.sha256((self.root / into_folder / "SKILL.md").read_bytes()).hexdigest()

        def mark(record: Record) -> None:
            record.update(
                merged_into=into,
                merge_undo={"folder": into_folder, "backup": backup.name, "merged_sha256": now},
            )

        self.usage.update(name, mark)

    def _undo_merge(self, record: Record) -> str:
        """Put the kept skill's SKILL.md back as it was before the merge, unless it was
        changed since (then the merged text stays, and the reply says so)."""
        undo = record.get("merge_undo")
        if not isinstance(undo, dict):
            return ""
        try:
            kept = self._inside(self.root, undo.get("folder")) / "SKILL.md"
            backup = self._inside(self.root / ".curator" / "backups", undo.get("backup"))
            if hashlib.sha256(kept.read_bytes()).hexdigest() != undo.get("merged_sha256"):
                return f"; {kept} changed since the merge, so it keeps the merged text"
            atomic_write_bytes(kept, backup.read_bytes())
        except (OSError, SkillRefused) as exc:
            return f"; the merge into {record.get('merged_into')} was not undone ({exc})"
        backup.unlink(missing_ok=True)
        return f"; {kept} is as it was before the merge"

    def archived(self) -> dict[str, Record]:
        return {n: r for n, r in self.usage.read().items() if r.get("state") == "archived"}

    def _inside(self, base: Path, relative: object) -> Path:
        """``base / relative`` for a path a record gives, refused unless it stays inside
        ``base`` (the records are a file anyone with the home can edit)."""
        if not isinstance(relative, str) or not relative.strip("/."):
            raise SkillRefused(f"the curator's record holds no usable path ({relative!r})")
        target = (base / relative).resolve()
        if not target.is_relative_to(base.resolve()) or target == base.resolve():
            raise SkillRefused(f"the curator's record points outside {base} ({relative!r})")
        return target

    def restore(self, name: str) -> str:
        record = self.archived().get(name)
        if record is None:
            known = ", ".join(sorted(self.archived())) or "none"
            raise SkillRefused(f"{name!r} is not archived (archived: {known})")
        source = self._inside(self.archive_root, record.get("archived_path"))
        target = self._inside(self.root, record.get("original_path"))
        if target.is_relative_to(self.archive_root.resolve()):
            raise SkillRefused(f"the curator's record would restore {name} into the archive")
        if not source.is_dir():
            raise SkillRefused(f"{source} is gone; nothing to restore")
        if target.exists():
            raise SkillRefused(f"{target} exists: move it away, then restore {name}")
        target.parent.mkdir(parents=True, exist_ok=True)
        source.rename(target)

        undone = self._undo_merge(record)

        def mark(record: Record) -> None:
            for key in ("state", "archived_at", "archived_path", "original_path", "merge_undo"):
                record.pop(key, None)
            record["restored_at"] = time.time()  # a fresh start before it is stale again

        self.usage.update(name, mark)
        if record.get("merged_into"):
            self.keep_apart(name, str(record["merged_into"]))
        return f"restored {name} to {target}{undone}"

    def prune(self, older_than_days: int, *, dry_run: bool = False) -> list[str]:
        """Delete archived skills archived more than that many days ago; their names."""
        cutoff = time.time() - older_than_days * DAY
        gone = []
        for name, record in sorted(self.archived().items()):
            stamp = record.get("archived_at")
            if not isinstance(stamp, (int, float)) or stamp > cutoff:
                continue
            try:
                folder = self._inside(self.archive_root, record.get("archived_path"))
            except SkillRefused:
                continue  # never delete what a damaged record points at
            gone.append(name)
            if not dry_run:
                shutil.rmtree(folder, ignore_errors=True)
                undo = record.get("merge_undo")
                if isinstance(undo, dict) and isinstance(undo.get("backup"), str):
                    with contextlib.suppress(SkillRefused, OSError):
                        backups = self.root / ".curator" / "backups"
                        self._inside(backups, undo["backup"]).unlink(missing_ok=True)
                self.usage.forget(name)
        return gone
