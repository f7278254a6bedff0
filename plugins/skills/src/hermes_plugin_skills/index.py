"""The skills index in the system prompt: only names and short descriptions (progressive
disclosure: bodies are loaded with skill_view when needed).

The index is bounded by ``skills.index_chars`` however many skills are installed: skills are
listed with a description cut to one short line while that fits, then by name only, then
counted ("... and 812 more"); skills_list searches all of them. The agent's own skills come
first, so the ones it wrote and uses stay visible.
"""

from __future__ import annotations

from hermes_commons.skill_md import Skill
from hermes_plugin_skills.library import Library

__all__ = ["DEFAULT_INDEX_CHARS", "render_index"]

DEFAULT_INDEX_CHARS = 6000
DESCRIPTION_CHARS = 100
GUIDE = (
    "Skills are saved methods for recurring tasks. When a task matches one, load it with "
    "skill_view(name) before you start, and follow it. After finishing something hard in a "
    "way worth repeating, save or improve a skill with skill_manage."
)


def _short(text: str) -> str:
    if len(text) <= DESCRIPTION_CHARS:
        return text
    return text[: DESCRIPTION_CHARS - 1].rsplit(" ", 1)[0] + "…"


def ordered(library: Library) -> list[Skill]:
    own = [skill for skill in library.skills.values() if skill.source == "user"]
    rest = [skill for skill in library.skills.values() if skill.source != "user"]
    return sorted(own, key=lambda s: s.name) + sorted(rest, key=lambda s: s.name)


def render_index(library: Library, budget: int = DEFAULT_INDEX_CHARS) -> str:
    skills = ordered(library)
    if not skills:
        return GUIDE + "\nNo skills are installed yet."
    lines = [GUIDE]
    used = len(GUIDE)
    reserve = 80  # room for the closing "... and N more" line
    shown = 0
    for skill in skills:
        line = f"- {skill.name}: {_short(skill.description)}"
        if used + len(line) + 1 > budget - reserve:
            break
        lines.append(line)
        used += len(line) + 1
        shown += 1
    names: list[str] = []
    for skill in skills[shown:]:
        cost = len(skill.name) + 2
        if used + cost > budget - reserve:
            break
        names.append(skill.name)
        used += cost
    if names:
        lines.append("Also: " + ", ".join(names))
    hidden = len(skills) - shown - len(names)
    if hidden:
        lines.append(f"... and {hidden} more: skills_list(query=...) finds them.")
    return "\n".join(lines)
