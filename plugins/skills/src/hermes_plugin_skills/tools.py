"""The skills tools (skills_list, skill_view, skill_manage) and /skills."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hermes_plugin_skills import proposals
from hermes_plugin_skills.index import ordered, render_index
from hermes_plugin_skills.library import Library, sources, user_root
from hermes_plugin_skills.manage import SkillRefused, apply, diff, plan, safe_relative
from hermes_plugin_skills.plugin_sources import plugin_folders
from hermes_plugin_skills.seed import seed
from hermes_plugin_skills.settings import skills_settings
from hermes_plugin_skills.skillfile import FOLDERS
from hermes_sdk import PromptContext, SlashContext
from hermes_sdk.tooling import ToolContext

__all__ = ["open_library", "skill_manage", "skill_view", "skills_list", "slash_skills"]

VIEW_LIMIT = 100_000


def open_library(
    home: str,
    cwd: str,
    config: Mapping[str, Any],
    plugin_dirs: Sequence[tuple[str, Path]] = (),
) -> Library:
    """Seed the bundled skills if need be, then read every source; ``plugin_dirs`` are
    (source name, folder) of the folders plugins contribute (see :func:`plugin_folders`)."""
    root = user_root(home)
    with contextlib.suppress(OSError):  # a read-only home still lists what it has
        seed(root)
    cache = Path(home) / "cache" / "skills-frontmatter.json"
    return Library.load(sources(home, cwd, config, plugin_dirs), cache)


def _library(context: ToolContext) -> Library:
    return open_library(context.home, context.cwd, context.config, plugin_folders(context.provided))


def index_for(context: PromptContext) -> str:
    library = open_library(
        context.home, context.cwd or "", context.config, plugin_folders(context.provided)
    )
    return render_index(library, skills_settings(context.config).index_chars)


def skills_list(context: ToolContext, query: str | None = None) -> str:
    library = _library(context)
    skills = ordered(library)
    if query:
        words = query.lower().split()
        skills = [s for s in skills if all(w in f"{s.name} {s.description}".lower() for w in words)]
    if not skills:
        return f"no skills match {query!r}" if query else "no skills are installed"
    lines = [f"{len(skills)} skills (load one with skill_view):"]
    lines += [f"- {s.name} [{s.source}]: {s.description[:300]}" for s in skills[:200]]
    if len(skills) > 200:
        lines.append(f"... and {len(skills) - 200} more: narrow the query")
    return "\n".join(lines)


def _linked_files(folder: Path) -> list[str]:
    found = []
    for sub in (*FOLDERS, "templates"):
        base = folder / sub
        if base.is_dir():
            found += sorted(
                p.relative_to(folder).as_posix() for p in base.rglob("*") if p.is_file()
            )
    return sorted(found)


def skill_view(name: str, context: ToolContext, file: str | None = None) -> str:
    library = _library(context)
    try:
        skill = library.get(name)
    except KeyError as exc:
        raise ValueError(str(exc.args[0])) from None
    if file:
        relative = safe_relative(file, allow_skill_md=True)
        target = skill.folder / relative
        if not target.resolve().is_relative_to(skill.folder.resolve()):
            raise ValueError(f"{file!r} leads outside the skill's folder; refused")
        try:
            text = target.read_text(encoding="utf-8")
        except FileNotFoundError:
            files = ", ".join(_linked_files(skill.folder)) or "none"
            raise ValueError(f"{relative} is not in skill {name!r} (its files: {files})") from None
        except UnicodeDecodeError:
            raise ValueError(f"{relative} is a binary file; it cannot be shown") from None
        return text[:VIEW_LIMIT]
    text = skill.path.read_text(encoding="utf-8")[:VIEW_LIMIT]
    linked = _linked_files(skill.folder)
    footer = f"\n\n[files of this skill, read with skill_view(name, file): {', '.join(linked)}]"
    return f"[skill {skill.name} from {skill.folder}]\n{text}" + (footer if linked else "")


def skill_manage(
    action: str,
    name: str,
    context: ToolContext,
    content: str | None = None,
    old_string: str | None = None,
    new_string: str | None = None,
    file_path: str | None = None,
    file_content: str | None = None,
    replace_all: bool = False,
) -> str:
    library = _library(context)
    root = user_root(context.home)
    change = plan(
        library,
        root,
        action,
        name,
        content=content,
        old_string=old_string,
        new_string=new_string,
        file_path=file_path,
        file_content=file_content,
        replace_all=replace_all,
    )
    if skills_settings(context.config).write_approval:
        proposal = proposals.propose(root, change, context.source)
        return (
            f"queued for the user's approval as {proposal} (skills.write_approval is on): "
            f"{change.summary()}; it takes effect when they approve it with "
            f"/skills approve {proposal}"
        )
    return apply(root, change) + " (the skills index lists it from the next session)"


def review(home: str, action: str, proposal_id: str, how: str = "/skills") -> str:
    """Skill changes waiting for approval: ``pending``, or ``diff`` / ``approve`` / ``reject``
    one. ``how`` names the command in the hints (``/skills``, ``hermes skills``). Raises
    SkillRefused (an unknown id, files edited since the change was proposed)."""
    root = user_root(home)
    if action == "pending":
        waiting = proposals.pending(root)
        if not waiting:
            return "no skill changes are waiting for approval"
        lines = [
            f"{p.id}: {p.payload.get('action')} {p.payload.get('skill')} (from {p.source})"
            for p in waiting
        ]
        lines.append(f"{how} diff ID shows one; {how} approve ID or {how} reject ID")
        return "\n".join(lines)
    if action == "diff":
        return diff(root, proposals.load(root, proposal_id))
    if action == "approve":
        done = apply(root, proposals.load(root, proposal_id))
        proposals.drop(root, proposal_id)
        return f"approved {proposal_id}: {done}"
    proposals.load(root, proposal_id)
    proposals.drop(root, proposal_id)
    return f"rejected {proposal_id}; nothing was changed"


def slash_skills(args: str, context: SlashContext) -> str:
    command, _, rest = args.strip().partition(" ")
    proposal_id = rest.strip()
    try:
        if command in ("", "list"):
            library = open_library(
                context.home, context.cwd, context.config, plugin_folders(context.provided)
            )
            return (
                "\n".join(f"{s.name} [{s.source}]: {s.description[:100]}" for s in ordered(library))
                or "no skills"
            )
        if command == "pending" or (command in ("diff", "approve", "reject") and proposal_id):
            return review(context.home, command, proposal_id)
    except SkillRefused as exc:
        return f"/skills {command}: {exc}"
    return "usage: /skills [list] | pending | diff ID | approve ID | reject ID"
