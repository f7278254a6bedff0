"""SKILL.md files per the Agent Skills specification (agentskills.io/specification): YAML
frontmatter between ``---`` lines, then Markdown instructions.

Skills written by people bend the rules (a name that differs from its folder, long
descriptions, ``allowed-tools`` as a list), so a rule broken is a warning that
``hermes skills check`` shows; only what makes a skill unusable (no frontmatter,
YAML that does not parse, a missing file) is an error, and that skill is left out.
"""

from __future__ import annotations

import contextlib
import copy
import json
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes_commons.files import write_cache_json

__all__ = [
    "ACTIVATION_FIELDS",
    "NAME_RULE",
    "FrontmatterCache",
    "Skill",
    "SkillError",
    "hermes_field",
    "load_skill",
    "parse_skill_text",
]

NAME_RULE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
KNOWN_FIELDS = {"name", "description", "license", "compatibility", "metadata", "allowed-tools"}
ACTIVATION_FIELDS = (
    "platforms",
    "requires_toolsets",
    "fallback_for_toolsets",
    "requires_tools",
    "fallback_for_tools",
)
"""Where a skill applies (the skills plugin's index honours them), at the top level or
under ``metadata.hermes`` as hermes-agent writes them."""
HERMES_FIELDS = {*ACTIVATION_FIELDS, "version", "tags"}
"""Fields outside the specification that Hermes reads."""
MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_COMPATIBILITY = 500
FOLDERS = ("scripts", "references", "assets")


class SkillError(ValueError):
    """The skill cannot be used; the message says what to fix."""


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    folder: Path
    body: str
    frontmatter: Mapping[str, Any]
    source: str = ""
    warnings: tuple[str, ...] = field(default=())
    lazy: bool = False
    """Built from the cache without reading SKILL.md: ``body`` is empty until read with
    :meth:`instructions`."""

    def instructions(self) -> str:
        """The Markdown after the frontmatter."""
        if not self.lazy:
            return self.body
        return split_frontmatter(self.path.read_text(encoding="utf-8"))[1]

    @property
    def path(self) -> Path:
        return self.folder / "SKILL.md"

    @property
    def allowed_tools(self) -> tuple[str, ...]:
        value = self.frontmatter.get("allowed-tools")
        if isinstance(value, str):
            return tuple(value.split())
        if isinstance(value, list):
            return tuple(str(item) for item in value)
        return ()


def _yaml_load(text: str) -> Any:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # the C parser when built with it
    return yaml.load(text, Loader=loader)


def _json_safe(value: Any) -> bool:
    """Whether JSON gives ``value`` back unchanged (a date, or an integer key, would not)."""
    try:
        return bool(json.loads(json.dumps(value)) == value)
    except (TypeError, ValueError):
        return False


RACY_NS = 2_000_000_000
MAX_ENTRIES = 5_000


class FrontmatterCache:
    """Each SKILL.md as parsed (name, description, frontmatter, warnings) by its file's
    stat, kept in one JSON file between processes: every new session lists each skill's
    name and description in its prompt, and for a one-shot, reading and parsing thirty
    files (importing the YAML parser first) is most of that cost. The file is read only
    when a skill is not known in this process already (a gateway opening sessions all day
    reads it once) and written only when something changed. A frontmatter JSON cannot hold
    (a date) is parsed each time; a damaged file is a miss."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._known: dict[str, Any] | None = None
        self._used: dict[str, Skill] = {}
        self._changed = False

    @staticmethod
    def _key(path: Path, version: tuple[int, int, int]) -> str:
        return f"{path}:{version[0]}:{version[1]}:{version[2]}"

    def _load(self) -> dict[str, Any]:
        if self._known is None:
            self._known = {}
            if self.path is not None:
                with contextlib.suppress(OSError, ValueError):
                    data = json.loads(self.path.read_text(encoding="utf-8"))
                    if isinstance(data, dict):
                        self._known = data
        return self._known

    def skill(self, path: Path, version: tuple[int, int, int], source: str) -> Skill | None:
        """The skill parsed from ``path`` when it had this stat, without reading it (its
        instructions are read when asked for: :meth:`Skill.instructions`)."""
        key = self._key(path, version)
        known = self._load().get(key)
        if not isinstance(known, dict):
            return None
        try:
            skill = Skill(
                name=str(known["name"]),
                description=str(known["description"]),
                folder=path.parent,
                body="",
                frontmatter=copy.deepcopy(known["meta"]),
                source=source,
                warnings=tuple(str(w) for w in known["warnings"]),
                lazy=True,
            )
        except (KeyError, TypeError):
            return None
        self._used[key] = skill
        return skill

    def seen(self, path: Path, version: tuple[int, int, int], skill: Skill, *, new: bool) -> None:
        """``skill`` was loaded (``new``: parsed from its file just now). A file changed in
        the last two seconds is not kept: another change within the same tick of its clock
        could leave the same stat (git's "racy clean")."""
        if time.time_ns() - version[0] < RACY_NS or not _json_safe(dict(skill.frontmatter)):
            return  # parsed again next time, and nothing to write
        self._used[self._key(path, version)] = skill
        self._changed |= new

    def save(self) -> None:
        """Keep what this load used (the rest belonged to edited or removed skills), when
        something was parsed anew or is gone."""
        if self.path is None or not self._changed:
            return
        used_paths = {key.rsplit(":", 3)[0] for key in self._used}
        # Entries of other paths stay (another project's skills, read by another process);
        # an entry of a path read now under another stat is an old version of it, and goes.
        entries = {
            key: value
            for key, value in self._load().items()
            if key.rsplit(":", 3)[0] not in used_paths
        }
        entries.update(
            {
                key: {
                    "name": skill.name,
                    "description": skill.description,
                    "meta": dict(skill.frontmatter),
                    "warnings": list(skill.warnings),
                }
                for key, skill in self._used.items()
            }
        )
        if len(entries) > MAX_ENTRIES:  # keep this load's, then the newest files'
            ordered = sorted(entries, key=lambda k: (k in self._used, k.rsplit(":", 3)[1]))
            entries = {key: entries[key] for key in ordered[-MAX_ENTRIES:]}
        write_cache_json(self.path, entries)


def split_frontmatter(text: str) -> tuple[str, str]:
    """(frontmatter, body); SkillError when the file does not start with a ``---`` block."""
    text = text.lstrip("\ufeff")
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        raise SkillError("SKILL.md must start with a '---' line opening its YAML frontmatter")
    for number, line in enumerate(lines[1:], 1):
        if line.strip() == "---":
            return "\n".join(lines[1:number]), "\n".join(lines[number + 1 :]).strip()
    raise SkillError("the frontmatter is not closed: add a '---' line after it")


def hermes_field(frontmatter: Mapping[str, Any], key: str) -> Any:
    """``key`` at the top level, else under ``metadata.hermes``; None when neither has it."""
    if key in frontmatter:
        return frontmatter[key]
    metadata = frontmatter.get("metadata")
    hermes = metadata.get("hermes") if isinstance(metadata, Mapping) else None
    return hermes.get(key) if isinstance(hermes, Mapping) else None


def _activation_problems(frontmatter: Mapping[str, Any]) -> list[str]:
    problems = []
    for key in ACTIVATION_FIELDS:
        value = hermes_field(frontmatter, key)
        if value is None or isinstance(value, str):
            continue
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            problems.append(f"{key} should be a list of names, got {value!r}")
    return problems


def _first_line(body: str) -> str:
    for raw in body.splitlines():
        line = raw.strip().lstrip("#").strip()
        if line:
            return line
    return ""


def parse_skill_text(text: str, folder: Path, source: str = "") -> Skill:
    raw, body = split_frontmatter(text)
    try:
        meta = _yaml_load(raw) if raw.strip() else {}
    except Exception as exc:  # noqa: BLE001 - any YAML error makes the skill unusable
        problem = " ".join(str(exc).split())[:200]
        raise SkillError(f"the frontmatter is not valid YAML: {problem}") from None
    if not isinstance(meta, dict):
        raise SkillError(
            "the frontmatter must be a mapping of fields (name: ..., description: ...)"
        )
    warnings: list[str] = []
    name = meta.get("name")
    if not isinstance(name, str) or not name.strip():
        warnings.append(f"no name: using the folder name {folder.name!r}")
        name = folder.name
    name = name.strip()
    if len(name) > MAX_NAME:
        warnings.append(f"name is {len(name)} characters; at most {MAX_NAME}")
    if not NAME_RULE.match(name):
        warnings.append(
            f"name {name!r} should be lowercase letters, digits and single hyphens, not at "
            "either end"
        )
    if name != folder.name:
        warnings.append(f"name {name!r} differs from its folder {folder.name!r}")
    description = meta.get("description")
    if not isinstance(description, str) or not description.strip():
        description = _first_line(body)
        warnings.append("no description: the index shows the first line of the instructions")
        if not description:
            raise SkillError("no description and no instructions: there is nothing to use")
    description = " ".join(description.split())
    if len(description) > MAX_DESCRIPTION:
        warnings.append(f"description is {len(description)} characters; at most {MAX_DESCRIPTION}")
    compatibility = meta.get("compatibility")
    if compatibility is not None and (
        not isinstance(compatibility, str) or len(compatibility) > MAX_COMPATIBILITY
    ):
        warnings.append(f"compatibility should be text of at most {MAX_COMPATIBILITY} characters")
    metadata = meta.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        warnings.append("metadata should be a mapping of keys to strings")
    tools = meta.get("allowed-tools")
    if isinstance(tools, list):
        warnings.append("allowed-tools should be one space-separated string, not a list")
    elif tools is not None and not isinstance(tools, str):
        warnings.append("allowed-tools should be a space-separated string")
    if meta.get("license") is not None and not isinstance(meta.get("license"), str):
        warnings.append("license should be text")
    warnings += _activation_problems(meta)
    unknown = sorted(str(key) for key in meta if key not in KNOWN_FIELDS | HERMES_FIELDS)
    if unknown:
        warnings.append(f"fields outside the specification: {', '.join(unknown)}")
    if not body:
        warnings.append("no instructions after the frontmatter")
    return Skill(
        name=name,
        description=description,
        folder=folder,
        body=body,
        frontmatter=meta,
        source=source,
        warnings=tuple(warnings),
    )


_parsed: dict[tuple[Path, str], tuple[tuple[int, int, int], Skill]] = {}
"""SKILL.md files read before, by path and source, with the stat they had: every new session
lists every skill in its prompt, and a gateway starts sessions all day."""


def load_skill(
    folder: Path, source: str = "", frontmatter: FrontmatterCache | None = None
) -> Skill:
    path = folder / "SKILL.md"
    try:
        stat = path.stat()
        version = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
        known = _parsed.get((path, source))
        if known is not None and known[0] == version:
            if frontmatter is not None:
                frontmatter.seen(path, version, known[1], new=False)
            return known[1]
        cached = frontmatter.skill(path, version, source) if frontmatter is not None else None
        if cached is not None:
            _parsed[(path, source)] = (version, cached)
            return cached
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise SkillError(f"{path} is not UTF-8 text") from None
    except OSError as exc:
        raise SkillError(f"{path} cannot be read ({exc.strerror})") from None
    skill = parse_skill_text(text, folder, source)
    _parsed[(path, source)] = (version, skill)
    if frontmatter is not None:
        frontmatter.seen(path, version, skill, new=True)
    return skill
