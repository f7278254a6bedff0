"""The files of a hermes-agent home that come over as files: .env, SOUL.md, memories,
skills and cron jobs. Each function reads the source, decides, and writes only in the
target (never when ``dry_run``); each returns what it did for the report."""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hermes_plugin_import_hermes_agent.report import Section

DELIMITER = "\n§\n"
"""Between memory entries, in hermes-agent's files and ours alike."""
DEFAULT_SOUL = "You are Hermes Agent, an intelligent AI assistant created by Nous Research."
"""How hermes-agent's own SOUL.md begins: a file it wrote itself, not the user's persona."""


def write_atomically(path: Path, text: str, mode: int | None = None) -> None:
    """Write ``text`` to ``path`` by rename, synced first, so a crash leaves the old file
    or the new one, never half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        if mode is not None:
            os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise


class NotText(OSError):
    """A file that should hold UTF-8 text does not: one line naming it."""


def read_text(path: Path) -> str | None:
    """The file's text; None if it does not exist. Raises :class:`NotText` (an OSError,
    reported as one line) for bytes that are not UTF-8."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError as exc:
        raise NotText(
            f"{path}: not UTF-8 text (byte {exc.start}): save it as UTF-8, then import again"
        ) from None


# --- .env ------------------------------------------------------------------------------


def parse_env(text: str) -> dict[str, str]:
    """KEY=VALUE lines (``export`` and quotes allowed), as hermes-agent's .env holds them."""
    found: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.removeprefix("export ").partition("=")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key.strip()) and value:
            found[key.strip()] = value
    return found


def import_env(
    target: Path,
    source_env: Mapping[str, str],
    moved_secrets: Mapping[str, str],
    settings: set[str],
    renames: Mapping[str, str],
    dry_run: bool,
) -> Section:
    """Secrets into the target's .env (kept at 0600): the source's, minus the settings
    that moved into config.yaml, plus keys that were written inline in its config. A name
    the target already has keeps the target's value."""
    section = Section("secrets (.env)")
    path = target / ".env"
    existing = parse_env(read_text(path) or "")
    wanted: dict[str, str] = {}
    for name, value in {**source_env, **moved_secrets}.items():
        if name in settings:
            section.left(name, "a setting, not a secret: it is in config.yaml now")
            continue
        ours = renames.get(name, name)
        if ours in existing:
            section.skip(ours, "already in this home's .env (kept as it is)")
            continue
        wanted[ours] = value
        section.add(ours if ours == name else f"{name} as {ours}")
    if wanted and not dry_run:
        lines = [line for line in (read_text(path) or "").splitlines() if line.strip()]
        lines += [f"{name}={_quoted(value)}" for name, value in wanted.items()]
        write_atomically(path, "\n".join(lines) + "\n", mode=0o600)
    return section


def _quoted(value: str) -> str:
    """A value as Hermes's .env reader reads it back: double quotes, backslash escapes."""
    if value and not any(ch in value for ch in " #'\"\\\n\r\t"):
        return value
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    escaped = escaped.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t")
    return f'"{escaped}"'


# --- SOUL.md and memories ---------------------------------------------------------------


def import_soul(source: Path, target: Path, dry_run: bool) -> Section:
    section = Section("persona (SOUL.md)")
    text = read_text(source / "SOUL.md")
    if text is None or not _own_words(text):
        if text is not None:
            section.left("SOUL.md", "hermes-agent's default persona, not one you wrote")
        return section
    if (target / "SOUL.md").exists():
        section.skip("SOUL.md", "this home has its own (kept as it is)")
        return section
    section.add("SOUL.md")
    if not dry_run:
        write_atomically(target / "SOUL.md", text)
    return section


def _own_words(text: str) -> bool:
    """Whether SOUL.md holds a persona the user wrote (not a template hermes-agent seeded)."""
    stripped = re.sub(r"<!--.*?-->", "", text, flags=re.S)
    lines = [line for line in stripped.splitlines() if line.strip() and not line.startswith("#")]
    return bool(lines) and not text.strip().startswith(DEFAULT_SOUL)


def entries(text: str) -> list[str]:
    parts = [part.strip() for part in text.replace("\r\n", "\n").split(DELIMITER)]
    return [part for part in parts if part and part != "§"]


@dataclass
class MemoryLimits:
    memory_chars: int = 2200
    user_chars: int = 1375

    @classmethod
    def of(cls, config: Mapping[str, Any]) -> MemoryLimits:
        memory = config.get("memory") if isinstance(config.get("memory"), Mapping) else {}
        assert isinstance(memory, Mapping)
        return cls(
            int(memory.get("memory_chars", cls.memory_chars)),
            int(memory.get("user_chars", cls.user_chars)),
        )


def import_memories(source: Path, target: Path, limits: MemoryLimits, dry_run: bool) -> Section:
    """Entries, not bytes: each new entry is added while it fits this home's limit; the
    rest are kept beside it (``MEMORY.md.not-imported``) and reported."""
    section = Section("memory entries")
    for name, limit in (("MEMORY.md", limits.memory_chars), ("USER.md", limits.user_chars)):
        theirs = entries(read_text(source / "memories" / name) or "")
        if not theirs:
            continue
        path = target / "memories" / name
        ours = entries(read_text(path) or "")
        kept, over = list(ours), []
        for entry in theirs:
            if entry in kept:
                section.skip(f"{name}: {_short(entry)}", "already there")
            elif len(DELIMITER.join([*kept, entry])) <= limit:
                kept.append(entry)
                section.add(f"{name}: {_short(entry)}")
            else:
                over.append(entry)
                section.left(
                    f"{name}: {_short(entry)}",
                    f"over this home's limit of {limit} characters; kept in "
                    f"memories/{name}.not-imported",
                )
        if dry_run:
            continue
        if kept != ours:
            write_atomically(path, DELIMITER.join(kept) + "\n")
        if over:
            spill = path.with_name(f"{name}.not-imported")
            before = entries(read_text(spill) or "")
            write_atomically(
                spill, DELIMITER.join([*before, *(e for e in over if e not in before)]) + "\n"
            )
    return section


def _short(text: str, width: int = 60) -> str:
    line = " ".join(text.split())
    return line if len(line) <= width else line[: width - 1] + "…"


# --- skills -----------------------------------------------------------------------------


def skill_folders(root: Path) -> Iterator[Path]:
    """Folders with a SKILL.md, at the top of ``root`` or one category down (as both
    tools read them), leaving out hermes-agent's hidden bookkeeping folders."""
    if not root.is_dir():
        return
    for child in sorted(root.iterdir()):
        if child.name.startswith(".") or not child.is_dir():
            continue
        if (child / "SKILL.md").is_file():
            yield child
            continue
        for grandchild in sorted(child.iterdir()):
            if grandchild.is_dir() and (grandchild / "SKILL.md").is_file():
                yield grandchild


def import_skills(source: Path, target: Path, dry_run: bool) -> Section:
    section = Section("skills")
    root = source / "skills"
    bundled = _bundled(root)
    for folder in skill_folders(root):
        relative = folder.relative_to(root)
        label = str(relative)
        if (target / "skills" / relative).exists():
            section.skip(label, "this home has a skill there already (kept as it is)")
            continue
        declared = _declared_name(folder / "SKILL.md")
        if declared is not None and declared != folder.name:
            section.note(
                f"{label}: its SKILL.md names it {declared!r}; Hermes knows it by "
                f"its folder, {folder.name!r}"
            )
        section.add(
            label + (" (one of hermes-agent's bundled skills)" if folder.name in bundled else "")
        )
        if not dry_run:
            shutil.copytree(folder, target / "skills" / relative, symlinks=True)
    return section


def _bundled(root: Path) -> set[str]:
    text = read_text(root / ".bundled_manifest") or ""
    return {line.split(":", 1)[0].strip() for line in text.splitlines() if line.strip()}


def _declared_name(path: Path) -> str | None:
    text = read_text(path) or ""
    match = re.search(r"^---\s*\n(.*?)\n---", text, flags=re.S)
    if match is None:
        return None
    name = re.search(r"^name:\s*['\"]?([^'\"\n]+?)['\"]?\s*$", match[1], flags=re.M)
    return name[1].strip() if name else None


# --- cron jobs --------------------------------------------------------------------------


def import_cron(source: Path, target: Path, scheduler_installed: bool, dry_run: bool) -> Section:
    """Jobs into the target's cron/jobs.json (the same format), by id, their schedules
    counted from the import. Without the scheduler plugin they arrive paused, so that
    installing it later does not surprise."""
    section = Section("cron jobs")
    text = read_text(source / "cron" / "jobs.json")
    if text is None:
        return section
    try:
        theirs = json.loads(text)
        jobs = theirs.get("jobs", []) if isinstance(theirs, dict) else theirs
        assert isinstance(jobs, list)
    except (json.JSONDecodeError, AssertionError):
        section.left("cron/jobs.json", "not the JSON hermes-agent writes; nothing read from it")
        return section
    folder = target / "cron"
    if not dry_run:
        folder.mkdir(parents=True, exist_ok=True)
    with _jobs_lock(folder, dry_run):
        path = folder / "jobs.json"
        try:
            ours = json.loads(read_text(path) or '{"jobs": []}')
        except json.JSONDecodeError:
            section.left("cron/jobs.json", f"{path} is not valid JSON: fix it, then import again")
            return section
        known = {str(job.get("id")) for job in ours.get("jobs", []) if isinstance(job, dict)}
        imported_at = datetime.now(UTC).isoformat()
        added = False
        for found in jobs:
            if not isinstance(found, dict) or not found.get("id"):
                continue
            job = dict(found)
            label = f"{job.get('name') or job['id']} ({job.get('schedule_display') or ''})".strip()
            if str(job["id"]) in known:
                section.skip(label, "already there")
                continue
            # Counted from now: the instants before the import were hermes-agent's to run,
            # and catching up on the latest of them would run it a second time.
            job["anchor_at"] = imported_at
            if job.get("state") == "paused":
                job["paused"] = True
            if not scheduler_installed and job.get("enabled", True):
                job["paused"] = True
                label += ", paused: the scheduler plugin (hermes-plugin-cron) is not installed"
            section.add(label)
            ours.setdefault("jobs", []).append(job)
            added = True
        if added and not dry_run:
            write_atomically(path, json.dumps(ours, indent=2) + "\n")
    return section


@contextlib.contextmanager
def _jobs_lock(folder: Path, dry_run: bool) -> Iterator[None]:
    """The cron plugin's own lock on jobs.json, so a running scheduler's edit and ours
    do not overwrite each other."""
    if dry_run or not folder.is_dir():
        yield
        return
    with open(folder / ".jobs.lock", "a+") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)
