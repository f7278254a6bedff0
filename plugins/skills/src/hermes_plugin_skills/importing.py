"""``hermes import``: the skills of a hermes-agent home (its skills/ folder) are copied, with
every file they hold, into this home's skills/ at the same place (a skill nested deeper than
one category keeps its first one). A place this home already has a skill in keeps it. Its
bundles come as they are, and its curator's records of who wrote each skill and which are
pinned. The skills its hub installed are the skills hub plugin's to bring over."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from hermes_commons.skill_md import SkillError, parse_skill_text
from hermes_plugin_skills.bundles import FOLDER
from hermes_plugin_skills.library import user_root
from hermes_plugin_skills.usage import Usage
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


def _hub_installed(root: Path) -> set[Path]:
    """Folders hermes-agent's hub installed (its skills/.hub/lock.json): the skills hub
    plugin brings those over with their provenance."""
    try:
        installed = json.loads((root / ".hub" / "lock.json").read_text(encoding="utf-8"))[
            "installed"
        ]
        return {root / str(e.get("install_path") or name) for name, e in installed.items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return set()


def _all_skill_folders(root: Path) -> list[Path]:
    """Every top-most folder holding SKILL.md, however deep (hermes-agent nests categories:
    mlops/training/trl-fine-tuning), dot folders left out."""
    found: list[Path] = []
    for skill_md in sorted(root.rglob("SKILL.md")):
        relative = skill_md.parent.relative_to(root)
        if not relative.parts or any(part.startswith(".") for part in relative.parts):
            continue
        if not any(skill_md.parent.is_relative_to(known) for known in found):
            found.append(skill_md.parent)
    return found


def _place(relative: Path) -> Path:
    """Where a skill goes here: this home reads skills at the top or one category down, so
    a deeper one keeps its first category (mlops/training/trl -> mlops/trl)."""
    return relative if len(relative.parts) <= 2 else Path(relative.parts[0], relative.name)


def import_skills(request: HomeImport) -> ImportSection:
    section = ImportSection(kind=KIND, reads=["skills", "skills/.usage.json", "skill-bundles"])
    root = Path(request.source) / "skills"
    if not root.is_dir():
        return section
    mine = user_root(request.target)
    bundled = _bundled(root)
    from_hub = _hub_installed(root)
    copied: set[str] = set()
    for folder in _all_skill_folders(root):
        relative = _place(folder.relative_to(root))
        label = str(folder.relative_to(root))
        if folder in from_hub:
            section.skip(label, "installed from hermes-agent's hub: the skills hub imports it")
            continue
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
        copied.add(folder.name)
        if not request.dry_run:
            shutil.copytree(folder, mine / relative, symlinks=True)
    _import_usage(request, root, mine, section, copied)
    _import_bundles(request, section)
    return section


def _import_usage(
    request: HomeImport, root: Path, mine: Path, section: ImportSection, copied: set[str]
) -> None:
    """Which of the skills this import copied the agent wrote, and which are pinned
    (hermes-agent's .usage.json), so the curator treats them as it did; the counters start
    over. A skill this home kept as its own stays its own."""
    try:
        records = json.loads((root / ".usage.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return
    if not isinstance(records, dict):
        return
    marked = []
    usage = Usage(mine)
    for name, record in sorted(records.items()):
        if not isinstance(record, dict) or name not in copied:
            continue
        agent = record.get("created_by") == "agent"
        pinned = bool(record.get("pinned"))
        if not agent and not pinned:
            continue
        marked.append(name)
        if request.dry_run:
            continue

        def mark(
            mine_record: dict[str, object], agent: bool = agent, pinned: bool = pinned
        ) -> None:
            if agent:
                mine_record.update(created_by="agent", created_via="hermes-agent")
            if pinned:
                mine_record["pinned"] = True

        usage.update(name, mark)
    if marked:
        section.add(f"curator records of {len(marked)} skills (who wrote them, pins)")
    if (root / ".archive").is_dir():
        section.note(
            "skills/.archive (skills hermes-agent's curator archived) is left behind; copy a "
            "folder into skills/ to have it back"
        )


def _import_bundles(request: HomeImport, section: ImportSection) -> None:
    """hermes-agent's skill bundles: the same files, the same format."""
    source = Path(request.source) / FOLDER
    if not source.is_dir():
        return
    target = Path(request.target) / FOLDER
    for path in sorted([*source.glob("*.yaml"), *source.glob("*.yml")]):
        label = f"bundle {path.stem}"
        if (target / path.name).exists():
            section.skip(label, "this home has a bundle of that name (kept as it is)")
            continue
        section.add(label)
        if not request.dry_run:
            target.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, target / path.name)
