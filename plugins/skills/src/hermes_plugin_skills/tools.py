"""The skills tools (skills_list, skill_view, skill_manage) and /skills."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from hermes_commons.skill_md import FOLDERS
from hermes_plugin_skills import proposals
from hermes_plugin_skills.activation import applies
from hermes_plugin_skills.curator import Curator
from hermes_plugin_skills.index import ordered, render_index
from hermes_plugin_skills.library import Library, sources, user_root
from hermes_plugin_skills.manage import Change, SkillRefused, apply, diff, plan, safe_relative
from hermes_plugin_skills.plugin_sources import plugin_folders
from hermes_plugin_skills.seed import seed
from hermes_plugin_skills.settings import SkillsSettings, skills_settings
from hermes_plugin_skills.usage import Usage, remember_view
from hermes_sdk import PromptContext, SlashContext
from hermes_sdk.tooling import ToolContext

__all__ = ["open_library", "skill_manage", "skill_view", "skills_list", "slash_skills"]

VIEW_LIMIT = 100_000
log = logging.getLogger("hermes.skills")


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
    return open_library(
        context.home, context.cwd, context.config, plugin_folders(context.provided, context.home)
    )


def prompt_sections(context: PromptContext) -> list[tuple[str, str]]:
    """(title, text) of the prompt's skills blocks: the index of the skills that apply to
    this session, then the skills the front-end preloaded (``--skills``), whole."""
    library = open_library(
        context.home,
        context.cwd or "",
        context.config,
        plugin_folders(context.provided, context.home),
    )
    settings = skills_settings(context.config)
    for archived in _curate_if_due(context.home, library, settings):
        library.skills.pop(archived, None)
    shown = {
        name: skill
        for name, skill in library.skills.items()
        if applies(skill, context.source, context.toolsets, context.tools)
    }
    index = render_index(Library(skills=shown), settings.index_chars)
    sections = [("Skills", index)]
    wanted = context.preload.get("skills", ())
    if wanted:
        sections.append(("Preloaded skills", _preloaded(library, wanted, context)))
    return sections


def _preloaded(library: Library, wanted: Sequence[str], context: PromptContext) -> str:
    blocks = []
    missing = [name for name in wanted if name not in library.skills]
    for name in wanted:
        skill = library.skills.get(name)
        if skill is None:
            continue
        body = skill.path.read_text(encoding="utf-8")[:VIEW_LIMIT]
        blocks.append(
            f'[The user started this session with the skill "{name}" loaded: follow '
            f"it where it applies.]\n{body}"
        )
        if library.is_writable(skill):
            remember_view(user_root(context.home), name, context.session_id)
    if missing:
        blocks.append(f"[Skills asked for but not installed: {', '.join(missing)}]")
    return "\n\n".join(blocks)


def _curate_if_due(home: str, library: Library, settings: SkillsSettings) -> list[str]:
    """The automatic curator run, at most every ``interval_hours`` (one stat when not due);
    the skills it archived."""
    curator = Curator(user_root(home), settings.curator)
    if curator.due():
        try:
            return curator.run(library).archived
        except Exception as exc:  # noqa: BLE001 - the session starts with its index anyway
            log.warning("the skills curator's run failed: %s", exc)
    return []


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
    if library.is_writable(skill) and context.source != "review":  # a review's look is no use
        remember_view(user_root(context.home), skill.name, context.session_id)
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
    if action == "create" and name in Curator(root, skills_settings({}).curator).archived():
        raise SkillRefused(
            f"a skill {name!r} is archived: restore it (hermes skills curator restore {name}) "
            "and patch it, or pick another name"
        )
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
    return (
        _applied(root, change, context.source)
        + " (the skills index lists it from the next session)"
    )


def _applied(root: Path, change: Change, via: str) -> str:
    """Make ``change`` and keep the curator's record of it: every skill created through
    skill_manage is the agent's (``via`` the session's source, or "approval")."""
    library = Library.load(sources(str(root.parent), "", {}))
    partner = library.skills.get(change.archive_after or "")
    if change.archive_after and (partner is None or not library.is_writable(partner)):
        raise SkillRefused(
            f"{change.archive_after}, which this merge would archive, is no longer in {root}: "
            "reject the merge"
        )
    kept_before = (root / change.where / "SKILL.md").read_bytes() if change.archive_after else b""
    done = apply(root, change)
    usage = Usage(root)
    if change.action == "create":
        usage.created(change.skill, via)
    elif change.delete_skill:
        usage.forget(change.skill)
    else:
        usage.patched(change.skill)
    if change.archive_after:
        curator = Curator(root, skills_settings({}).curator)
        done += "; " + curator.archive(library, change.archive_after)
        curator.merged(change.archive_after, change.skill, change.where, kept_before)
    return done


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
        done = _applied(root, proposals.load(root, proposal_id), "approval")
        proposals.drop(root, proposal_id)
        return f"approved {proposal_id}: {done}"
    rejected = proposals.load(root, proposal_id)
    proposals.drop(root, proposal_id)
    if rejected.archive_after:  # a merge the curator proposed: not again
        Curator(root, skills_settings({}).curator).keep_apart(
            rejected.archive_after, rejected.skill
        )
    return f"rejected {proposal_id}; nothing was changed"


def slash_skills(args: str, context: SlashContext) -> str:
    command, _, rest = args.strip().partition(" ")
    proposal_id = rest.strip()
    try:
        if command in ("", "list"):
            library = open_library(
                context.home,
                context.cwd,
                context.config,
                plugin_folders(context.provided, context.home),
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


def slash_bundles(args: str, context: SlashContext) -> str:
    """``/bundles``: the bundles; ``/bundles NAME [instruction]`` loads one into the next
    message of this chat."""
    from hermes_plugin_skills import bundles
    from hermes_plugin_skills.bundle_queue import queue_for_turn

    name, _, instruction = args.strip().partition(" ")
    if not name or name == "list":
        found, problems = bundles.load_bundles(context.home)
        lines = [
            f"{b.name}: {', '.join(b.skills)}" + (f" - {b.description}" if b.description else "")
            for b in found.values()
        ]
        lines += [f"left out: {problem}" for problem in problems]
        if not found:
            lines.append("no bundles yet: hermes skills bundle create NAME -s SKILL -s SKILL")
        else:
            lines.append("/bundles NAME [instruction] loads one with your next message")
        return "\n".join(lines)
    try:
        bundle = bundles.get(context.home, name)
    except bundles.BundleError as exc:
        return f"/bundles: {exc}"
    library = open_library(
        context.home, context.cwd, context.config, plugin_folders(context.provided, context.home)
    )
    text, loaded, missing = bundles.invocation(bundle, library, instruction.strip())
    if not loaded:
        return f"/bundles: none of {bundle.name}'s skills is installed ({', '.join(missing)})"
    key = context.session_id or f"new:{context.user_scope or ''}"
    queue_for_turn(key, text)
    root = user_root(context.home)
    for skill_name in loaded:
        if context.session_id and library.is_writable(library.skills[skill_name]):
            remember_view(root, skill_name, context.session_id)
    note = f"; not installed: {', '.join(missing)}" if missing else ""
    return f"bundle {bundle.name} ({', '.join(loaded)}) goes with your next message{note}"
