"""Where skills come from, and the skills found there.

Sources, first one wins when two hold a skill of the same name: ``HERMES_HOME/skills`` (the
agent's own, the only one it writes to), the project's ``.agents/skills`` (from the working
folder up to the repository root), ``~/.agents/skills``, folders that plugins contribute,
and ``skills.external_dirs``. A skill is a folder holding SKILL.md, at the top of a source or
one level down (a category folder). Folders starting with a dot are never read.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hermes_commons.skill_md import FrontmatterCache, Skill, SkillError, load_skill

__all__ = ["Library", "Source", "sources"]


@dataclass(frozen=True)
class Source:
    name: str
    root: Path
    writable: bool = False


def _project_skills(cwd: str) -> Path | None:
    if not cwd:
        return None
    start = Path(cwd)
    for folder in [start, *start.parents]:
        candidate = folder / ".agents" / "skills"
        if candidate.is_dir():
            return candidate
        if (folder / ".git").exists():
            break
    return None


def user_root(home: str) -> Path:
    return Path(home) / "skills"


def sources(
    home: str,
    cwd: str,
    config: Mapping[str, Any],
    plugin_dirs: Sequence[tuple[str, Path]] = (),
) -> list[Source]:
    """Every source, in the order of precedence; ``plugin_dirs`` are (source name, folder)
    of the folders plugins contribute."""
    found = [Source("user", user_root(home), writable=True)]
    project = _project_skills(cwd)
    if project is not None:
        found.append(Source("project", project))
    found.append(Source("personal", Path("~/.agents/skills").expanduser()))
    found += [Source(f"plugin:{name}", folder) for name, folder in plugin_dirs]
    from hermes_plugin_skills.settings import skills_settings

    for folder in skills_settings(config).external_dirs:
        found.append(Source("external", Path(os.path.expanduser(folder))))
    unique: dict[Path, Source] = {}
    for source in found:
        unique.setdefault(source.root, source)
    return list(unique.values())


def skill_folders(root: Path) -> Iterator[Path]:
    """Folders holding SKILL.md at the top of ``root`` or one level down, sorted."""
    try:
        children = sorted(entry for entry in root.iterdir() if not entry.name.startswith("."))
    except OSError:
        return
    for child in children:
        if not child.is_dir():
            continue
        if (child / "SKILL.md").is_file():
            yield child
            continue
        try:
            nested = sorted(e for e in child.iterdir() if not e.name.startswith("."))
        except OSError:
            continue
        for grandchild in nested:
            if grandchild.is_dir() and (grandchild / "SKILL.md").is_file():
                yield grandchild


@dataclass
class Library:
    skills: dict[str, Skill] = field(default_factory=dict)
    errors: list[tuple[Path, str]] = field(default_factory=list)
    """Skills left out: (folder, why)."""
    shadowed: list[tuple[Skill, Skill]] = field(default_factory=list)
    """(the one used, the one hidden by it) for names found in two sources."""
    writable_root: Path | None = None

    @classmethod
    def load(cls, found: Sequence[Source], cache_file: Path | None = None) -> Library:
        """Every skill of ``found``; ``cache_file`` keeps parsed frontmatter between
        processes (see :class:`FrontmatterCache`)."""
        library = cls()
        frontmatter = FrontmatterCache(cache_file)
        for source in found:
            if source.writable:
                library.writable_root = source.root
            for folder in skill_folders(source.root):
                try:
                    skill = load_skill(folder, source.name, frontmatter)
                except SkillError as exc:
                    library.errors.append((folder, str(exc)))
                    continue
                first = library.skills.get(skill.name)
                if first is not None:
                    library.shadowed.append((first, skill))
                    continue
                library.skills[skill.name] = skill
        frontmatter.save()
        return library

    def get(self, name: str) -> Skill:
        skill = self.skills.get(name)
        if skill is None:
            close = [known for known in self.skills if name in known or known in name][:5]
            hint = f"; did you mean {', '.join(close)}?" if close else "; skills_list shows them"
            raise KeyError(f"no skill named {name!r}{hint}")
        return skill

    def is_writable(self, skill: Skill) -> bool:
        root = self.writable_root
        return root is not None and skill.folder.resolve().is_relative_to(root.resolve())
