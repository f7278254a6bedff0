"""The hub's work: find skills across the sources, and install, update, audit, uninstall
and roll back what it installed, in ``HERMES_HOME/skills-hub/``:

- ``installed/NAME/``: the skills, read by the skills plugin as the source ``plugin:hub``
  (read-only to the agent, whose own skills live in ``skills/`` and win a name);
- ``quarantine/``: where every package is written and scanned first; what the scan refuses
  stays there to be read;
- ``backups/NAME/STAMP/``: the version an update or uninstall replaced, for ``rollback``;
- ``lock.json``, ``audit.log``, ``taps.json``, ``cache/``.
"""

from __future__ import annotations

import asyncio
import difflib
import json
import shutil
import tempfile
import time
import zipfile
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from hermes_commons.files import atomic_write_text
from hermes_commons.skill_md import NAME_RULE, SkillError, parse_skill_text
from hermes_plugin_skills_hub.cache import SearchCache
from hermes_plugin_skills_hub.fetching import Fetcher
from hermes_plugin_skills_hub.lock import Entry, Lock
from hermes_plugin_skills_hub.packages import (
    HubError,
    Listing,
    Package,
    check_layout,
    content_hash,
    folder_files,
)
from hermes_plugin_skills_hub.scanner import SCANNER, Scan, scan_files
from hermes_plugin_skills_hub.settings import HubSettings
from hermes_plugin_skills_hub.sources import Source
from hermes_plugin_skills_hub.sources.clawhub import ClawHubSource
from hermes_plugin_skills_hub.sources.github import GitHubSource
from hermes_plugin_skills_hub.sources.local import LocalSource
from hermes_plugin_skills_hub.sources.marketplace import MarketplaceSource
from hermes_plugin_skills_hub.sources.official import OfficialSource
from hermes_plugin_skills_hub.sources.skills_sh import SkillsShSource
from hermes_plugin_skills_hub.sources.url import UrlSource
from hermes_plugin_skills_hub.sources.well_known import WellKnownSource
from hermes_plugin_skills_hub.taps import Taps

__all__ = ["FOLDER", "Hub", "Outcome", "Staged", "folder_diff"]

FOLDER = "skills-hub"
Confirm = Callable[[str], bool]


@dataclass
class Staged:
    """A package written to the quarantine and scanned."""

    name: str
    description: str
    package: Package
    folder: Path
    scan: Scan
    hash: str

    def allowed(self, force: bool) -> bool:
        if self.scan.verdict == "blocked":
            return False
        return self.scan.verdict == "safe" or force or self.package.trust == "official"


@dataclass
class Outcome:
    lines: list[str] = field(default_factory=list)
    failed: bool = False


class Hub:
    def __init__(self, home: str | Path, settings: HubSettings) -> None:
        self.root = Path(home) / FOLDER
        self.installed = self.root / "installed"
        self.settings = settings
        self.lock = Lock(self.root)
        self.taps = Taps(self.root)
        self.cache = SearchCache(self.root / "cache", settings.cache_hours)
        self.github = GitHubSource(
            settings.github_api,
            settings.github_raw,
            [*settings.taps, *self.taps.identifiers()],
            settings.trusted,
        )
        self.sources: list[Source] = [
            LocalSource(),
            OfficialSource(),
            SkillsShSource(settings.skills_sh, self.github),
            ClawHubSource(settings.clawhub_api),
            MarketplaceSource(settings.marketplaces, self.github),
            WellKnownSource(settings.well_known),
            UrlSource(),
            self.github,
        ]

    def fetcher(self) -> Fetcher:
        return Fetcher(self.settings)

    # --- finding ------------------------------------------------------------------------

    def source_named(self, name: str) -> Source:
        for source in self.sources:
            if source.name == name:
                return source
        names = ", ".join(s.name for s in self.sources)
        raise HubError(f"no source {name!r}; sources: {names}")

    def route(self, identifier: str) -> Source:
        for source in self.sources:
            if source.owns(identifier):
                return source
        raise HubError(
            f"{identifier!r} names no source: give github:OWNER/REPO/PATH, skills-sh/OWNER/REPO/"
            "SKILL, clawhub:SLUG, marketplace:OWNER/REPO/PATH, well-known:URL/NAME, a URL to a "
            "SKILL.md, a folder, a git URL, or a skill's name"
        )

    async def search(
        self, query: str, source: str | None = None, limit: int = 50, refresh: bool = False
    ) -> tuple[list[Listing], list[str]]:
        """(listings, notes) from every source that searches (or one), in parallel; a source
        that fails is one note, and the others still answer."""
        chosen = [self.source_named(source)] if source else self.sources
        async with self.fetcher() as fetcher:
            answers = await asyncio.gather(
                *(self._search_one(fetcher, s, query, limit, refresh) for s in chosen),
                return_exceptions=True,
            )
        listings: list[Listing] = []
        notes: list[str] = []
        seen: set[str] = set()
        for searched, answer in zip(chosen, answers, strict=True):
            if isinstance(answer, BaseException):
                if not isinstance(answer, Exception):
                    raise answer
                notes.append(f"{searched.name}: {unreadable(answer)}")
                continue
            found, note = answer
            if note:
                notes.append(f"{searched.name}: {note}")
            for listing in found:
                if listing.identifier not in seen:
                    seen.add(listing.identifier)
                    listings.append(listing)
        return listings[: max(limit, 1) * 2], notes

    async def _search_one(
        self, fetcher: Fetcher, source: Source, query: str, limit: int, refresh: bool
    ) -> tuple[list[Listing], str | None]:
        if source.catalog:  # everything is listed, cached, and filtered here
            listed, note = await self.cache.get(
                f"{source.name}:catalog:{self._catalog_key(source)}",
                lambda: source.search(fetcher, "", 10_000),
                refresh=refresh,
            )
            from hermes_plugin_skills_hub.sources import matches

            if query.strip().startswith(("http://", "https://")):  # a site's own index
                if source.name != "well-known":
                    return [], None
                return await source.search(fetcher, query, limit), None
            return [item for item in listed if matches(query, item.name, item.description)][
                :limit
            ], note
        return await self.cache.get(
            f"{source.name}:search:{query.strip().lower()}:{limit}",
            lambda: source.search(fetcher, query, limit),
            refresh=refresh,
        )

    def _catalog_key(self, source: Source) -> str:
        settings = self.settings
        return json.dumps(
            [
                settings.github_api,
                self.github.taps,
                settings.marketplaces,
                settings.well_known,
                source.name,
            ]
        )

    async def resolve(self, fetcher: Fetcher, identifier: str) -> list[Package]:
        """The packages ``identifier`` names; a bare name is an optional skill's, or the one
        skill of that exact name a search finds."""
        identifier = identifier.strip()
        if "/" not in identifier and ":" not in identifier and not Path(identifier).is_dir():
            official = self.source_named("official")
            if official.owns(identifier):
                return await official.fetch(fetcher, identifier)
            found, _ = await self.search(identifier, limit=20)
            exact = [item for item in found if item.name.lower() == identifier.lower()]
            if len(exact) == 1 and exact[0].trust == "community":
                raise HubError(
                    f"{identifier!r} is {exact[0].identifier}, a community skill: install it by "
                    "that identifier, so the source is your choice"
                )
            if len(exact) != 1:
                listed = (
                    "; ".join(item.identifier for item in (exact or found)[:5]) or "nothing close"
                )
                raise HubError(
                    f"{len(exact) or 'no'} skills are named {identifier!r}; install one by its "
                    f"identifier ({listed})"
                )
            identifier = exact[0].identifier
        source = self.route(identifier)
        return await fetch_from(source, fetcher, identifier)

    # --- staging ------------------------------------------------------------------------

    def stage(self, package: Package) -> Staged:
        if "SKILL.md" not in package.files:
            raise HubError(f"{package.identifier} has no SKILL.md")
        check_layout(package.files)
        try:
            skill = parse_skill_text(
                package.files["SKILL.md"].decode("utf-8"), Path(package.name_hint or "skill")
            )
        except UnicodeDecodeError:
            raise HubError(f"{package.identifier}: SKILL.md is not UTF-8 text") from None
        except SkillError as exc:
            raise HubError(f"{package.identifier}: {exc}") from None
        name = skill.name
        if not NAME_RULE.match(name) or len(name) > 64:
            raise HubError(
                f"{package.identifier}: {name!r} cannot be a skill's folder name "
                "(lowercase-with-hyphens)"
            )
        quarantine = self.root / "quarantine"
        quarantine.mkdir(parents=True, exist_ok=True)
        folder = Path(tempfile.mkdtemp(prefix=f"{name}-", dir=quarantine))
        for relative, content in package.files.items():
            target = folder / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content)
            if relative.startswith("scripts/"):
                target.chmod(0o755)
        settings = self.settings
        scan = scan_files(
            package.files, settings.max_file_bytes, settings.max_skill_bytes, settings.max_files
        )
        return Staged(name, skill.description, package, folder, scan, content_hash(package.files))

    def _entry(self, staged: Staged, previous: Entry | None) -> Entry:
        now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        package = staged.package
        return {
            "source": package.source,
            "identifier": package.identifier,
            "trust": package.trust,
            "content_hash": staged.hash,
            "files": sorted(package.files),
            "revision": package.revision,
            "source_url": package.source_url,
            "scan": {
                "scanner": SCANNER,
                "verdict": staged.scan.verdict,
                "findings": [str(f) for f in staged.scan.findings],
            },
            "installed_at": (previous or {}).get("installed_at", now),
            "updated_at": now,
        }

    def _backup(self, name: str, entry: Entry | None, why: str) -> Path | None:
        """Move the installed copy of ``name`` (and its lock entry) aside; its folder."""
        current = self.installed / name
        if not current.exists():
            return None
        target = self.root / "backups" / name / f"{time.time_ns():020d}"
        target.mkdir(parents=True)
        # The record first: a crash before the move leaves a backup with no skill, skipped.
        atomic_write_text(target / "entry.json", json.dumps({"why": why, "entry": entry}, indent=1))
        current.rename(target / "skill")
        return target

    def _land(self, staged: Staged, previous: Entry | None, action: str) -> str:
        self.installed.mkdir(parents=True, exist_ok=True)
        with self.lock.changing() as entries:
            kept = self._backup(staged.name, entries.get(staged.name), action)
            staged.folder.rename(self.installed / staged.name)
            entries[staged.name] = self._entry(staged, previous)
        self.lock.log(
            action.upper(),
            staged.name,
            f"{staged.package.source}:{staged.package.trust} {staged.scan.verdict} {staged.hash}",
        )
        note = f" (the version it replaced: hermes skills rollback {staged.name})" if kept else ""
        done = {"install": "installed", "update": "updated"}[action]
        package = staged.package
        pin = staged.hash[:19]
        return f"{done} {staged.name} from {package.identifier} [{package.trust}] {pin}{note}"

    def _refusal(self, staged: Staged) -> str:
        where = staged.folder.relative_to(self.root.parent)
        advice = "" if staged.scan.verdict == "blocked" else "; --force installs it anyway"
        self.lock.log(
            "QUARANTINED",
            staged.name,
            f"{staged.package.source}:{staged.package.trust} {staged.scan.verdict}",
        )
        return f"quarantined {staged.scan.line(staged.name)} (kept in {where}{advice})"

    # --- the verbs ----------------------------------------------------------------------

    async def install(self, identifier: str, *, force: bool, confirm: Confirm) -> Outcome:
        outcome = Outcome()
        async with self.fetcher() as fetcher:
            packages = await self.resolve(fetcher, identifier)
        entries = self.lock.entries()
        staged_all: list[Staged] = []
        try:
            for package in packages:
                staged_all.append(self.stage(package))
        except HubError:
            for staged in staged_all:
                shutil.rmtree(staged.folder, ignore_errors=True)
            raise
        ready: list[Staged] = []
        names: set[str] = set()
        for staged in staged_all:
            if staged.name in names:
                shutil.rmtree(staged.folder, ignore_errors=True)
                outcome.lines.append(
                    f"{staged.package.identifier} is also named {staged.name}; only the first "
                    "is installed"
                )
                outcome.failed = True
                continue
            names.add(staged.name)
            if staged.name in entries and not force:
                shutil.rmtree(staged.folder, ignore_errors=True)
                outcome.lines.append(
                    f"{staged.name} is installed already "
                    f"(hermes skills update {staged.name}, or --force)"
                )
                continue
            if not staged.allowed(force):
                outcome.lines.append(self._refusal(staged))
                outcome.failed = True
                continue
            ready.append(staged)
        if not ready:
            return outcome
        summary = "\n".join(
            f"  {s.name} [{s.package.source}, {s.package.trust}] {s.hash[:19]} "
            f"{len(s.package.files)} files: "
            f"{s.description[:80]}" + "".join(f"\n    {f}" for f in s.scan.findings)
            for s in ready
        )
        if not confirm(f"Install {len(ready)} skill(s)?\n{summary}"):
            for staged in ready:
                shutil.rmtree(staged.folder, ignore_errors=True)
            outcome.lines.append("nothing was installed")
            return outcome
        for staged in ready:
            outcome.lines.append(self._land(staged, entries.get(staged.name), "install"))
        return outcome

    async def update(
        self, names: Sequence[str], *, check_only: bool, force: bool, confirm: Confirm
    ) -> Outcome:
        outcome = Outcome()
        entries = self.lock.entries()
        unknown = [n for n in names if n not in entries or not NAME_RULE.match(n)]
        if unknown:
            raise HubError(
                f"not installed from the hub: {', '.join(unknown)} "
                "(hermes skills audit lists what is)"
            )
        async with self.fetcher() as fetcher:
            for name in names or sorted(entries):
                entry = entries[name]
                try:
                    line = await self._update_one(fetcher, name, entry, check_only, force, confirm)
                except HubError as exc:
                    line = f"{name}: cannot update ({exc})"
                outcome.lines.append(line)
                outcome.failed |= line.startswith(("quarantined", f"{name}: cannot"))
        return outcome

    async def _update_one(
        self,
        fetcher: Fetcher,
        name: str,
        entry: Entry,
        check_only: bool,
        force: bool,
        confirm: Confirm,
    ) -> str:
        identifier = entry.get("identifier")
        if not isinstance(identifier, str) or not identifier:
            raise HubError("its lock entry names no identifier")
        packages = await fetch_from(self.route(identifier), fetcher, identifier)
        package = next((p for p in packages if _declared(p) == name), None)
        if package is None:  # gone, or renamed upstream: never another skill's place
            raise HubError(f"{identifier} no longer holds a skill named {name}")
        if content_hash(package.files) == entry.get("content_hash"):
            return f"{name}: up to date"
        if check_only:
            return f"{name}: an update is available ({package.revision or 'new content'})"
        staged = self.stage(package)
        if not staged.allowed(force):
            return self._refusal(staged)
        changes = folder_diff(self.installed / name, package.files, name)
        if not confirm(f"Update {name} to {staged.hash[:19]}?\n{changes}"):
            shutil.rmtree(staged.folder, ignore_errors=True)
            return f"{name}: not updated"
        return self._land(staged, entry, "update")

    def audit(self, names: Sequence[str] = ()) -> Outcome:
        outcome = Outcome()
        entries = self.lock.entries()
        for name in names or sorted(entries):
            entry = entries.get(name) if NAME_RULE.match(name) else None
            folder = self.installed / name
            if entry is None or not folder.is_dir():
                outcome.lines.append(f"{name}: not installed from the hub")
                outcome.failed = True
                continue
            files = folder_files(folder)
            settings = self.settings
            scan = scan_files(
                files, settings.max_file_bytes, settings.max_skill_bytes, settings.max_files
            )
            changed = content_hash(files) != entry.get("content_hash")
            status = scan.line(name) + (
                " - its files changed since it was installed" if changed else ""
            )
            outcome.lines.append(f"{status} [{entry.get('source')}: {entry.get('identifier')}]")
            outcome.failed |= changed or bool(scan.findings)
        if not entries:
            outcome.lines.append("nothing is installed from the hub")
        return outcome

    def uninstall(self, name: str) -> str:
        with self.lock.changing() as entries:
            entry = entries.get(name) if NAME_RULE.match(name) else None
            if entry is None:
                raise HubError(
                    f"{name} was not installed from the hub "
                    "(hermes skills remove takes your own skills)"
                )
            kept = self._backup(name, entry, "uninstall")
            del entries[name]
        self.lock.log("UNINSTALL", name, str(entry.get("identifier")))
        if kept is None:
            return f"uninstalled {name} (its folder was gone already; its lock entry is removed)"
        return f"uninstalled {name}; hermes skills rollback {name} puts it back"

    def rollback(self, name: str) -> str:
        if not NAME_RULE.match(name):
            raise HubError(f"{name!r} is not a skill's name")
        folder = self.root / "backups" / name
        kept = (
            sorted(p for p in folder.iterdir() if (p / "skill").is_dir()) if folder.is_dir() else []
        )
        if not kept:
            raise HubError(f"no earlier version of {name} is kept")
        newest = kept[-1]
        try:
            saved = json.loads((newest / "entry.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            saved = {}  # the files still come back; the lock entry cannot
        if not isinstance(saved, dict):
            saved = {}
        with self.lock.changing() as entries:
            self._backup(name, entries.get(name), "rollback")
            self.installed.mkdir(parents=True, exist_ok=True)
            (newest / "skill").rename(self.installed / name)
            entry = saved.get("entry")
            if isinstance(entry, dict):
                entries[name] = entry
            else:
                entries.pop(name, None)
        shutil.rmtree(newest, ignore_errors=True)
        self.lock.log("ROLLBACK", name, str(saved.get("why")))
        return f"rolled {name} back to the version kept at its {saved.get('why')}"


_READING = (KeyError, TypeError, AttributeError, ValueError, IndexError, RuntimeError)
"""What parsing an answer of an unexpected shape raises (a list where a mapping was
expected, a zip member that fails its CRC, ...)."""


def unreadable(exc: Exception) -> str:
    if isinstance(exc, HubError):
        return str(exc)
    return f"its answer could not be read ({type(exc).__name__}: {str(exc)[:120]})"


async def fetch_from(source: Source, fetcher: Fetcher, identifier: str) -> list[Package]:
    """``source.fetch``, with an answer of an unexpected shape as one HubError line."""
    try:
        return await source.fetch(fetcher, identifier)
    except HubError:
        raise
    except (*_READING, zipfile.BadZipFile, zlib.error) as exc:
        raise HubError(f"{source.name}: {unreadable(exc)}") from None


def _declared(package: Package) -> str | None:
    try:
        return parse_skill_text(
            package.files["SKILL.md"].decode("utf-8"), Path(package.name_hint or "skill")
        ).name
    except (KeyError, UnicodeDecodeError, SkillError):
        return None


def folder_diff(folder: Path, new: dict[str, bytes], name: str) -> str:
    """A unified diff from the installed files to ``new``; a binary change is one line."""
    old = folder_files(folder) if folder.is_dir() else {}
    chunks: list[str] = []
    for relative in sorted(set(old) | set(new)):
        before, after = old.get(relative), new.get(relative)
        if before == after:
            continue
        try:
            a = (before or b"").decode("utf-8").splitlines(keepends=True)
            b = (after or b"").decode("utf-8").splitlines(keepends=True)
        except UnicodeDecodeError:
            how = "added" if before is None else "removed" if after is None else "changed"
            chunks.append(f"binary {name}/{relative} {how}\n")
            continue
        chunks += difflib.unified_diff(a, b, f"a/{name}/{relative}", f"b/{name}/{relative}")
    return "".join(chunks) or "(no change to the files)"
