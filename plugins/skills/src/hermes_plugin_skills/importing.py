"""``hermes import``: the skills of a hermes-agent home (its skills/ folder: SKILL.md
folders at the top or one category down) are copied, with every file they hold, into this
home's skills/ at the same place. A place this home already has a skill in keeps it."""

from __future__ import annotations

import shutil
from pathlib import Path

from hermes_plugin_skills.library import skill_folders, user_root
from hermes_plugin_skills.skillfile import SkillError, parse_skill_text
from hermes_sdk.importing import HomeImport, ImportSection

SOURCE_KINDS = frozenset({"hermes-agent"})
"""Homes whose skills/ holds SKILL.md folders laid out as this plugin reads them."""
KIND = "skills"


def _bundled(root: Path) -> set[str]:
    """hermes-agent's own bundled skills, as its .bundled_manifest lists them."""
    try:
        text = (root / ".bundled_manifest").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return set()
    return {line.split(":", 1)[0].strip() for line in text.splitlines() if line.strip()}


def _declared_name(path: Path) -> str | None:
    """The name its frontmatter gives (the folder's when it gives none); None when the
    SKILL.md cannot be read as one (the skill still comes over: it is the user's file)."""
    try:
        return parse_skill_text(path.read_text(encoding="utf-8"), path.parent).name
    except (OSError, UnicodeDecodeError, SkillError):
        return None


def import_skills(request: HomeImport) -> ImportSection:
    section = ImportSection(kind=KIND, reads=["skills"])
    root = Path(request.source) / "skills"
    if not root.is_dir():
        return section
    mine = user_root(request.target)
    bundled = _bundled(root)
    for folder in skill_folders(root):
        relative = folder.relative_to(root)
        label = str(relative)
        if (mine / relative).exists():
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
        if not request.dry_run:
            shutil.copytree(folder, mine / relative, symlinks=True)
    return section
