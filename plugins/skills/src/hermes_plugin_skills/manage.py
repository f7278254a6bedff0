"""Changes to skills: planned first (validated, scanned, shown as a diff), then applied or
queued for the user's approval (``skills.write_approval``).

The agent writes only under ``HERMES_HOME/skills``. Paths inside a skill are relative, stay
inside the skill's folder (no ``..``, no absolute paths, no symlinks out) and, besides
SKILL.md, live in the specification's folders: scripts/, references/, assets/.
"""

from __future__ import annotations

import difflib
import hashlib
import shutil
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from hermes_commons.files import atomic_write_text
from hermes_commons.scan import scan_script, scan_text
from hermes_commons.skill_md import NAME_RULE, SkillError, parse_skill_text
from hermes_plugin_skills.library import Library

__all__ = ["ACTIONS", "Change", "SkillRefused", "apply", "diff", "file_diff", "plan", "stale"]

ACTIONS = ("create", "patch", "edit", "delete", "write_file", "remove_file")
FILE_FOLDERS = ("scripts", "references", "assets", "templates")
MAX_FILE = 200_000


class SkillRefused(ValueError):
    """A change that cannot be made; the message says what to do instead."""


@dataclass
class Change:
    action: str
    skill: str
    files: dict[str, str | None] = field(default_factory=dict)
    """Path inside the skill folder -> new text, or None to delete it."""
    delete_skill: bool = False
    base: dict[str, str | None] = field(default_factory=dict)
    """Hash of each file as it was when planned (None: absent), to notice later edits."""
    archive_after: str | None = None
    """A skill archived once this change is made (the curator merged it into this one)."""
    folder: str | None = None
    """The skill's folder under the skills root when it is not the skill's name (a skill in a
    category folder: ``ops/deploy``)."""

    @property
    def where(self) -> str:
        return self.folder or self.skill

    def summary(self) -> str:
        if self.delete_skill:
            return f"delete skill {self.skill}"
        parts = [
            f"{'remove' if text is None else 'write'} {name}" for name, text in self.files.items()
        ]
        merged = f", then archive {self.archive_after} (merged in)" if self.archive_after else ""
        return f"{self.action} {self.skill}: {', '.join(parts)}{merged}"


def _hash(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except FileNotFoundError:
        return None


def safe_relative(file_path: str, *, allow_skill_md: bool = False) -> str:
    """``file_path`` as a clean relative path inside a skill, or SkillRefused."""
    raw = file_path.strip().replace("\\", "/")
    path = PurePosixPath(raw)
    if not raw or path.is_absolute() or ".." in path.parts or raw.startswith("~"):
        raise SkillRefused(
            f"{file_path!r} is not a path inside the skill: give a relative path such as "
            "references/notes.md (no '..', no leading '/')"
        )
    clean = path.as_posix()
    if clean == "SKILL.md" and allow_skill_md:
        return clean
    if path.parts[0] not in FILE_FOLDERS or len(path.parts) < 2:
        raise SkillRefused(
            f"{file_path!r}: files go in {', '.join(f + '/' for f in FILE_FOLDERS)} "
            "(SKILL.md itself changes with create, edit or patch)"
        )
    return clean


def _inside(folder: Path, relative: str) -> Path:
    target = folder / relative
    resolved_folder = folder.resolve()
    if not target.resolve().is_relative_to(resolved_folder):
        raise SkillRefused(f"{relative!r} leads outside the skill's folder; refused")
    return target


def _scan(relative: str, text: str) -> None:
    findings = scan_script(text) if relative.startswith("scripts/") else scan_text(text)
    if findings:
        reasons = "; ".join(str(finding) for finding in findings)
        raise SkillRefused(f"refused to write {relative}: {reasons}")


def _checked_skill_md(text: str, name: str, folder: Path) -> str:
    try:
        skill = parse_skill_text(text, folder)
    except SkillError as exc:
        raise SkillRefused(f"SKILL.md would not load: {exc}") from None
    if skill.name != name:
        raise SkillRefused(
            f"the frontmatter says name: {skill.name!r} but the skill is {name!r}; make them equal"
        )
    if "no description" in " ".join(skill.warnings):
        raise SkillRefused("add a description: field to the frontmatter (what the skill is for)")
    _scan("SKILL.md", text)
    return text if text.endswith("\n") else text + "\n"


def _replace_once(text: str, old: str, new: str, replace_all: bool, where: str) -> str:
    if not old:
        raise SkillRefused("patch needs old_string: the exact text to replace")
    count = text.count(old)
    if count == 0:
        raise SkillRefused(f"old_string is not in {where}: view it and copy the text exactly")
    if count > 1 and not replace_all:
        raise SkillRefused(
            f"old_string occurs {count} times in {where}: include more context, or set "
            "replace_all=true"
        )
    return text.replace(old, new) if replace_all else text.replace(old, new, 1)


def plan(
    library: Library,
    root: Path,
    action: str,
    name: str,
    *,
    content: str | None = None,
    old_string: str | None = None,
    new_string: str | None = None,
    file_path: str | None = None,
    file_content: str | None = None,
    replace_all: bool = False,
) -> Change:
    if action not in ACTIONS:
        raise SkillRefused(f"action must be one of {', '.join(ACTIONS)}, not {action!r}")
    if action == "create":
        if not NAME_RULE.match(name) or len(name) > 64:
            raise SkillRefused(
                f"{name!r} is not a skill name: 1-64 lowercase letters, digits and single "
                "hyphens (docker-cleanup)"
            )
        if name in library.skills:
            where = library.skills[name].folder
            raise SkillRefused(f"a skill {name!r} exists ({where}): patch or edit it instead")
        folder = root / name
        if folder.exists():
            raise SkillRefused(f"{folder} exists but holds no usable skill; pick another name")
        text = _checked_skill_md(content or "", name, folder)
        return Change(action, name, {"SKILL.md": text}, base={"SKILL.md": None})
    try:
        skill = library.get(name)
    except KeyError as exc:
        raise SkillRefused(str(exc.args[0])) from None
    if not library.is_writable(skill):
        raise SkillRefused(
            f"skill {name!r} comes from {skill.source} ({skill.folder}), which Hermes does not "
            "change; create your own skill under another name instead"
        )
    folder = skill.folder
    try:
        place: str | None = folder.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        place = None
    placed = place if place and place != name else None
    if action == "delete":
        return Change(action, name, delete_skill=True, folder=placed)
    if action in ("edit", "patch") and not file_path:
        current = skill.path.read_text(encoding="utf-8")
        if action == "edit":
            new = content or ""
        else:
            new = _replace_once(
                current, old_string or "", new_string or "", replace_all, "SKILL.md"
            )
        return Change(
            action,
            name,
            {"SKILL.md": _checked_skill_md(new, name, folder)},
            base={"SKILL.md": _hash(skill.path)},
            folder=placed,
        )
    relative = safe_relative(file_path or "", allow_skill_md=False)
    target = _inside(folder, relative)
    if action == "remove_file":
        if not target.is_file():
            raise SkillRefused(f"{relative} does not exist in skill {name!r}")
        return Change(action, name, {relative: None}, base={relative: _hash(target)}, folder=placed)
    if action == "patch":
        try:
            current = target.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            raise SkillRefused(f"{relative} is not a text file in skill {name!r}") from None
        text = _replace_once(current, old_string or "", new_string or "", replace_all, relative)
    elif action == "write_file":
        text = file_content if file_content is not None else content or ""
        if len(text) > MAX_FILE:
            raise SkillRefused(f"{relative} would be {len(text)} characters; at most {MAX_FILE}")
    else:  # edit with a file_path
        text = content or ""
    _scan(relative, text)
    return Change(action, name, {relative: text}, base={relative: _hash(target)}, folder=placed)


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""
    except (OSError, UnicodeDecodeError):
        return "(binary or unreadable)\n"


def _files(folder: Path) -> list[str]:
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def file_diff(root: Path, change: Change) -> str:
    """A unified diff of every file ``change`` would write or remove (each of the skill's
    files, when it deletes the skill), against the files as they are now; "" if none."""
    folder = root / change.where
    files = dict.fromkeys(_files(folder)) if change.delete_skill else change.files
    chunks: list[str] = []
    for relative, text in files.items():
        before = _read(folder / relative).splitlines(keepends=True)
        after = (text or "").splitlines(keepends=True)
        chunks += difflib.unified_diff(
            before, after, f"a/{change.skill}/{relative}", f"b/{change.skill}/{relative}"
        )
    return "".join(chunks)


def diff(root: Path, change: Change) -> str:
    """What the change would do, to show: a unified diff, or the files a deletion removes."""
    folder = root / change.where
    if change.delete_skill:
        names = _files(folder)
        return f"delete the skill folder {folder} ({len(names)} files: {', '.join(names)})"
    return file_diff(root, change) or "(no change)"


def stale(root: Path, change: Change) -> str | None:
    """Why the change can no longer be made (a file it touches was changed since it was
    planned), or None."""
    folder = root / change.where
    for relative, digest in change.base.items():
        if _hash(folder / relative) != digest:
            return (
                f"{change.skill}/{relative} changed since this was proposed; reject it and "
                "propose again"
            )
    return None


def apply(root: Path, change: Change) -> str:
    """Make the change; SkillRefused if a file was changed since the plan was made."""
    folder = root / change.where
    why = stale(root, change)
    if why is not None:
        raise SkillRefused(why)
    if change.delete_skill:
        shutil.rmtree(folder)
        return f"deleted skill {change.skill}"
    for relative, text in change.files.items():
        target = _inside(folder, relative) if relative != "SKILL.md" else folder / relative
        if text is None:
            target.unlink()
            continue
        atomic_write_text(target, text, mode=0o755 if relative.startswith("scripts/") else None)
    return change.summary()
